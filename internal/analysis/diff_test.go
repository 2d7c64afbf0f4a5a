package analysis

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/runview"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

func TestDiffSpecsMatchesNamedEntries(t *testing.T) {
	before := `{"name":"s","prompt":{"user":"Q: {{.q}}"},
	  "targets":[{"name":"a","provider":"openai","model":"m","params":{"temperature":0}},{"name":"b]\"x","provider":"exec"}],
	  "scorers":[{"name":"correct","type":"equals","normalize":["trim"]}],
	  "dataset":{"path":"d.jsonl","tags":[{"key":"tier","expr":"t"}]}}`
	// Same spec, targets reordered: no change.
	reordered := `{"name":"s","prompt":{"user":"Q: {{.q}}"},
	  "targets":[{"name":"b]\"x","provider":"exec"},{"name":"a","provider":"openai","model":"m","params":{"temperature":0}}],
	  "scorers":[{"name":"correct","type":"equals","normalize":["trim"]}],
	  "dataset":{"path":"d.jsonl","tags":[{"key":"tier","expr":"t"}]}}`
	d, err := diffSpecs([]byte(before), []byte(reordered))
	if err != nil || !d.Empty() {
		t.Fatalf("reordered targets: %v %+v; want no change", err, d)
	}
	after := `{"name":"s","prompt":{"user":"Q: {{.q}}","system":"be brief"},
	  "targets":[{"name":"a","provider":"anthropic","model":"m2","params":{"temperature":0.5,"max_tokens":10}},{"name":"c","provider":"exec"}],
	  "scorers":[{"name":"correct","type":"equals","normalize":["trim","lower"]},{"name":"short","type":"max_length","max":5}],
	  "dataset":{"path":"d.jsonl","tags":[{"key":"tier","expr":"u"}]}}`
	d, err = diffSpecs([]byte(before), []byte(after))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(d.TargetsAdded, ",") != "c" || strings.Join(d.TargetsRemoved, ",") != `b]"x` {
		t.Errorf("targets added %q removed %q", d.TargetsAdded, d.TargetsRemoved)
	}
	if len(d.Targets) != 1 || d.Targets[0].Name != "a" {
		t.Fatalf("targets changed %+v: want a only", d.Targets)
	}
	got := map[string]FieldChange{}
	for _, c := range d.Targets[0].Changes {
		got[c.Field] = c
	}
	want := map[string][2]string{"model": {`"m"`, `"m2"`}, "provider": {`"openai"`, `"anthropic"`},
		"params.temperature": {"0", "0.5"}, "params.max_tokens": {"", "10"}}
	if len(got) != len(want) {
		t.Errorf("a's changes %+v, want %v", d.Targets[0].Changes, want)
	}
	for f, w := range want {
		if c := got[f]; c.Before != w[0] || c.After != w[1] {
			t.Errorf("a.%s: %q → %q, want %q → %q", f, c.Before, c.After, w[0], w[1])
		}
	}
	if len(d.Prompt) != 1 || d.Prompt[0].Field != "prompt.system" || d.Prompt[0].Before != "" {
		t.Errorf("prompt %+v: want prompt.system added", d.Prompt)
	}
	// The new scorer is one entry (not one line per field), the changed one
	// its changed field.
	if len(d.Scorers) != 2 || d.Scorers[0].Field != `scorers["correct"].normalize` || d.Scorers[1].Field != `scorers["short"]` || d.Scorers[1].Before != "" {
		t.Errorf("scorers %+v", d.Scorers)
	}
	if len(d.Dataset) != 1 || d.Dataset[0].Field != `dataset.tags["tier"].expr` {
		t.Errorf("dataset %+v", d.Dataset)
	}
	if _, err := diffSpecs([]byte(`[1]`), []byte(`{}`)); err == nil {
		t.Error("a spec that is not an object must be an error")
	}
}

