package runview

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// badBaselines locks what a user reads for each broken baseline file in
// testdata/bad (each expectation written by reading the fixture).
var badBaselines = map[string]string{
	"bad_hash.json":              "targets[0].output_hash[0]: is not 16 lowercase hex digits (or empty for no result)",
	"bad_pass_char.json":         `targets[0].pass.correct: character 1 is "x"; each result is 1 (passed), 0 (failed) or - (not scored)`,
	"bad_shape.json":             `targets[0].shape: character 1 is "z"; each result is p (pass), l (loud), s (silent) or - (none)`,
	"duplicate_case.json":        `cases.id[2]: "c1" is also case 0: case IDs are unique`,
	"duplicate_target.json":      `targets[1].name: target "gpt" is listed twice`,
	"kind_out_of_range.json":     "targets[0].kind[1]: 3 is not an index into kinds (-1 for none)",
	"missing_scorer_column.json": `targets[0].pass: has no column for scorer "short"`,
	"negative_latency.json":      "targets[0].latency_ms[0]: must be a number of at least 0 or null, got -812.5",
	"newer_version.json":         "assay_baseline: the file is format 7, written by a newer assay; this assay reads format 1: upgrade assay, or export the baseline again with this one",
	"no_version.json":            `not an assay baseline file (it has no "assay_baseline" version field); write one with: assay baseline export RUN -o FILE`,
	"not_json.json":              ":1:2: invalid JSON: invalid character 'o' in literal null (expecting 'u')",
	"presence_mismatch.json":     "targets[0]: result 2 is present in some columns and missing in others (latency_ms, cost_usd, output_hash and shape agree on which results exist)",
	"primary_unknown.json":       `primary: "exact" is not one of the scorers`,
	"short_column.json":          "targets[0].shape: has 2 entries, want 3 (3 cases × 1 epoch)",
	"tag_length.json":            "cases.tags.tier: has 1 value for 3 cases (null where a case has no value)",
	"trailing_data.json":         ":17:1: invalid JSON: invalid character '{' after top-level value",
	"truncated.json":             ":1:29: invalid JSON: unexpected end of JSON input",
	"unknown_field.json":         `unknown field "raw_outputs" (the baseline file format has no such field: was the file edited?)`,
	"version_string.json":        `assay_baseline: unknown format "one"; this assay reads format 1`,
	"wrong_type.json":            ":7:14: epochs: want a whole number, got a JSON string",
	"zero_count.json":            "targets[0].fingerprints[0].count: must be at least 1, got 0",
	"zero_epochs.json":           "epochs: must be between 1 and 10000, got 0",
	"bad_temperature.json":       "targets[0].temperature: must be a number of at least 0, or null when the spec left it unset; got -0.5",
	"temperature_string.json":    "targets[0].temperature: must be a number of at least 0, or null when the spec left it unset; got a JSON string",
	"errored_out_of_range.json":  "targets[0].errored[1]: 3 is not a result index (0 to 2)",
	"errored_order.json":         "targets[0].errored[1]: 0 does not follow 1: each failed result is listed once, in increasing order",
	"errored_no_result.json":     "targets[0].errored[0]: result 2 does not exist (its latency_ms is null): only a result that exists can be a failed call",
	"errored_type.json":          ":16:18: targets.errored: want a whole number, got a JSON number 0.5",
	"bad_config_hash.json":       "targets[0].config_hash: is not 16 lowercase hex digits",
}

func TestBadBaselines(t *testing.T) {
	entries, err := os.ReadDir("testdata/bad")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		want, ok := badBaselines[e.Name()]
		if !ok {
			t.Errorf("testdata/bad/%s has no expected error in badBaselines", e.Name())
			continue
		}
		name := filepath.Join("testdata", "bad", e.Name())
		_, err := LoadBaseline(name)
		if err == nil {
			t.Errorf("%s: read without error", name)
			continue
		}
		// The message names the file, then (where known) line:col or the
		// JSON path, then what is wrong.
		got := strings.TrimPrefix(err.Error(), name)
		if !strings.HasPrefix(want, ":") {
			want = ": " + want
		}
		if got != want {
			t.Errorf("%s:\n got %s\nwant %s", e.Name(), got, want)
		}
	}
	if len(entries) < 20 {
		t.Errorf("only %d bad baseline fixtures", len(entries))
	}
}

