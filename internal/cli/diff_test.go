package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/mock"
)

// diffJSONOut is the part of `assay diff --format json` the tests read.
type diffJSONOut struct {
	Versions []struct {
		Name          string
		Before, After string
		Same          bool
	}
	Spec *struct {
		TargetsAdded   []string `json:"targets_added"`
		TargetsRemoved []string `json:"targets_removed"`
		Targets        []struct {
			Name    string
			Changes []struct{ Field, Before, After string }
		} `json:"targets_changed"`
		Prompt  []struct{ Field, Before, After string }
		Scorers []struct{ Field, Before, After string }
	}
	Cases struct {
		Before, After, Shared, Added, Removed, Changed int
		AddedIDs                                       []string `json:"added_ids"`
		RemovedIDs                                     []string `json:"removed_ids"`
	}
	TargetsAdded   []string `json:"targets_added"`
	TargetsRemoved []string `json:"targets_removed"`
	Models         []struct {
		Target        string
		Before, After []struct {
			Model, Fingerprint string
			Results            int
		}
		Changed bool
	}
	Flips []struct {
		Target     string
		Paired     int
		PassToFail int `json:"pass_to_fail"`
		FailToPass int `json:"fail_to_pass"`
		Unlisted   int
		Cases      []struct {
			CaseID        string `json:"case_id"`
			Epoch         int
			Direction     string
			Expected      string
			Before, After string
		}
	}
	Warnings []string
}

// hostileReply is what the changed model answers on case 11: a terminal
// escape that would colour (and could retitle or rewrite) the terminal, a
// newline that would forge a line of the report, and a bidi override.
const hostileReply = "\x1b[31mEVIL\x1b[0m\nafter:  forged line \u202eevil"

// twoVersions makes two runs that differ in every way diff reports:
//
//   - dataset: c1 and c2 removed, c31 and c32 added (30 cases each);
//   - spec: target oa's model m → m2 and temperature 0 → 0.5; target old
//     removed, target fresh added; the prompt gains a system message; the
//     scorer normalizes with lower too;
//   - outputs: case 11 passed and now gets hostileReply (pass→fail); case 12
//     expected "other" and failed, and now gets "other" (fail→pass).
func twoVersions(t *testing.T) (db, before, after string) {
	t.Helper()
	_, url1 := startMock(t, mock.Options{})
	_, url2 := startMock(t, mock.Options{Rules: []mock.Rule{{Match: "word-11", Reply: hostileReply}, {Match: "word-12", Reply: "other"}}})
	root := t.TempDir()
	db = filepath.Join(root, "assay.db")

	dir1 := filepath.Join(root, "v1")
	spec1 := echoTask(t, dir1, 30, fmt.Sprintf(`  - {name: oa, provider: openai, model: m, base_url: %s/v1, params: {temperature: 0}}
  - {name: old, provider: openai, model: m, base_url: %s/v1}`, url1, url1))
	before = runJSON(t, cliEnv{}, "run", spec1, "--db", db, "--no-cache").RunID

	dir2 := filepath.Join(root, "v2")
	spec2 := echoTask(t, dir2, 32, fmt.Sprintf(`  - {name: oa, provider: openai, model: m2, base_url: %s/v1, params: {temperature: 0.5}}
  - {name: fresh, provider: openai, model: m, base_url: %s/v1}`, url2, url2))
	cases := strings.SplitAfter(readFileT(t, filepath.Join(dir2, "cases.jsonl")), "\n")
	writeFile(t, filepath.Join(dir2, "cases.jsonl"), strings.Join(cases[2:], "")) // drop c1, c2
	s := readFileT(t, spec2)
	s = strings.Replace(s, `prompt: {user: "{{.say}}"}`, `prompt: {system: "Repeat the word.", user: "{{.say}}"}`, 1)
	s = strings.Replace(s, "normalize: [trim]", "normalize: [trim, lower]", 1)
	writeFile(t, spec2, s)
	after = runJSON(t, cliEnv{}, "run", spec2, "--db", db, "--no-cache").RunID
	return db, before, after
}

