package spec

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// A spec without calibration: or labels: sections loads as before: no
// section, the same prompt and scorer hashes as with them (they decide no
// reply and no verdict), and the defaults for a run's stored config.
func TestCalibrationSectionsOptionalAndUnhashed(t *testing.T) {
	plain, ps := parse(t, base)
	if ps != nil {
		t.Fatal(ps)
	}
	if plain.Calibration != nil || plain.Labels != nil {
		t.Fatalf("sections not written must stay nil: %+v %+v", plain.Calibration, plain.Labels)
	}
	with, ps := parse(t, base+"calibration: {min_kappa: 0.7, width: 0.05}\nlabels: {add_to: more.jsonl}\n")
	if ps != nil {
		t.Fatal(ps)
	}
	if plain.PromptHash() != with.PromptHash() || plain.ScorersHash() != with.ScorersHash() {
		t.Error("calibration: and labels: must not change the prompt or scorer hash")
	}
	want := Calibration{MinKappa: 0.7, MinTNR: 0.8, MinTPR: 0.8, Width: 0.05, Level: 0.95}
	if *with.Calibration != want {
		t.Errorf("calibration = %+v, want %+v (unwritten keys take their defaults)", *with.Calibration, want)
	}
	cfg, _ := json.Marshal(with)
	if c, ok := ConfigCalibration(cfg); !ok || c != want {
		t.Errorf("ConfigCalibration = %+v %v, want %+v", c, ok, want)
	}
	cfg, _ = json.Marshal(plain)
	if c, ok := ConfigCalibration(cfg); !ok || c != DefaultCalibration() {
		t.Errorf("ConfigCalibration of a spec without the section = %+v %v, want the defaults", c, ok)
	}
	if strings.Contains(string(cfg), "calibration") || strings.Contains(string(cfg), "add_to") {
		t.Errorf("a spec without the sections stores none: %s", cfg)
	}
	if c, ok := ConfigCalibration([]byte("{")); ok || c != DefaultCalibration() {
		t.Errorf("unreadable config = %+v %v, want the defaults and false", c, ok)
	}
	// min_tnr: 0 is kept as written (it switches the check off).
	zero, ps := parse(t, base+"calibration:\n  min_tnr: 0\n")
	if ps != nil || zero.Calibration.MinTNR != 0 || zero.Calibration.MinKappa != DefaultMinKappa {
		t.Errorf("min_tnr 0: %+v %v", zero.Calibration, ps)
	}
}

func TestAddToPath(t *testing.T) {
	sp, _ := parse(t, base)
	if got := sp.AddToPath(); got != "data.jsonl" {
		t.Errorf("default add_to = %q, want the JSONL dataset", got)
	}
	sp, _ = parse(t, strings.Replace(base, "data.jsonl", "data.csv", 1))
	if got := sp.AddToPath(); got != "" {
		t.Errorf("a CSV dataset and no add_to = %q, want none", got)
	}
	sp, _ = parse(t, strings.Replace(base, "data.jsonl", "data.csv", 1)+"labels:\n  add_to: extra/added.jsonl\n")
	if got := sp.AddToPath(); got != "extra/added.jsonl" {
		t.Errorf("add_to = %q", got)
	}
}

func TestCalibrationProblems(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"out of range", "calibration:\n  min_kappa: 1.5\n  min_tnr: -0.1\n  min_tpr: 2\n  width: 0\n  level: 1\n", []string{
			"s.yaml:10:14: calibration.min_kappa must be between 0 and 1, got 1.5 (κ above 0.6 is the usual bar for substantial agreement)",
			"s.yaml:11:12: calibration.min_tnr must be between 0 and 1, got -0.1 (the share of failures the judge must catch, such as 0.8)",
			"s.yaml:12:12: calibration.min_tpr must be between 0 and 1, got 2 (the share of passes the judge must pass, such as 0.8)",
			"s.yaml:13:10: calibration.width must be above 0 and at most 1, got 0 (0.10 asks for an interval ten percentage points wide)",
			"s.yaml:14:10: calibration.level must be at least 0.5 and below 1, got 1 (the usual level is 0.95)",
		}},
		{"not a number", "calibration: {min_kappa: high}\n", []string{
			`s.yaml:9:26: calibration.min_kappa must be a number, got the string "high"`,
		}},
		{"unknown key", "calibration: {min_tn: 0.9}\n", []string{
			`s.yaml:9:15: unknown key "min_tn" in calibration (did you mean "min_tnr"? valid keys are: level, min_kappa, min_tnr, min_tpr, width)`,
		}},
		{"add_to not JSONL", "labels:\n  add_to: added.csv\n", []string{
			`s.yaml:10:11: labels.add_to must name a JSONL file (.jsonl), got "added.csv" (a JSONL file relative to the spec, such as added.jsonl)`,
		}},
		{"add_to empty", "labels:\n  add_to: ''\n", []string{
			`s.yaml:10:11: labels.add_to is empty (a JSONL file relative to the spec, such as added.jsonl)`,
		}},
		{"unknown labels key", "labels: {addto: x.jsonl}\n", []string{
			`s.yaml:9:10: unknown key "addto" in labels (did you mean "add_to"? valid keys are: add_to)`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ps := parse(t, base+tc.src)
			got := ps.Error()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("problems lack %q:\n%s", w, got)
				}
			}
			if len(ps) != len(tc.want) {
				t.Errorf("%d problems, want %d:\n%s", len(ps), len(tc.want), got)
			}
		})
	}
}

// FuzzCalibrationSection loads specs whose calibration: and labels:
// values are arbitrary text: the loader never panics, every problem about
// them is located and names its key, and a spec that loads has thresholds
// in their ranges.
func FuzzCalibrationSection(f *testing.F) {
	f.Add("0.6", "0.8", "0.8", "0.1", "0.95", "added.jsonl")
	f.Add("-1", "1.5", "NaN", "0", "1", "x.csv")
	f.Add(".inf", "'0.5'", "[1]", "{a: 1}", "", "''")
	f.Add("1e309", "0x10", "true", "null", "~", "a b.jsonl")
	f.Fuzz(func(t *testing.T, kappa, tnr, tpr, width, level, addTo string) {
		src := base + "calibration:\n  min_kappa: " + kappa + "\n  min_tnr: " + tnr + "\n  min_tpr: " + tpr +
			"\n  width: " + width + "\n  level: " + level + "\nlabels:\n  add_to: " + addTo + "\n"
		sp, err := Parse("f.yaml", []byte(src))
		var ps Problems
		if err != nil && !errors.As(err, &ps) {
			t.Fatalf("error %v is not Problems", err)
		}
		for _, p := range ps {
			if p.Line < 1 || p.Col < 1 || p.Msg == "" {
				t.Fatalf("bad problem %#v", p)
			}
		}
		if err == nil && sp.Calibration != nil {
			c := sp.Calibration
			for _, x := range []float64{c.MinKappa, c.MinTNR, c.MinTPR, c.Width} {
				if !(x >= 0 && x <= 1) {
					t.Fatalf("a spec that loads has calibration %+v", *c)
				}
			}
			if !(c.Width > 0 && c.Level >= 0.5 && c.Level < 1) {
				t.Fatalf("a spec that loads has calibration %+v", *c)
			}
		}
	})
}