func TestReadGoodBaseline(t *testing.T) {
	s, err := LoadBaseline("testdata/good.json")
	if err != nil {
		t.Fatal(err)
	}
	g := s.Target("gpt")
	if s.Run.ID != "20261201-100000-abcdef" || s.Run.Scoring != 2 || s.Primary != "correct" || len(s.Cases) != 3 || g == nil {
		t.Fatalf("snapshot %+v", s)
	}
	if tier, _ := s.Tag(1, "tier"); tier != "hard" || s.CaseTags(2) != nil {
		t.Errorf("tags %v %v", s.CaseTags(1), s.CaseTags(2))
	}
	if !reflect.DeepEqual(g.Pass["correct"], []int8{1, 0, -1}) || string(g.Shape) != "ps-" || g.KindAt(1) != "wrong" || g.KindAt(0) != "" {
		t.Errorf("verdicts %v %q %q", g.Pass["correct"], g.Shape, g.Kind)
	}
	if g.Has(2) || !g.Has(1) || g.LatencyMS[1] != 0.0493 || g.CostUSD[0] != 0.00012 {
		t.Errorf("measurements %v %v", g.LatencyMS, g.CostUSD)
	}
	if s.Source != "testdata/good.json" {
		t.Errorf("source %q", s.Source)
	}
}

// A baseline file written before temperatures and failed calls were
// recorded (testdata/good.json) still reads: both are unknown, not "unset"
// and "none failed".
func TestReadBaselineWithoutTemperature(t *testing.T) {
	s, err := LoadBaseline("testdata/good.json")
	if err != nil {
		t.Fatal(err)
	}
	g := s.Target("gpt")
	if g.TemperatureKnown || g.Temperature != nil || g.Errored != nil || g.Cached != nil {
		t.Errorf("gpt: temperature %v known %v, errored %v, cached %v; want all unknown", g.Temperature, g.TemperatureKnown, g.Errored, g.Cached)
	}
	// Written again, it stays a file that records neither.
	var b bytes.Buffer
	if err := WriteBaseline(&b, s); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `"temperature"`) || strings.Contains(b.String(), `"errored"`) {
		t.Errorf("a snapshot that does not know them wrote them:\n%s", b.String())
	}
}

// The optional fields: a temperature (a number, or null when the spec left
// it unset) and the indexes of failed calls, each per target.
func TestReadBaselineTemperatureAndErrored(t *testing.T) {
	s, err := LoadBaseline("testdata/good_recorded.json")
	if err != nil {
		t.Fatal(err)
	}
	gpt, claude, local := s.Target("gpt"), s.Target("claude"), s.Target("local")
	if gpt.ConfigHash != "0123456789abcdef" || claude.ConfigHash != "" {
		t.Errorf("config hashes %q, %q", gpt.ConfigHash, claude.ConfigHash)
	}
	if !gpt.TemperatureKnown || gpt.Temperature == nil || *gpt.Temperature != 0.7 || gpt.Errored != nil {
		t.Errorf("gpt: temperature %v known %v errored %v; want 0.7, failed calls not recorded", gpt.Temperature, gpt.TemperatureKnown, gpt.Errored)
	}
	if !claude.TemperatureKnown || claude.Temperature != nil || !reflect.DeepEqual(claude.Errored, []bool{true, false, false}) {
		t.Errorf("claude: temperature %v known %v errored %v; want unset (null), result 0 failed", claude.Temperature, claude.TemperatureKnown, claude.Errored)
	}
	if !local.TemperatureKnown || local.Temperature == nil || *local.Temperature != 0 || !reflect.DeepEqual(local.Errored, []bool{false, false, false}) {
		t.Errorf("local: temperature %v known %v errored %v; want 0, none failed", local.Temperature, local.TemperatureKnown, local.Errored)
	}
	var b bytes.Buffer
	if err := WriteBaseline(&b, s); err != nil {
		t.Fatal(err)
	}
	written := compactJSON(t, b.Bytes())
	for _, want := range []string{`"name":"gpt","temperature":0.7,"config_hash":"0123456789abcdef",`, `"name":"claude","temperature":null,`, `"name":"local","temperature":0,`, `"errored":[0]}`, `"errored":[]}`} {
		if !strings.Contains(written, want) {
			t.Errorf("written file lacks %s:\n%s", want, written)
		}
	}
}

