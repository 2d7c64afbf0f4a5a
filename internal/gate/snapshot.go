// Package gate owns the regression gate: a portable snapshot of a run
// (built from the store or read from a baseline file), the baseline file
// format, the gate's rules (from the spec's gate: section or --rule flags;
// a baseline carries the rules of its spec, and CompareGates lists what a
// candidate's spec changed in them and which changes relax the gate:
// basegate.go), and their evaluation into a Result whose checks carry their numbers and
// a one-line reason (with the unit formatters the reasons are written
// with). A check is decided by one-sided paired tests at the limit its rule
// sets (limit.go): fail when the data show the limit crossed, with the fail
// decisions Holm-adjusted over every check of the run; pass when they show
// it is within; else inconclusive. It also measures what `assay plan
// --gate` needs of a run (plan.go). Rendering a Result as text, Markdown, JSON or
// JUnit is the report package's (report.Gate). It reads stored runs and
// never calls a model. It must not import the runner, providers, cli,
// analysis or report.
package gate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// Failure shapes of the primary scorer, one byte per result.
const (
	ShapePass   byte = 'p'
	ShapeLoud   byte = 'l'
	ShapeSilent byte = 's'
	// ShapeNone marks a result that does not exist or has no primary score.
	ShapeNone byte = '-'
)

// Snapshot is what the gate and drift need of a run, from the store or
// from a baseline file: the run's identity and hashes, its cases and their
// tags, and for each target its temperature and the per-result verdicts,
// failure shapes, cost, latency, a hash of the raw output and whether the
// call failed. Per-result columns are indexed case × epoch: result (case i,
// epoch e) is at i*Epochs + e − 1.
type Snapshot struct {
	Run RunInfo
	// Source says where the snapshot came from: "run ID" or the baseline
	// file's path. It is not part of the file.
	Source string
	// Scorers are the scores' names, in the order first seen; Primary is
	// the one flagged primary (the headline).
	Scorers []string
	Primary string
	Epochs  int
	Cases   []Case
	Targets []*Target
	// tags holds the cases' tags by key, columnar: see Tag and SetTag.
	tags map[string]*tagColumn
}

// tagColumn is one tag key's values, interned: idx[i] is 0 when case i
// has no value for the key, else 1 + the index of its value in values.
// Cases past the end of idx have no value.
type tagColumn struct {
	values []string
	lookup map[string]int32
	idx    []int32
}

// RunInfo identifies the run a snapshot was taken of.
type RunInfo struct {
	ID       string `json:"id"`
	Spec     string `json:"spec,omitempty"`
	SpecHash string `json:"spec_hash,omitempty"`
	// DatasetHash is the dataset's content hash and FileHash its file's
	// byte hash; a run or baseline file recorded before content hashes
	// has no FileHash, and its DatasetHash is the byte hash (Dataset
	// reads both).
	DatasetHash  string    `json:"dataset_hash,omitempty"`
	FileHash     string    `json:"file_hash,omitempty"`
	PromptHash   string    `json:"prompt_hash,omitempty"`
	ScorersHash  string    `json:"scorers_hash,omitempty"`
	AssayVersion string    `json:"assay_version,omitempty"`
	GitCommit    string    `json:"git_commit,omitempty"`
	Epochs       int       `json:"epochs"`
	Scoring      int       `json:"scoring"`
	Created      time.Time `json:"created"`
	// Gate is the gate: section of the run's spec (empty when the spec had
	// none: the default rules), and GateHash its GateHash: the rules a
	// later run is gated by when this run is its baseline. Nil and "" in a
	// baseline file written before they were recorded.
	Gate     *spec.Gate `json:"gate,omitempty"`
	GateHash string     `json:"gate_hash,omitempty"`
}

// Dataset is the dataset version the run recorded.
func (r RunInfo) Dataset() dataset.Version {
	return dataset.Version{Hash: r.DatasetHash, File: r.FileHash}
}

// Case is a case's ID; from the store also its expected value and
// weight, which a baseline file does not hold (nil from one). Its tags
// are the snapshot's: Snapshot.Tag, Snapshot.CaseTags.
type Case struct {
	ID       string
	Expected []byte
	Weight   *float64
}

// AddCase appends a case with the tags given (nil for none) and returns
// its index.
func (s *Snapshot) AddCase(id string, tags map[string]string) int {
	i := len(s.Cases)
	s.Cases = append(s.Cases, Case{ID: id})
	for k, v := range tags {
		s.SetTag(i, k, v)
	}
	return i
}