func TestDiffShowsWhatChanged(t *testing.T) {
	t.Parallel()
	db, before, after := twoVersions(t)

	inv := runCLI(t, cliEnv{}, "diff", before, after, "--db", db, "--format", "json")
	if inv.code != ExitOK {
		t.Fatalf("diff exit %d: %s", inv.code, inv.stderr)
	}
	var d diffJSONOut
	if err := json.Unmarshal([]byte(inv.stdout), &d); err != nil {
		t.Fatalf("%v\n%s", err, inv.stdout)
	}

	same := map[string]bool{}
	for _, v := range d.Versions {
		same[v.Name] = v.Same
	}
	for name, want := range map[string]bool{"spec_hash": false, "prompt_hash": false, "dataset_hash": false, "scorers_hash": false, "assay_version": true, "git_commit": true} {
		if got, ok := same[name]; !ok || got != want {
			t.Errorf("version %s: same=%v (listed %v), want same=%v", name, got, ok, want)
		}
	}

	if d.Spec == nil {
		t.Fatal("no spec changes, though both runs carry their resolved spec")
	}
	if fmt.Sprint(d.Spec.TargetsAdded) != "[fresh]" || fmt.Sprint(d.Spec.TargetsRemoved) != "[old]" {
		t.Errorf("spec targets added %v removed %v; want [fresh] and [old]", d.Spec.TargetsAdded, d.Spec.TargetsRemoved)
	}
	changes := map[string][2]string{}
	for _, tc := range d.Spec.Targets {
		if tc.Name != "oa" {
			t.Errorf("target %s listed as changed; only oa changed", tc.Name)
		}
		for _, c := range tc.Changes {
			changes[c.Field] = [2]string{c.Before, c.After}
		}
	}
	if changes["model"] != [2]string{`"m"`, `"m2"`} || changes["params.temperature"] != [2]string{"0", "0.5"} {
		t.Errorf("oa changes %v: want model \"m\"→\"m2\" and params.temperature 0→0.5", changes)
	}
	if _, ok := changes["base_url"]; !ok {
		t.Errorf("oa changes %v: the base URL changed too (another mock)", changes)
	}
	if len(d.Spec.Prompt) != 1 || d.Spec.Prompt[0].Field != "prompt.system" || d.Spec.Prompt[0].After != `"Repeat the word."` {
		t.Errorf("prompt changes %+v: want prompt.system added", d.Spec.Prompt)
	}
	if len(d.Spec.Scorers) != 1 || !strings.Contains(d.Spec.Scorers[0].Field, "normalize") || d.Spec.Scorers[0].After != `["trim","lower"]` {
		t.Errorf("scorer changes %+v: want correct's normalize [trim] → [trim, lower]", d.Spec.Scorers)
	}

	c := d.Cases
	if c.Before != 30 || c.After != 30 || c.Shared != 28 || c.Added != 2 || c.Removed != 2 ||
		fmt.Sprint(c.AddedIDs) != "[c31 c32]" || fmt.Sprint(c.RemovedIDs) != "[c1 c2]" {
		t.Errorf("cases %+v: want 28 shared, c31 c32 added, c1 c2 removed", c)
	}
	if fmt.Sprint(d.TargetsAdded) != "[fresh]" || fmt.Sprint(d.TargetsRemoved) != "[old]" {
		t.Errorf("run targets added %v removed %v", d.TargetsAdded, d.TargetsRemoved)
	}

	for _, m := range d.Models {
		if m.Target != "oa" {
			continue
		}
		if !m.Changed || len(m.Before) != 1 || m.Before[0].Model != "m" || len(m.After) != 1 || m.After[0].Model != "m2" || m.After[0].Fingerprint != "fp_mock" {
			t.Errorf("oa models %+v: want m → m2 (fp_mock), changed", m)
		}
	}

	if len(d.Flips) != 1 || d.Flips[0].Target != "oa" {
		t.Fatalf("flips %+v: want oa only (the one target in both runs)", d.Flips)
	}
	f := d.Flips[0]
	if f.Paired != 28 || f.PassToFail != 1 || f.FailToPass != 1 || len(f.Cases) != 2 || f.Unlisted != 0 {
		t.Fatalf("oa flips %+v: want 28 paired, c11 pass→fail, c12 fail→pass", f)
	}
	down, up := f.Cases[0], f.Cases[1]
	if down.CaseID != "c11" || down.Direction != "pass_to_fail" || down.Before != "word-11" || down.After != hostileReply || down.Expected != "word-11" {
		t.Errorf("first flip %+v: want c11 pass→fail, word-11 before, the hostile reply after (exactly, in JSON)", down)
	}
	if up.CaseID != "c12" || up.Direction != "fail_to_pass" || up.Before != "word-12" || up.After != "other" {
		t.Errorf("second flip %+v: want c12 fail→pass, word-12 → other", up)
	}

	limited := runCLI(t, cliEnv{}, "diff", before, after, "--db", db, "--format", "json", "--limit", "1", "--target", "oa")
	var dl diffJSONOut
	if err := json.Unmarshal([]byte(limited.stdout), &dl); err != nil || len(dl.Flips) != 1 || len(dl.Flips[0].Cases) != 1 || dl.Flips[0].Unlisted != 1 || dl.Flips[0].Cases[0].CaseID != "c11" {
		t.Errorf("--limit 1: %v %+v; want c11 listed (pass→fail first) and 1 unlisted", err, dl.Flips)
	}
}