// realisticSnap is a run of n cases × 2 targets with two scorers, two tags,
// costs priced from token counts, latencies with fractions of a
// millisecond, and a few failures of each shape.
func realisticSnap(n int) *View {
	tags := make([]map[string]string, n)
	for i := range tags {
		tags[i] = map[string]string{"tier": fmt.Sprint(i % 9), "bucket": []string{"common", "edge", "hostile", "should-refuse"}[i%4]}
	}
	var targets []*Target
	for ti, name := range []string{"gpt-4o-mini", "claude-haiku"} {
		t := NewTarget(name, []string{"correct", "format"}, n)
		for j := range n {
			in, out := 400+(j*37)%300, 20+(j*11)%90
			t.CostUSD[j] = (float64(in)*0.15 + float64(out)*0.6) / 1e6 * float64(ti+1)
			t.LatencyMS[j] = 300 + float64((j*7919)%2400) + float64(j%10)/7
			t.OutputHash[j] = OutputSum(fmt.Sprint(name, j))
			pass := (j*13+ti)%5 != 0
			t.Pass["correct"][j] = int8(b2i(pass))
			t.Pass["format"][j] = int8(b2i(j%17 != 0))
			switch {
			case pass:
				t.Shape[j] = ShapePass
			case j%3 == 0:
				t.Shape[j] = ShapeLoud
				t.SetKind(j, []string{"timeout", "unparseable", "refusal"}[j%3])
			default:
				t.Shape[j] = ShapeSilent
				t.SetKind(j, "wrong")
			}
		}
		t.Fingerprints = []Fingerprint{{Model: name + "-2026-01-01", System: "fp_a1b2c3", Count: n - 3}, {Model: name + "-2026-01-01", System: "fp_d4e5f6", Count: 3}}
		t.Cached = nil // a file does not hold it
		for j := range n {
			t.Errored[j] = t.KindAt(j) == "timeout"
		}
		t.TemperatureKnown = true
		t.ConfigHash = OutputHash(name)
		if ti == 0 {
			t.Temperature = new(0.0)
		}
		targets = append(targets, t)
	}
	s := testSnap("20261202-101010-abcdef", "sha256:"+strings.Repeat("ab", 32), 1, ids(n), tags, targets...)
	s.Scorers = []string{"correct", "format"}
	s.Run.GitCommit = strings.Repeat("f", 40)
	return s
}