// SetTag sets case i's value of tag key.
func (s *Snapshot) SetTag(i int, key, value string) {
	if s.tags == nil {
		s.tags = map[string]*tagColumn{}
	}
	c := s.tags[key]
	if c == nil {
		c = &tagColumn{lookup: map[string]int32{}}
		s.tags[key] = c
	}
	v, ok := c.lookup[value]
	if !ok {
		c.values = append(c.values, value)
		v = int32(len(c.values))
		c.lookup[value] = v
	}
	if i >= len(c.idx) {
		c.idx = slices.Grow(c.idx, i+1-len(c.idx))[:i+1]
	}
	c.idx[i] = v
}

// Tag returns case i's value of tag key, and whether it has one.
func (s *Snapshot) Tag(i int, key string) (string, bool) {
	c := s.tags[key]
	if c == nil || i >= len(c.idx) || c.idx[i] == 0 {
		return "", false
	}
	return c.values[c.idx[i]-1], true
}

// CaseTags returns case i's tags as a new map (nil when it has none).
func (s *Snapshot) CaseTags(i int) map[string]string {
	var out map[string]string
	for k := range s.tags {
		if v, ok := s.Tag(i, k); ok {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// Fingerprint is one model name and system fingerprint a provider
// reported, and how many results reported it.
type Fingerprint struct {
	Model  string `json:"model,omitempty"`
	System string `json:"system_fingerprint,omitempty"`
	Count  int    `json:"count"`
}

// Target holds one target's results, per case × epoch.
type Target struct {
	Name         string
	Fingerprints []Fingerprint
	// Pass holds, per scorer, -1 (not scored), 0 (failed) or 1 (passed).
	Pass map[string][]int8
	// Shape is the primary scorer's failure shape (ShapePass, ShapeLoud,
	// ShapeSilent, or ShapeNone); Kind its failure kind, interned: 0 for
	// none (passed), else 1 + an index into Kinds (see KindAt, SetKind).
	Shape []byte
	Kind  []int32
	Kinds []string
	// CostUSD and LatencyMS are NaN where there is no result. CostUSD is
	// the reply's price, paid in the run or served from the cache alike
	// (record.Result.Price): a cost gate compares models, not caches.
	CostUSD   []float64
	LatencyMS []float64
	// FirstTokenMS is the time to the first token of a call that streamed,
	// NaN where the call did not stream, failed or is missing. It is nil
	// when not known: a baseline file written before assay recorded it.
	FirstTokenMS []float64
	// OutputHash is a short hash of the raw output (OutputSum; 0 where
	// there is no result): two equal hashes mean identical outputs.
	OutputHash []uint64
	// Errored marks the results whose call failed (they have no output).
	// It is nil when not known: a baseline file written before assay
	// recorded failed calls.
	Errored []bool
	// Cached marks the results the response cache served. Only the store
	// knows it: a baseline file does not hold it, and a snapshot read from
	// one has nil.
	Cached []bool
	// Temperature is the sampling temperature the run's resolved spec set
	// for the target (params.temperature), nil when the spec left it unset
	// (the provider's default applied). TemperatureKnown is false when that
	// is not known: the run carries no resolved spec, or the baseline file
	// was written before assay recorded temperatures.
	Temperature      *float64
	TemperatureKnown bool
	// ConfigHash is ConfigHash of the target's entry in the run's resolved
	// spec (provider, model, base URL, parameters …): two equal hashes
	// mean the target was configured the same. "" when not known.
	ConfigHash string
}

// KindAt returns result j's failure kind ("" for none).
func (t *Target) KindAt(j int) string {
	if t.Kind[j] == 0 {
		return ""
	}
	return t.Kinds[t.Kind[j]-1]
}

// SetKind sets result j's failure kind ("" for none).
func (t *Target) SetKind(j int, kind string) {
	if kind == "" {
		t.Kind[j] = 0
		return
	}
	at := slices.Index(t.Kinds, kind)
	if at < 0 {
		at = len(t.Kinds)
		t.Kinds = append(t.Kinds, kind)
	}
	t.Kind[j] = int32(at + 1)
}

// Has reports whether result j exists.
func (t *Target) Has(j int) bool { return !math.IsNaN(t.LatencyMS[j]) }

// failed reports whether result j's call failed (false when the snapshot
// does not say: a baseline file from before failures were recorded).
func (t *Target) failed(j int) bool { return j < len(t.Errored) && t.Errored[j] }

// behaved reports whether result j exists and its call did not fail: an
// output whose behaviour can be judged.
func (t *Target) behaved(j int) bool { return t.Has(j) && !t.failed(j) }

// Target returns the named target, or nil.
func (s *Snapshot) Target(name string) *Target {
	for _, t := range s.Targets {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// TagKeys returns every tag key of the cases, sorted.
func (s *Snapshot) TagKeys() []string {
	keys := make([]string, 0, len(s.tags))
	for k, c := range s.tags {
		if slices.ContainsFunc(c.idx, func(v int32) bool { return v != 0 }) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// OutputHash is the short hash of a raw output kept in snapshots: the first
// 8 bytes of its SHA-256, in hex.
func OutputHash(raw string) string {
	h := sha256.Sum256([]byte(raw))
	return hex.EncodeToString(h[:8])
}

// OutputSum is OutputHash as a number, the form a snapshot holds: the
// first 8 bytes of the SHA-256, big-endian (so its 16 hex digits are
// OutputHash).
func OutputSum(raw string) uint64 {
	h := sha256.Sum256([]byte(raw))
	return binary.BigEndian.Uint64(h[:8])
}

// newTarget allocates a target's columns for n results.
func newTarget(name string, scorers []string, n int) *Target {
	t := &Target{Name: name, Pass: map[string][]int8{}, Shape: make([]byte, n), Kind: make([]int32, n),
		CostUSD: make([]float64, n), LatencyMS: make([]float64, n), FirstTokenMS: make([]float64, n), OutputHash: make([]uint64, n),
		Errored: make([]bool, n), Cached: make([]bool, n)}
	for _, sc := range scorers {
		t.Pass[sc] = newPass(n)
	}
	for j := range n {
		t.Shape[j] = ShapeNone
		t.CostUSD[j], t.LatencyMS[j], t.FirstTokenMS[j] = math.NaN(), math.NaN(), math.NaN()
	}
	return t
}

func newPass(n int) []int8 {
	p := make([]int8, n)
	for j := range p {
		p[j] = -1
	}
	return p
}

// FromStore takes a snapshot of a stored run, under its latest scoring.
// Its memory is a few dozen bytes per result. A run with no scores is an
// error: there is nothing to gate.
func FromStore(ctx context.Context, st record.Reader, run *record.Run) (*Snapshot, error) {
	return fromStore(ctx, st, run, true)
}

// FromStoreUnscored is FromStore that also takes a run with no scores (its
// verdicts all "not scored"), for a caller that compares outputs as well
// as verdicts (drift).
func FromStoreUnscored(ctx context.Context, st record.Reader, run *record.Run) (*Snapshot, error) {
	return fromStore(ctx, st, run, false)
}

func fromStore(ctx context.Context, st record.Reader, run *record.Run, needScores bool) (*Snapshot, error) {
	scoring, err := st.LatestScoring(ctx, run.ID)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", run.ID, err)
	}
	if scoring == 0 && needScores {
		return nil, fmt.Errorf("run %s has no scores: nothing to gate (run it to completion, or rescore it)", run.ID)
	}
	s := &Snapshot{
		Run: RunInfo{ID: run.ID, Spec: run.Spec, SpecHash: run.SpecHash, DatasetHash: run.DatasetHash, FileHash: run.FileHash,
			PromptHash: run.PromptHash, ScorersHash: run.ScorersHash, AssayVersion: run.AssayVersion,
			GitCommit: run.GitCommit, Epochs: run.Epochs, Scoring: scoring, Created: run.Started.UTC()},
		Source: "run " + run.ID,
		Epochs: max(run.Epochs, 1),
	}
	// A spec whose gate section does not read leaves the rules unknown:
	// the gate then says so rather than guessing.
	if g, err := GateOfConfig(run.Config); err == nil && g != nil {
		s.Run.Gate, s.Run.GateHash = g, GateHash(g)
	}
	b := &builder{s: s, caseIdx: map[string]int{}, fps: map[string]map[[2]string]int{}}
	if err := st.Cases(ctx, run.ID, func(c record.Case) error {
		if _, seen := b.caseIdx[c.ID]; !seen {
			i := b.caseOf(c.ID)
			for k, v := range c.Tags {
				s.SetTag(i, k, v)
			}
			s.Cases[i].Expected, s.Cases[i].Weight = c.Expected, c.Weight
		}
		return nil
	}); err != nil {
		return nil, err
	}
	for _, name := range run.Targets {
		b.target(name)
	}
	err = st.Results(ctx, run.ID, func(r record.Result) error {
		t, j := b.slot(r.Target, r.CaseID, r.Epoch)
		t.CostUSD[j], t.LatencyMS[j], t.OutputHash[j] = quantize(clean(r.Price()), costDigits), quantize(clean(r.LatencyMS), latencyDigits), OutputSum(r.Raw)
		t.Errored[j], t.Cached[j] = r.ErrorKind != "", r.FromCache
		if r.ErrorKind == "" && r.FirstTokenMS > 0 {
			t.FirstTokenMS[j] = quantize(clean(r.FirstTokenMS), latencyDigits)
		}
		// A failed call reports no model: it says nothing of which model
		// answered, so it is not counted as one.
		if r.ErrorKind == "" {
			b.fps[r.Target][[2]string{r.Model, r.Fingerprint}]++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if scoring == 0 {
		b.finish(run)
		return s, nil
	}
	err = st.Scores(ctx, run.ID, scoring, func(sc record.Score) error {
		t, j := b.slot(sc.Target, sc.CaseID, sc.Epoch)
		if !t.Has(j) {
			return nil // a score without a result: nothing was measured
		}
		p, ok := t.Pass[sc.Scorer]
		if !ok {
			s.Scorers = append(s.Scorers, sc.Scorer)
			for _, tt := range s.Targets {
				tt.Pass[sc.Scorer] = newPass(len(tt.Shape))
			}
			p = t.Pass[sc.Scorer]
		}
		p[j] = int8(b2i(sc.Pass))
		if sc.Primary {
			s.Primary = sc.Scorer
			t.Shape[j] = shapeByte(sc.Shape, sc.Pass)
			t.Kind[j] = 0
			if !sc.Pass {
				t.SetKind(j, sc.Kind)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if s.Primary == "" && len(s.Scorers) > 0 {
		s.Primary = s.Scorers[0]
	}
	b.finish(run)
	return s, nil
}

// finish sizes every column to cases × epochs and sets each target's
// fingerprints, temperature and configuration hash.
func (b *builder) finish(run *record.Run) {
	s := b.s
	s.Run.Epochs = s.Epochs
	n := len(s.Cases) * s.Epochs
	settings, known := targetSettings(run.Config)
	for _, t := range s.Targets {
		t.grow(n)
		for fp, count := range b.fps[t.Name] {
			t.Fingerprints = append(t.Fingerprints, Fingerprint{Model: fp[0], System: fp[1], Count: count})
		}
		sortFingerprints(t.Fingerprints)
		set := settings[t.Name]
		t.Temperature, t.TemperatureKnown, t.ConfigHash = set.temperature, known, set.configHash
	}
}

// targetSetting is what a snapshot keeps of a target's entry in the run's
// resolved spec.
type targetSetting struct {
	temperature *float64
	configHash  string
}

// targetSettings reads each target's params.temperature (nil where the
// spec left it unset) and configuration hash from a run's resolved spec
// (record.Run.Config, a spec.Spec as JSON). known is false when there is no
// resolved spec to read.
func targetSettings(config []byte) (map[string]targetSetting, bool) {
	out := map[string]targetSetting{}
	var sp struct {
		Targets []json.RawMessage `json:"targets"`
	}
	if len(config) == 0 || json.Unmarshal(config, &sp) != nil {
		return out, false
	}
	for _, raw := range sp.Targets {
		var t struct {
			Name   string      `json:"name"`
			Params spec.Params `json:"params"`
		}
		if json.Unmarshal(raw, &t) != nil {
			return map[string]targetSetting{}, false
		}
		out[t.Name] = targetSetting{temperature: t.Params.Temperature, configHash: ConfigHash(raw)}
	}
	return out, true
}

// ConfigHash is the short hash of a target's entry in a resolved spec
// (JSON) kept in snapshots: the first 8 bytes of the SHA-256 of its
// canonical JSON (keys sorted, no spaces), in hex; "" when it is not JSON.
func ConfigHash(target json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(target))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return ""
	}
	canon, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return OutputHash(string(canon))
}

// builder places a run's streamed results and scores into a snapshot's
// columns, growing them as cases (or, rarely, epochs) appear.
type builder struct {
	s       *Snapshot
	caseIdx map[string]int
	fps     map[string]map[[2]string]int
}

func (b *builder) caseOf(id string) int {
	if i, ok := b.caseIdx[id]; ok {
		return i
	}
	b.caseIdx[id] = len(b.s.Cases)
	b.s.Cases = append(b.s.Cases, Case{ID: id})
	return len(b.s.Cases) - 1
}

func (b *builder) target(name string) *Target {
	if t := b.s.Target(name); t != nil {
		return t
	}
	t := newTarget(name, b.s.Scorers, len(b.s.Cases)*b.s.Epochs)
	b.s.Targets = append(b.s.Targets, t)
	b.fps[name] = map[[2]string]int{}
	return t
}

// slot returns the target and the column index of a result.
func (b *builder) slot(target, caseID string, epoch int) (*Target, int) {
	epoch = max(epoch, 1)
	if epoch > b.s.Epochs {
		b.relayout(epoch)
	}
	i := b.caseOf(caseID)
	t := b.target(target)
	j := i*b.s.Epochs + epoch - 1
	t.grow(j + 1)
	return t, j
}

// relayout re-lays every column for more epochs per case.
func (b *builder) relayout(epochs int) {
	old := b.s.Epochs
	for _, t := range b.s.Targets {
		cases := (len(t.Shape) + old - 1) / old
		nt := newTarget(t.Name, nil, cases*epochs)
		nt.Kinds = t.Kinds
		for sc := range t.Pass {
			nt.Pass[sc] = newPass(cases * epochs)
		}
		for j := range t.Shape {
			k := (j/old)*epochs + j%old
			nt.Shape[k], nt.Kind[k], nt.CostUSD[k], nt.LatencyMS[k], nt.OutputHash[k] = t.Shape[j], t.Kind[j], t.CostUSD[j], t.LatencyMS[j], t.OutputHash[j]
			nt.Errored[k], nt.Cached[k] = t.Errored[j], t.Cached[j]
			if t.FirstTokenMS != nil {
				nt.FirstTokenMS[k] = t.FirstTokenMS[j]
			}
			for sc, p := range t.Pass {
				nt.Pass[sc][k] = p[j]
			}
		}
		*t = *nt
	}
	b.s.Epochs = epochs
}

// grow extends the columns to n results.
func (t *Target) grow(n int) {
	for len(t.Shape) < n {
		t.Shape = append(t.Shape, ShapeNone)
		t.Kind = append(t.Kind, 0)
		t.CostUSD = append(t.CostUSD, math.NaN())
		t.LatencyMS = append(t.LatencyMS, math.NaN())
		if t.FirstTokenMS != nil {
			t.FirstTokenMS = append(t.FirstTokenMS, math.NaN())
		}
		t.OutputHash = append(t.OutputHash, 0)
		t.Errored = append(t.Errored, false)
		t.Cached = append(t.Cached, false)
		for sc, p := range t.Pass {
			t.Pass[sc] = append(p, -1)
		}
	}
}

// Significant digits kept of cost (USD) and latency (ms): a snapshot
// from the store holds exactly what its baseline file holds, so a run and
// its exported baseline gate the same way.
const (
	costDigits    = 7
	latencyDigits = 6
)

// quantize rounds x to digits significant digits, through the same decimal
// text the baseline file holds.
func quantize(x float64, digits int) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	v, err := strconv.ParseFloat(strconv.FormatFloat(x, 'g', digits, 64), 64)
	if err != nil {
		return x
	}
	return v
}

// clean makes a stored measurement usable: negative or non-finite values
// (which no provider should report) count as 0, so "no result" stays the
// only NaN.
func clean(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
		return 0
	}
	return x
}

func shapeByte(shape string, pass bool) byte {
	switch {
	case pass || shape == "pass":
		return ShapePass
	case shape == "silent":
		return ShapeSilent
	default:
		// An error, a refusal, an unparseable output: loud. Unknown shapes
		// count as loud, as the report counts unscored results.
		return ShapeLoud
	}
}

func sortFingerprints(fps []Fingerprint) {
	slices.SortFunc(fps, func(a, b Fingerprint) int {
		if a.Model != b.Model {
			if a.Model < b.Model {
				return -1
			}
			return 1
		}
		if a.System < b.System {
			return -1
		}
		if a.System > b.System {
			return 1
		}
		return 0
	})
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