// Outputs are hostile: in text, every control character and terminal escape
// is shown escaped, never written, and a newline in an output cannot forge
// a line of the report.
func TestDiffTextEscapesHostileOutputs(t *testing.T) {
	t.Parallel()
	db, before, after := twoVersions(t)
	inv := runCLI(t, cliEnv{}, "diff", before, after, "--db", db)
	if inv.code != ExitOK {
		t.Fatalf("exit %d: %s", inv.code, inv.stderr)
	}
	out := inv.stdout
	if strings.ContainsAny(out, "\x1b\r\u202e") {
		t.Errorf("raw escape, carriage return or bidi override in the text output:\n%q", out)
	}
	if strings.Contains(out, "\nafter:  forged line") || strings.Contains(out, "\n    after:  forged") {
		t.Errorf("an output's newline forged a report line:\n%s", out)
	}
	want := `    after:  "\x1b[31mEVIL\x1b[0m\nafter:  forged line \u202eevil"`
	if !strings.Contains(out, want) {
		t.Errorf("the hostile output is not shown quoted and escaped (%s):\n%s", want, out)
	}
	// The version rows are padded to the longest name (dataset_file_hash).
	for _, re := range []string{`\n  spec_hash +CHANGED`, `\n  prompt_hash +CHANGED`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("text diff lacks %s:\n%s", re, out)
		}
	}
	for _, s := range []string{"target oa changed:", `model: "m" → "m2"`,
		"target added: fresh", "target removed: old", "added: c31, c32", "removed: c1, c2",
		"case c11, epoch 1: pass→fail", "case c12, epoch 1: fail→pass", `    before: "word-11"`} {
		if !strings.Contains(out, s) {
			t.Errorf("text diff lacks %q:\n%s", s, out)
		}
	}
	md := runCLI(t, cliEnv{}, "diff", before, after, "--db", db, "--format", "markdown")
	if md.code != ExitOK || strings.ContainsAny(md.stdout, "\x1b\u202e") || !strings.Contains(md.stdout, `\x1b[31mEVIL`) {
		t.Errorf("markdown: exit %d, raw escapes or the output missing:\n%q", md.code, md.stdout)
	}
}

func TestDiffUsage(t *testing.T) {
	t.Parallel()
	db, before, after := twoVersions(t)
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"diff", before, "--db", db}, ExitUsage, "accepts 2 arg"},
		{[]string{"diff", before, after, "--db", db, "--limit", "-1"}, ExitUsage, "--limit must be 0 or more"},
		{[]string{"diff", before, after, "--db", db, "--format", "html"}, ExitUsage, "formats are text, json, markdown"},
		{[]string{"diff", before, after, "--db", db, "--target", "nope"}, ExitErr, `target "nope" is in neither run`},
		{[]string{"diff", before, "nope", "--db", db}, ExitErr, "not found"},
	} {
		inv := runCLI(t, cliEnv{}, c.args...)
		if inv.code != c.code || !strings.Contains(inv.stderr, c.msg) {
			t.Errorf("%v: exit %d %q; want %d and %q", c.args[3:], inv.code, inv.stderr, c.code, c.msg)
		}
	}
	// --limit 0 lists no case but still counts them.
	inv := runCLI(t, cliEnv{}, "diff", before, after, "--db", db, "--limit", "0")
	if inv.code != ExitOK || strings.Contains(inv.stdout, "case c11") || !strings.Contains(inv.stdout, "1 pass→fail, 1 fail→pass") || !strings.Contains(inv.stdout, "… and 2 more") {
		t.Errorf("--limit 0: exit %d\n%s", inv.code, inv.stdout)
	}
}