// A written baseline reads back as the same view (numbers to the
// precision written; targets, which the file sorts by name, by name), and
// 1,000 cases × 2 targets stay small (about 160 KB, a line per entry).
// That it gates as the run itself is internal/gate's
// TestBaselineRoundTripGatesAsItself.
func TestBaselineRoundTripAndSize(t *testing.T) {
	s := realisticSnap(1000)
	var b bytes.Buffer
	if err := WriteBaseline(&b, s); err != nil {
		t.Fatal(err)
	}
	size := b.Len()
	t.Logf("baseline of 1,000 cases × 2 targets × 2 scorers: %d bytes", size)
	if size > 200<<10 {
		t.Errorf("baseline is %d KB for 1,000 cases × 2 targets; want well under a few hundred KB", size>>10)
	}
	got, err := ReadBaseline("b.json", &b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Run, s.Run) || !reflect.DeepEqual(got.Cases, s.Cases) || !reflect.DeepEqual(got.Scorers, s.Scorers) || got.Primary != s.Primary || got.Epochs != 1 {
		t.Errorf("run, cases or scorers differ after a round trip")
	}
	if !reflect.DeepEqual(got.TagKeys(), s.TagKeys()) {
		t.Errorf("tag keys %v after a round trip, wrote %v", got.TagKeys(), s.TagKeys())
	}
	for i := range s.Cases {
		if !reflect.DeepEqual(got.CaseTags(i), s.CaseTags(i)) {
			t.Fatalf("case %d: tags %v after a round trip, wrote %v", i, got.CaseTags(i), s.CaseTags(i))
		}
	}
	for _, want := range s.Targets {
		g := got.Target(want.Name)
		if g == nil || len(got.Targets) != len(s.Targets) || !reflect.DeepEqual(g.Pass, want.Pass) || !bytes.Equal(g.Shape, want.Shape) ||
			!reflect.DeepEqual(g.Kind, want.Kind) || !reflect.DeepEqual(g.Kinds, want.Kinds) || !reflect.DeepEqual(g.OutputHash, want.OutputHash) || !reflect.DeepEqual(g.Fingerprints, want.Fingerprints) ||
			!reflect.DeepEqual(g.Errored, want.Errored) || !reflect.DeepEqual(g.Temperature, want.Temperature) || g.TemperatureKnown != want.TemperatureKnown ||
			g.ConfigHash != want.ConfigHash {
			t.Errorf("target %s differs after a round trip", want.Name)
		}
		for j := range want.CostUSD {
			if math.Abs(g.CostUSD[j]-want.CostUSD[j]) > 1e-6*want.CostUSD[j] || math.Abs(g.LatencyMS[j]-want.LatencyMS[j]) > 0.05 {
				t.Fatalf("%s result %d: cost %v latency %v, wrote %v and %v", want.Name, j, g.CostUSD[j], g.LatencyMS[j], want.CostUSD[j], want.LatencyMS[j])
			}
		}
	}
}

