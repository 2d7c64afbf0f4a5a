package runview

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/assay-eval/assay/internal/spec"
)

// A view carries the gate: section of its run's spec (RunInfo.Gate), so
// that a baseline carries the rules a later run is gated by. This file
// reads that section from a stored run, hashes it, and checks the copy a
// baseline file holds; what the rules mean is the gate package's.

// GateOfConfig reads the gate: section of a run's stored resolved spec
// (record.Run.Config): an empty Gate when the spec had none (the default
// rules apply), nil when the run recorded no spec.
func GateOfConfig(config []byte) (*spec.Gate, error) {
	if len(config) == 0 {
		return nil, nil
	}
	var sp struct {
		Gate *spec.Gate `json:"gate"`
	}
	if err := json.Unmarshal(config, &sp); err != nil {
		return nil, fmt.Errorf("reading the gate rules of the run's spec: %w", err)
	}
	if sp.Gate == nil {
		return &spec.Gate{}, nil
	}
	return sp.Gate, nil
}

// GateHash is a short hash of a gate section (its alpha and rules as
// written, in a canonical JSON encoding): 16 hex digits.
func GateHash(g *spec.Gate) string {
	if g == nil {
		return ""
	}
	b, _ := json.Marshal(g)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// checkBaselineGate checks a baseline file's run.gate and run.gate_hash:
// the rules must read, and the hash must be theirs (a file whose rules
// were edited after export no longer matches it).
func checkBaselineGate(run *RunInfo, scorers []string, fail func(path, format string, args ...any)) {
	g := run.Gate
	switch {
	case g == nil && run.GateHash != "":
		fail("run.gate_hash", "is set but run.gate is missing: export the baseline again")
		return
	case g == nil:
		return
	}
	if g.Alpha != 0 && !(g.Alpha > 0 && g.Alpha <= 0.5) {
		fail("run.gate.alpha", "must be above 0 and at most 0.5, got %s", strconv.FormatFloat(g.Alpha, 'g', -1, 64))
	}
	for i, w := range g.Rules {
		if _, probs := w.Parse(scorers, nil); len(probs) > 0 {
			fail(fmt.Sprintf("run.gate.rules[%d]", i), "%s: %s", clip(w.String()), probs[0].Msg)
		}
	}
	if want := GateHash(g); run.GateHash != want {
		fail("run.gate_hash", "is %s but the rules in run.gate hash to %s: the rules were changed after the baseline was exported; export it again from the run (assay baseline export RUN)", clip(run.GateHash), want)
	}
}