// compare refuses runs on different dataset versions, naming both hashes,
// the cases added and removed, and the flag; --shared-cases compares the
// shared cases and says so; a changed scorer configuration is warned about.
func TestCompareRefusesDifferentDatasetVersions(t *testing.T) {
	t.Parallel()
	db, before, after := twoVersions(t)
	inv := runCLI(t, cliEnv{}, "compare", before, after, "--db", db)
	if inv.code != ExitErr || inv.stdout != "" {
		t.Fatalf("compare: exit %d, stdout %q; want 1 and nothing compared", inv.code, inv.stdout)
	}
	var hashes []string
	for _, id := range []string{before, after} {
		r := runCLI(t, cliEnv{}, "report", id, "--db", db, "--format", "json")
		var rep struct {
			Run struct {
				DatasetHash string `json:"dataset_hash"`
			}
		}
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, rep.Run.DatasetHash[:len("sha256:")+12])
	}
	for _, s := range append(hashes, "different dataset versions", "2 cases added", "2 cases removed", "--shared-cases", "28 cases") {
		if !strings.Contains(inv.stderr, s) {
			t.Errorf("refusal lacks %q: %s", s, inv.stderr)
		}
	}

	inv = runCLI(t, cliEnv{}, "compare", before, after, "--db", db, "--shared-cases", "--format", "json")
	if inv.code != ExitOK {
		t.Fatalf("--shared-cases: exit %d: %s", inv.code, inv.stderr)
	}
	var rc struct {
		Comparisons []struct {
			N      int
			Fixed  int `json:"a_only"`
			Broken int `json:"b_only"`
		}
		SharedCases *struct{ Shared, Added, Removed int } `json:"shared_cases"`
		Warnings    []string
	}
	if err := json.Unmarshal([]byte(inv.stdout), &rc); err != nil {
		t.Fatal(err)
	}
	if len(rc.Comparisons) != 1 || rc.Comparisons[0].N != 28 || rc.Comparisons[0].Fixed != 1 || rc.Comparisons[0].Broken != 1 {
		t.Errorf("comparisons %+v: want oa on the 28 shared cases, 1 fixed, 1 broken", rc.Comparisons)
	}
	if rc.SharedCases == nil || rc.SharedCases.Shared != 28 || rc.SharedCases.Added != 2 || rc.SharedCases.Removed != 2 {
		t.Errorf("shared_cases %+v", rc.SharedCases)
	}
	w := strings.Join(rc.Warnings, "\n")
	if !strings.Contains(w, "only the 28 cases both measured are compared") || !strings.Contains(w, "two definitions of correct") {
		t.Errorf("warnings %q: want the shared-case note and the scorer warning", rc.Warnings)
	}
	text := runCLI(t, cliEnv{}, "compare", before, after, "--db", db, "--shared-cases")
	if text.code != ExitOK || !strings.Contains(text.stdout, "only the 28 cases both measured are compared (shared cases)") {
		t.Errorf("text --shared-cases: exit %d\n%s", text.code, text.stdout)
	}
	// drift refuses the same way, and pairs the shared cases when asked.
	dr := runCLI(t, cliEnv{}, "drift", before, after, "--db", db)
	if dr.code != ExitErr || !strings.Contains(dr.stderr, "--shared-cases") {
		t.Errorf("drift on different datasets: exit %d %s", dr.code, dr.stderr)
	}
	dj, _ := runDriftJSON(t, before, after, "--db", db, "--shared-cases")
	if len(dj.Targets) != 1 || dj.Targets[0].Paired != 28 || !dj.Targets[0].Fingerprints.Changed {
		t.Errorf("drift --shared-cases: %+v; want oa on 28 pairs, model changed m → m2", dj.Targets)
	}
}