// A snapshot from the store holds the latest scoring, every epoch, the
// fingerprints and the failure shapes, and its baseline file holds no
// output, error text or prompt.
func TestFromStore(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run := &record.Run{ID: "20261202-120000-000001", Spec: "s", SpecHash: "sha256:a", DatasetHash: "sha256:b", PromptHash: "sha256:c",
		ScorersHash: "sha256:d", AssayVersion: "v1", Targets: []string{"x", "y"}, Cases: 3, Epochs: 2,
		Status: record.StatusComplete, Started: time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC),
		Config: []byte(`{"name":"s","targets":[{"name":"x","provider":"openai","model":"m","params":{"temperature":0,"max_tokens":10}},{"name":"y","provider":"openai","model":"m"}]}`)}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	var cases []record.Case
	for i := 1; i <= 3; i++ {
		cases = append(cases, record.Case{RunID: run.ID, ID: fmt.Sprint("k", i), Line: i, Expected: []byte(`"4"`), Tags: map[string]string{"tier": fmt.Sprint(i)}})
	}
	if err := st.PutCases(ctx, cases); err != nil {
		t.Fatal(err)
	}
	const secret = "sk-test-SECRET-0000"
	var results []record.Result
	var scores []record.Score
	for _, tg := range []string{"x", "y"} {
		for i := 1; i <= 3; i++ {
			for e := 1; e <= 2; e++ {
				if tg == "y" && i == 3 && e == 2 {
					continue // never ran
				}
				r := record.Result{RunID: run.ID, CaseID: fmt.Sprint("k", i), Target: tg, Epoch: e, Raw: "the answer is 4 " + secret,
					CostUSD: 0.001 * float64(i), LatencyMS: 100 * float64(e), Model: "model-" + tg, Fingerprint: "fp", CreatedAt: run.Started}
				if i == 2 && e == 1 {
					r.Raw, r.Error, r.ErrorKind = "", "401 from https://api?key="+secret, "auth"
				}
				r.FromCache = i == 3
				if r.FromCache {
					// Served from the cache: not billed, its price saved.
					// The snapshot still carries the price (k3's 0.003).
					r.CostUSD, r.SavedUSD = 0, r.CostUSD
				}
				results = append(results, r)
				pass := i == 1
				shape := "silent"
				if pass {
					shape = "pass"
				} else if r.Error != "" {
					shape = "loud"
				}
				scores = append(scores,
					record.Score{RunID: run.ID, Scoring: 1, CaseID: r.CaseID, Target: tg, Epoch: e, Scorer: "correct", Primary: true, Pass: pass, Value: b2f(pass), Shape: shape, Kind: map[bool]string{false: "wrong"}[pass], Reason: "reason " + secret},
					record.Score{RunID: run.ID, Scoring: 1, CaseID: r.CaseID, Target: tg, Epoch: e, Scorer: "short", Pass: true, Value: 1, Shape: "pass"})
			}
		}
	}
	if err := st.PutResults(ctx, results, scores); err != nil {
		t.Fatal(err)
	}
	// A rescore (scoring 2) passes everything on "correct" for target x.
	var rescored []record.Score
	for _, s := range scores {
		s.Scoring = 2
		if s.Target == "x" && s.Scorer == "correct" {
			s.Pass, s.Shape, s.Kind = true, "pass", ""
		}
		rescored = append(rescored, s)
	}
	if err := st.PutScores(ctx, rescored); err != nil {
		t.Fatal(err)
	}
	s, err := FromStore(ctx, st, run)
	if err != nil {
		t.Fatal(err)
	}
	if s.Run.Scoring != 2 || s.Epochs != 2 || len(s.Cases) != 3 || s.Primary != "correct" || !reflect.DeepEqual(s.Scorers, []string{"correct", "short"}) {
		t.Fatalf("snapshot %+v", s)
	}
	x, y := s.Target("x"), s.Target("y")
	if !reflect.DeepEqual(x.Pass["correct"], []int8{1, 1, 1, 1, 1, 1}) {
		t.Errorf("x correct %v: want the latest scoring (all pass)", x.Pass["correct"])
	}
	if !reflect.DeepEqual(y.Pass["correct"], []int8{1, 1, 0, 0, 0, -1}) || string(y.Shape) != "pplss-" {
		t.Errorf("y correct %v shape %q", y.Pass["correct"], y.Shape)
	}
	if y.Has(5) || !y.Has(4) || y.CostUSD[4] != 0.003 || y.LatencyMS[1] != 200 || y.KindAt(2) != "wrong" {
		t.Errorf("y measurements: cost %v latency %v kind %q", y.CostUSD, y.LatencyMS, y.Kind)
	}
	// The failed call reports no model and is not counted as one.
	if !reflect.DeepEqual(y.Fingerprints, []Fingerprint{{Model: "model-y", System: "fp", Count: 4}}) {
		t.Errorf("fingerprints %+v", y.Fingerprints)
	}
	if x.OutputHash[0] != OutputSum("the answer is 4 "+secret) {
		t.Errorf("hash %x", x.OutputHash[0])
	}
	// The temperature comes from the resolved spec (unset for y); the
	// failed call and the cached results are marked.
	if !x.TemperatureKnown || x.Temperature == nil || *x.Temperature != 0 || !y.TemperatureKnown || y.Temperature != nil {
		t.Errorf("temperatures x %v (%v), y %v (%v); want 0 and unset", x.Temperature, x.TemperatureKnown, y.Temperature, y.TemperatureKnown)
	}
	// The configuration hash is of the target's whole entry, whatever the
	// order of its keys or its spacing.
	if want := OutputHash(`{"model":"m","name":"y","provider":"openai"}`); y.ConfigHash != want || x.ConfigHash == y.ConfigHash ||
		ConfigHash([]byte(` { "provider": "openai", "name": "y",  "model": "m" }`)) != want {
		t.Errorf("config hashes x %q y %q; want y %q", x.ConfigHash, y.ConfigHash, want)
	}
	if !reflect.DeepEqual(y.Errored, []bool{false, false, true, false, false, false}) || !reflect.DeepEqual(y.Cached, []bool{false, false, false, false, true, false}) {
		t.Errorf("y errored %v cached %v", y.Errored, y.Cached)
	}
	var b bytes.Buffer
	if err := WriteBaseline(&b, s); err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{secret, "the answer", "401", "reason"} {
		if strings.Contains(b.String(), leak) {
			t.Errorf("the baseline file holds %q", leak)
		}
	}
	written := compactJSON(t, b.Bytes())
	if !strings.Contains(written, `"name":"x","temperature":0,"config_hash":"`+x.ConfigHash+`",`) || !strings.Contains(written, `"name":"y","temperature":null,`) ||
		!strings.Contains(written, `"errored":[2]}`) || strings.Contains(written, "cache") {
		t.Errorf("the file must hold each target's temperature and failed calls, and nothing of the cache:\n%s", written)
	}
	back, err := ReadBaseline("b.json", &b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	by := back.Target("y")
	if by.Has(5) || back.Epochs != 2 || !reflect.DeepEqual(by.Errored, y.Errored) || by.Cached != nil || !by.TemperatureKnown || by.Temperature != nil || by.ConfigHash != y.ConfigHash {
		t.Errorf("read back: %+v", back)
	}

	// A run whose resolved spec is not stored has no known temperature.
	run.Config = nil
	s, err = FromStore(ctx, st, run)
	if err != nil {
		t.Fatal(err)
	}
	if s.Target("x").TemperatureKnown || s.Target("x").ConfigHash != "" {
		t.Errorf("temperature or configuration known without a resolved spec")
	}
}

