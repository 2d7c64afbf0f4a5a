package spec

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// Calibration is the calibration: section: the thresholds `assay
// calibrate` and serve's calibration page hold a judge to when they compare
// its verdicts with people's labels. A key not written keeps its default.
type Calibration struct {
	// MinKappa is the least Cohen's κ between the judge and the labels
	// (default 0.6).
	MinKappa float64 `yaml:"min_kappa" json:"min_kappa"`
	// MinTNR is the least share of the outputs people failed that the
	// judge fails too (specificity; default 0.8): a judge must catch
	// failures.
	MinTNR float64 `yaml:"min_tnr" json:"min_tnr"`
	// MinTPR is the least share of the outputs people passed that the
	// judge passes too (sensitivity; default 0.8).
	MinTPR float64 `yaml:"min_tpr" json:"min_tpr"`
	// Width is the width of the corrected pass rate's interval the labels
	// should reach; the report says how many more labels would (default
	// 0.10, ten percentage points).
	Width float64 `yaml:"width" json:"width"`
	// Level is the confidence level of every interval (default 0.95).
	Level float64 `yaml:"level" json:"level"`
}

// Calibration defaults.
const (
	DefaultMinKappa = 0.6
	DefaultMinTNR   = 0.8
	DefaultMinTPR   = 0.8
	DefaultWidth    = 0.10
	DefaultLevel    = 0.95
)

// DefaultCalibration is the calibration: section of a spec that has none.
func DefaultCalibration() Calibration {
	return Calibration{MinKappa: DefaultMinKappa, MinTNR: DefaultMinTNR, MinTPR: DefaultMinTPR, Width: DefaultWidth, Level: DefaultLevel}
}

// Labels is the labels: section: where labeled outputs go.
type Labels struct {
	// AddTo is the JSONL dataset file "add to dataset" appends a case to,
	// relative to the spec (default: dataset.path when it is JSONL).
	AddTo string `yaml:"add_to" json:"add_to,omitempty"`
}

// AddToPath is the file "add to dataset" appends to, resolved against the
// spec's directory: labels.add_to, or the dataset itself when it is JSONL;
// "" when neither (a CSV dataset and no labels.add_to).
func (s *Spec) AddToPath() string {
	if s.Labels != nil && s.Labels.AddTo != "" {
		return s.Resolve(s.Labels.AddTo)
	}
	if s.Dataset.Format == "jsonl" {
		return s.Resolve(s.Dataset.Path)
	}
	return ""
}

// ConfigCalibration reads the calibration: section from a run's stored
// configuration (record.Run.Config, the resolved spec as JSON): the
// defaults when the spec had none (or the configuration is not readable,
// ok false).
func ConfigCalibration(config []byte) (c Calibration, ok bool) {
	c = DefaultCalibration()
	var cfg struct {
		Calibration *Calibration `json:"calibration"`
	}
	if len(config) == 0 || json.Unmarshal(config, &cfg) != nil {
		return c, false
	}
	if cfg.Calibration != nil {
		c = *cfg.Calibration
	}
	return c, true
}

// checkCalibration fills the defaults of the keys not written and checks
// the ranges of those written.
func (v *validator) checkCalibration() {
	c := v.s.Calibration
	if c == nil {
		return
	}
	def := DefaultCalibration()
	for _, f := range []struct {
		key      string
		val      *float64
		def      float64
		lo, hi   float64
		openLow  bool
		openHigh bool
		hint     string
	}{
		{"min_kappa", &c.MinKappa, def.MinKappa, 0, 1, false, false, "κ above 0.6 is the usual bar for substantial agreement"},
		{"min_tnr", &c.MinTNR, def.MinTNR, 0, 1, false, false, "the share of failures the judge must catch, such as 0.8"},
		{"min_tpr", &c.MinTPR, def.MinTPR, 0, 1, false, false, "the share of passes the judge must pass, such as 0.8"},
		{"width", &c.Width, def.Width, 0, 1, true, false, "0.10 asks for an interval ten percentage points wide"},
		{"level", &c.Level, def.Level, 0.5, 1, false, true, "the usual level is 0.95"},
	} {
		path := "calibration." + f.key
		if !v.written(path) {
			*f.val = f.def
			continue
		}
		x := *f.val
		low := x < f.lo || (f.openLow && x == f.lo)
		high := x > f.hi || (f.openHigh && x == f.hi)
		if x != x || low || high {
			rng := fmt.Sprintf("between %v and %v", f.lo, f.hi)
			switch {
			case f.openLow:
				rng = fmt.Sprintf("above %v and at most %v", f.lo, f.hi)
			case f.openHigh:
				rng = fmt.Sprintf("at least %v and below %v", f.lo, f.hi)
			}
			v.at(path, f.hint, "%s must be %s, got %v", path, rng, x)
		}
	}
}

// checkLabels checks labels.add_to: a JSONL file ("add to dataset" writes
// one case per line).
func (v *validator) checkLabels() {
	l := v.s.Labels
	if l == nil || !v.written("labels.add_to") {
		return
	}
	switch strings.ToLower(filepath.Ext(l.AddTo)) {
	case ".jsonl", ".ndjson", ".jsonlines":
	default:
		if strings.TrimSpace(l.AddTo) == "" {
			v.at("labels.add_to", "a JSONL file relative to the spec, such as added.jsonl", "labels.add_to is empty")
			return
		}
		v.at("labels.add_to", "a JSONL file relative to the spec, such as added.jsonl", "labels.add_to must name a JSONL file (.jsonl), got %s", shortQuote(l.AddTo))
	}
}