func TestSplitKeyed(t *testing.T) {
	for _, c := range []struct{ path, name, field string }{
		{`targets["a"].params.temperature`, "a", "params.temperature"},
		{`targets["a]\".x"].model`, `a]".x`, "model"},
		{`targets["a"]`, "a", ""},
	} {
		n, f, ok := splitKeyed(c.path)
		if !ok || n != c.name || f != c.field {
			t.Errorf("splitKeyed(%s) = %q %q %v", c.path, n, f, ok)
		}
	}
}

// Any two resolved specs: no panic; a spec against itself has no change;
// every change names a field whose values differ.
func FuzzDiffSpecs(f *testing.F) {
	f.Add([]byte(`{"targets":[{"name":"a","model":"m"}]}`), []byte(`{"targets":[{"name":"a","model":"n"},{"name":"b"}]}`))
	f.Add([]byte(`{"scorers":[{"name":"x"},{"name":"x"}],"prompt":{"user":"u"}}`), []byte(`{"scorers":[{"key":"x"}],"prompt":"u"}`))
	f.Add([]byte(`{"targets":[{"name":"a.b[\"c\"]"}],"a":{"b":[1,{"c":2}]}}`), []byte(`{"targets":{"name":"a"},"a":null}`))
	f.Add([]byte(`{}`), []byte(`not json`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		d, err := diffSpecs(a, b)
		if err != nil {
			return
		}
		var v any
		if json.Unmarshal(a, &v) == nil {
			if self, err := diffSpecs(a, a); err != nil || !self.Empty() {
				t.Fatalf("a spec against itself: %v %+v", err, self)
			}
		}
		all := append(append(append(append([]FieldChange{}, d.Prompt...), d.Scorers...), d.Dataset...), d.Other...)
		for _, tc := range d.Targets {
			all = append(all, tc.Changes...)
		}
		for _, c := range all {
			if c.Before == c.After {
				t.Fatalf("change %+v has equal values", c)
			}
		}
	})
}

// The models a run reported count what successful calls reported; a failed
// call's model (the spec's, filled in by the runner) is not a report. Diff,
// drift, gate and report all read them through the run's view (runview) and its
// change rule.
func TestReportedModels(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run := &record.Run{ID: "r", Targets: []string{"a", "b"}, Epochs: 1, Status: record.StatusComplete, Started: time.Now()}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	var rs []record.Result
	add := func(c, target, model, fp, kind string) {
		rs = append(rs, record.Result{RunID: "r", CaseID: c, Target: target, Epoch: 1, Model: model, Fingerprint: fp, ErrorKind: kind})
	}
	add("1", "a", "m-1", "fp1", "")
	add("2", "a", "m-1", "fp2", "")
	add("3", "a", "m-1", "fp2", "")
	add("4", "a", "m", "", "timeout")
	add("1", "b", "x", "", "")
	if err := st.PutResults(ctx, rs, nil); err != nil {
		t.Fatal(err)
	}
	snap, err := runview.FromStoreUnscored(ctx, st, run)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]ModelCount{}
	for _, tg := range snap.Targets {
		for _, f := range tg.Fingerprints {
			got[tg.Name] = append(got[tg.Name], ModelCount{f.Model, f.System, f.Count})
		}
	}
	a := got["a"]
	if len(a) != 2 || !slices.Contains(a, ModelCount{"m-1", "fp2", 2}) || !slices.Contains(a, ModelCount{"m-1", "fp1", 1}) || len(got["b"]) != 1 {
		t.Errorf("reported %+v; want a: m-1 fp2 ×2, m-1 fp1 ×1; b: x", got)
	}
	if modelsChanged(a, []ModelCount{{"m-1", "fp1", 9}, {"m-1", "fp2", 1}}) || !modelsChanged(a, got["b"]) || modelsChanged(a, nil) {
		t.Error("modelsChanged compares the sets of pairs, and nothing reported is no change")
	}
}