// A run with results but no scores is refused by FromStore (nothing to
// gate) and taken by FromStoreUnscored, every verdict "not scored".
func TestFromStoreUnscored(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run := &record.Run{ID: "r", Spec: "s", Targets: []string{"x"}, Cases: 2, Epochs: 1, Status: record.StatusInterrupted,
		Started: time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	if err := st.PutCases(ctx, []record.Case{{RunID: "r", ID: "a", Line: 1}, {RunID: "r", ID: "b", Line: 2}}); err != nil {
		t.Fatal(err)
	}
	if err := st.PutResults(ctx, []record.Result{{RunID: "r", CaseID: "b", Target: "x", Epoch: 1, Raw: "hi", LatencyMS: 5, CreatedAt: run.Started}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := FromStore(ctx, st, run); err == nil || !strings.Contains(err.Error(), "has no scores: nothing to gate") {
		t.Errorf("FromStore on an unscored run: %v", err)
	}
	s, err := FromStoreUnscored(ctx, st, run)
	if err != nil {
		t.Fatal(err)
	}
	x := s.Target("x")
	if s.Primary != "" || len(x.OutputHash) != 2 || x.Has(0) || !x.Has(1) || x.OutputHash[1] != OutputSum("hi") || x.Shape[1] != ShapeNone {
		t.Errorf("snapshot %+v, target %+v", s, x)
	}
}

// The baseline reader never panics, and what it accepts writes back to a
// file it reads as the same snapshot.
func FuzzReadBaseline(f *testing.F) {
	paths, _ := filepath.Glob("testdata/bad/*.json")
	paths = append(paths, "testdata/good.json", "testdata/good_recorded.json")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	var small bytes.Buffer
	if err := WriteBaseline(&small, realisticSnap(5)); err != nil {
		f.Fatal(err)
	}
	f.Add(small.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		s1, err := ReadBaseline("f.json", bytes.NewReader(data))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.json") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		var w1, w2 bytes.Buffer
		if err := WriteBaseline(&w1, s1); err != nil {
			t.Fatal(err)
		}
		s2, err := ReadBaseline("f.json", bytes.NewReader(w1.Bytes()))
		if err != nil {
			t.Fatalf("a written baseline does not read back: %v\n%s", err, w1.String())
		}
		if err := WriteBaseline(&w2, s2); err != nil {
			t.Fatal(err)
		}
		s3, err := ReadBaseline("f.json", bytes.NewReader(w2.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		var w3 bytes.Buffer
		if err := WriteBaseline(&w3, s3); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(w2.Bytes(), w3.Bytes()) {
			t.Fatalf("writing is not stable:\n%s\n%s", w2.String(), w3.String())
		}
		if len(s2.Cases) != len(s1.Cases) || len(s2.Targets) != len(s1.Targets) {
			t.Fatalf("round trip changed the shape")
		}
	})
}
