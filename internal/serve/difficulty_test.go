package serve_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// ratedRun stores a run of the fixture's store whose spec reads file (in
// the fixture's directory, written with content) with the difficulty
// section d and the dataset tags tags; its cases are ids, one result
// each. It returns the run and the file's path.
func ratedRun(t *testing.T, fx *labelFixture, runID, file, content string, d *spec.Difficulty, tags []spec.Tag, ids []string) (*record.Run, string) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(fx.dir, file)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	sp := &spec.Spec{Name: "rated", Dir: fx.dir, File: filepath.Join(fx.dir, "assay.yaml"),
		Dataset:    spec.Dataset{Path: file, ID: "id", Tags: tags},
		Scorers:    []spec.Scorer{{Name: "exact", Type: "exact", Primary: true}},
		Difficulty: d,
	}
	cfg, err := json.Marshal(sp)
	if err != nil {
		t.Fatal(err)
	}
	run := *fx.run
	run.ID, run.Config, run.Cases = runID, cfg, len(ids)
	if err := fx.st.CreateRun(ctx, &run); err != nil {
		t.Fatal(err)
	}
	// The tags the run recorded, as a run reads them: the declared tags'
	// fields.
	recorded := map[string]map[string]string{}
	for l := range strings.SplitSeq(content, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(l), &rec) != nil {
			continue
		}
		id := dataset.Stringify(rec["id"])
		for _, tg := range tags {
			if v, ok := rec[tg.Expr]; ok && v != nil {
				if recorded[id] == nil {
					recorded[id] = map[string]string{}
				}
				recorded[id][tg.Key] = dataset.Stringify(v)
			}
		}
	}
	var cases []record.Case
	var results []record.Result
	var scores []record.Score
	for i, id := range ids {
		cases = append(cases, record.Case{RunID: run.ID, ID: id, Line: i + 1, Tags: recorded[id]})
		results = append(results, record.Result{RunID: run.ID, CaseID: id, Target: targetB, Epoch: 1, Raw: "out"})
		scores = append(scores, record.Score{RunID: run.ID, Scoring: 1, CaseID: id, Target: targetB, Epoch: 1, Scorer: "exact", Primary: true, Shape: "silent"})
	}
	if err := fx.st.PutCases(ctx, cases); err != nil {
		t.Fatal(err)
	}
	if err := fx.st.PutResults(ctx, results, scores); err != nil {
		t.Fatal(err)
	}
	return &run, path
}

// version is the dataset's content hash as a run records it.
func version(t *testing.T, fx *labelFixture, file string) string {
	t.Helper()
	info, err := dataset.Scan(&spec.Spec{Dir: fx.dir, Dataset: spec.Dataset{Path: file, Format: "jsonl", ID: "id"}})
	if err != nil {
		t.Fatal(err)
	}
	return info.Hash
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// A case whose line lacks the difficulty field gets the rating form with
// the spec's levels as buttons; its POST writes the level into that line
// only (a new dataset version), and is refused without the CSRF token,
// for a value that is not a level, and once the line has a rating.
func TestRateDifficultyLevels(t *testing.T) {
	t.Parallel()
	fx := newLabelFixture(t)
	levels := []string{"easy", "medium", `very <b>hard</b>`}
	content := "{\"id\":\"c01\",\"q\":\"1\",\"level\":\"easy\"}\n{\"id\":\"p1\",\"q\":\"q <b>2</b>\"}\r\n{\"id\":\"n1\",\"q\":\"3\",\"level\":null}\n{\"id\":\"c04\",\"q\":\"4\"}"
	_, path := ratedRun(t, fx, "run-rated", "rated.jsonl", content, &spec.Difficulty{Tag: "tier", Levels: levels},
		[]spec.Tag{{Key: "tier", Expr: "level"}}, []string{"c01", "p1", "n1", "c04"})
	c := newClient(t, fx.srv)

	// The run page links the rating queue.
	if _, body := c.get("/runs/run-rated"); !strings.Contains(body, `href="/runs/run-rated/difficulty" id="rate-difficulty-link"`) {
		t.Errorf("the run page has no link to the rating queue")
	}
	if _, body := c.get("/runs/" + fx.run.ID); strings.Contains(body, "rate-difficulty-link") {
		t.Errorf("a run whose spec names no difficulty tag links a rating queue")
	}

	// Rated in the file: shown, with its level; no form.
	code, body := c.get("/runs/run-rated/cases/c01")
	if code != http.StatusOK || !strings.Contains(body, `<strong>easy</strong> <span class="muted">level 1 of 3, easiest first</span>`) || strings.Contains(body, `id="rate-difficulty"`) {
		t.Errorf("a rated case: %d\n%.3000s", code, body)
	}
	// Null in the file: no form, and why.
	if _, body := c.get("/runs/run-rated/cases/n1"); strings.Contains(body, `id="rate-difficulty"`) || !strings.Contains(body, "holds &#34;level&#34; as null: edit the file to rate it") {
		t.Errorf("a null rating: form shown or no note:\n%.3000s", body)
	}
	before := fileSum(t, path)
	code, body = c.get("/runs/run-rated/cases/p1")
	if code != http.StatusOK || !strings.Contains(body, `action="/runs/run-rated/cases/p1/difficulty" id="rate-difficulty"`) {
		t.Fatalf("the unrated case's page: %d, no form:\n%.3000s", code, body)
	}
	// Beside the form, the case as its line holds it now, escaped.
	if !strings.Contains(body, `<div class="rate-fields"><h4 class="field-name">id</h4><pre class="field">p1</pre><h4 class="field-name">q</h4><pre class="field">q &lt;b&gt;2&lt;/b&gt;</pre></div>`) {
		t.Errorf("the form does not show the case's fields:\n%.3000s", body)
	}
	buttons := regexp.MustCompile(`<button type="submit" name="difficulty" value="([^"]*)" class="level">([^<]*(?:<[^/][^<]*)*)</button>`).FindAllStringSubmatch(body, -1)
	var got []string
	for _, b := range buttons {
		got = append(got, html.UnescapeString(b[1]))
	}
	if !slices.Equal(got, levels) || strings.Contains(body, "<b>hard</b>") {
		t.Errorf("level buttons %q, want %q, escaped", got, levels)
	}
	if fileSum(t, path) != before {
		t.Fatal("a GET changed the dataset file")
	}

	v0 := version(t, fx, "rated.jsonl")
	// Without the CSRF token: refused, nothing written.
	resp, err := c.hc.PostForm(c.base+"/runs/run-rated/cases/p1/difficulty", url.Values{"difficulty": {"easy"}})
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := c.read(resp); code != http.StatusForbidden {
		t.Errorf("POST without CSRF: %d, want 403", code)
	}
	// A value that is not a level: refused with the levels.
	for _, bad := range []struct{ value, want string }{
		{"hard", `"hard" is not a level of difficulty tag "tier": rate with one of easy, medium, very <b>hard</b> (the spec's difficulty.levels, easiest first)`},
		{"Easy", `"Easy" is not a level of difficulty tag "tier": rate with one of easy, medium, very <b>hard</b> (the spec's difficulty.levels, easiest first)`},
		{"", `the rating is empty: choose one of easy, medium, very <b>hard</b>`},
		{strings.Repeat("x", 201), `the rating is longer than 200 bytes`},
	} {
		code, body := c.post("/runs/run-rated/cases/p1/difficulty", url.Values{"difficulty": {bad.value}})
		if code != http.StatusBadRequest || body != bad.want+"\n" {
			t.Errorf("rating %.20q: %d %q\nwant 400 %q", bad.value, code, body, bad.want)
		}
	}
	if fileSum(t, path) != before {
		t.Fatal("a refused POST changed the dataset file")
	}

	code, body = c.post("/runs/run-rated/cases/p1/difficulty", url.Values{"difficulty": {levels[2]}})
	if code != http.StatusOK || !strings.Contains(body, `id="difficulty-set"`) || !strings.Contains(body, "at line 2 of <code>rated.jsonl</code>") || !strings.Contains(body, "it is a new version") {
		t.Fatalf("rate: %d\n%.3000s", code, body)
	}
	if strings.Contains(body, "<b>") {
		t.Errorf("the record or the level is shown unescaped")
	}
	after, _ := os.ReadFile(path)
	lines := bytes.Split([]byte(content), []byte("\n"))
	lines[1] = []byte("{\"id\":\"p1\",\"q\":\"q <b>2</b>\",\"level\":\"very <b>hard</b>\"}\r")
	if want := bytes.Join(lines, []byte("\n")); !bytes.Equal(after, want) {
		t.Errorf("file:\n%q\nwant\n%q", after, want)
	}
	if v1 := version(t, fx, "rated.jsonl"); v1 == v0 {
		t.Errorf("the dataset's version did not change: %s", v1)
	}

	// A second rating is refused: the first is never overwritten.
	code, body = c.post("/runs/run-rated/cases/p1/difficulty", url.Values{"difficulty": {"easy"}})
	want := path + `:2: case "p1" already has "level" = "very \u003cb\u003ehard\u003c/b\u003e": the case already has the field, never overwritten; edit the file to change it (another person may have rated it: reload the case's page)` + "\n"
	if code != http.StatusBadRequest || body != want {
		t.Errorf("second POST: %d %q\nwant 400 %q", code, body, want)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, after) {
		t.Errorf("the refused second POST changed the file")
	}
	// The page shows the rating now, said to be newer than the run.
	_, body = c.get("/runs/run-rated/cases/p1")
	if strings.Contains(body, `id="rate-difficulty"`) || !strings.Contains(body, "<strong>very &lt;b&gt;hard&lt;/b&gt;</strong> <span class=\"muted\">level 3 of 3") || !strings.Contains(body, "rated in the dataset file since this run") {
		t.Errorf("after rating:\n%.3000s", body)
	}
	// A case the file no longer holds is not found.
	if code, _ := c.post("/runs/run-rated/cases/gone/difficulty", url.Values{"difficulty": {"easy"}}); code != http.StatusNotFound {
		t.Errorf("rating a case not in the file: %d, want 404", code)
	}
}

// A numeric scale (no levels; the tag is a field of that name): a number
// input; ratings are written as JSON numbers, and what is not a finite
// number is refused.
func TestRateDifficultyNumeric(t *testing.T) {
	t.Parallel()
	fx := newLabelFixture(t)
	content := "{\"id\":\"a\",\"steps\":2}\n{\"id\":\"b\"}\n{\"id\":\"c\"}\n"
	ratedRun(t, fx, "run-steps", "steps.jsonl", content, &spec.Difficulty{Tag: "steps"}, nil, []string{"a", "b", "c"})
	c := newClient(t, fx.srv)
	// A field the run does not record as a tag: read from the file.
	if _, body := c.get("/runs/run-steps/cases/a"); !strings.Contains(body, `Difficulty (<code>steps</code>): <strong>2</strong></p>`) || strings.Contains(body, `id="rate-difficulty"`) {
		t.Errorf("a rated case on a numeric scale:\n%.3000s", body)
	}
	_, body := c.get("/runs/run-steps/cases/b")
	if !strings.Contains(body, `<input type="number" name="difficulty" step="any" required>`) || strings.Contains(body, `class="level"`) {
		t.Fatalf("numeric form:\n%.3000s", body)
	}
	for _, bad := range []string{"abc", "NaN", "Inf", "1e999", "2 3"} {
		code, body := c.post("/runs/run-steps/cases/b/difficulty", url.Values{"difficulty": {bad}})
		want := fmt.Sprintf("%q is not a number: the spec gives difficulty tag \"steps\" no levels, so a rating is a number such as 3 or 2.5 (to rate with named levels, list them easiest first in difficulty.levels)\n", bad)
		if code != http.StatusBadRequest || body != want {
			t.Errorf("rating %q: %d %q\nwant %q", bad, code, body, want)
		}
	}
	if code, body := c.post("/runs/run-steps/cases/b/difficulty", url.Values{"difficulty": {" 2.50 "}}); code != http.StatusOK {
		t.Fatalf("rate 2.50: %d %s", code, body)
	}
	if code, body := c.post("/runs/run-steps/cases/c/difficulty", url.Values{"difficulty": {"-1e3"}}); code != http.StatusOK {
		t.Fatalf("rate -1e3: %d %s", code, body)
	}
	got, _ := os.ReadFile(filepath.Join(fx.dir, "steps.jsonl"))
	if want := "{\"id\":\"a\",\"steps\":2}\n{\"id\":\"b\",\"steps\":2.5}\n{\"id\":\"c\",\"steps\":-1000}\n"; string(got) != want {
		t.Errorf("file %q, want %q", got, want)
	}
	_, body = c.get("/runs/run-steps/difficulty")
	for _, want := range []string{`<span id="rated">3</span> of 3 cases rated`, `<span id="unrated">0</span> unrated`, `<td>-1000</td><td class="num">1</td>`, `<td>2</td><td class="num">1</td>`, `<td>2.5</td><td class="num">1</td>`, `id="all-rated"`} {
		if !strings.Contains(body, want) {
			t.Errorf("queue page lacks %q:\n%.4000s", want, body)
		}
	}
}

// sampleIDs are the case IDs the rating queue lists, in order.
func sampleIDs(t *testing.T, body string) []string {
	t.Helper()
	i := strings.Index(body, `<ol id="sample">`)
	if i < 0 {
		return nil
	}
	var out []string
	for _, m := range regexp.MustCompile(`<li><a href="[^"]*">([^<]*)</a>`).FindAllStringSubmatch(body[i:], -1) {
		out = append(out, html.UnescapeString(m[1]))
	}
	return out
}

// The rating queue: a seeded sample of unrated cases (?n=, default 50, at
// most 200), counts and the distribution of the ratings so far; rating a
// sampled case takes it out and keeps the others; bad parameters are
// refused; its GETs never write the file.
func TestDifficultyQueue(t *testing.T) {
	t.Parallel()
	fx := newLabelFixture(t)
	var data strings.Builder
	var ids []string
	for i := range 260 {
		id := fmt.Sprintf("k%03d", i)
		if i == 7 {
			id = `k<script>window.__pwned=1</script>`
		}
		ids = append(ids, id)
		row := map[string]any{"id": id, "q": i}
		switch {
		case i < 12:
			row["tier"] = []string{"low", "high", "low", "weird <i>"}[i%4]
		case i == 12:
			row["tier"] = nil
		}
		b, _ := json.Marshal(row)
		data.Write(b)
		data.WriteByte('\n')
	}
	// k259 is in the run but no longer in the file.
	content := strings.TrimSuffix(data.String(), `{"id":"k259","q":259}`+"\n")
	_, path := ratedRun(t, fx, "run-queue", "queue.jsonl", content, &spec.Difficulty{Tag: "tier", Levels: []string{"low", "mid", "high"}}, nil, ids)
	c := newClient(t, fx.srv)
	before := fileSum(t, path)
	code, body := c.get("/runs/run-queue/difficulty")
	if code != http.StatusOK {
		t.Fatalf("queue: %d %s", code, body)
	}
	for _, want := range []string{
		`<span id="rated">12</span> of 260 cases rated`, `<span id="unrated">246</span> unrated`, `1 with the field null`, `1 no longer in the file`,
		`<td>low</td><td class="num">6</td>`, `<td>mid</td><td class="num">0</td>`, `<td>high</td><td class="num">3</td>`,
		`<code>weird &lt;i&gt;</code> (3)`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("queue page lacks %q", want)
		}
	}
	if strings.Contains(body, "<script>window") || strings.Contains(body, "<i>") {
		t.Errorf("a case ID or a rating is shown unescaped")
	}
	s1 := sampleIDs(t, body)
	if len(s1) != 50 {
		t.Fatalf("default sample: %d cases, want 50", len(s1))
	}
	unrated := map[string]bool{}
	for i := 13; i < 259; i++ {
		unrated[ids[i]] = true
	}
	seen := map[string]bool{}
	for _, id := range s1 {
		if !unrated[id] || seen[id] {
			t.Errorf("sampled %q: not an unrated case of the run, or twice", id)
		}
		seen[id] = true
	}
	if _, again := c.get("/runs/run-queue/difficulty?seed=1&n=50"); !slices.Equal(sampleIDs(t, again), s1) {
		t.Errorf("the same seed gave another sample")
	}
	_, other := c.get("/runs/run-queue/difficulty?seed=2")
	if s2 := sampleIDs(t, other); len(s2) != 50 || slices.Equal(s2, s1) {
		t.Errorf("seed 2 gave the same sample")
	}
	_, all := c.get("/runs/run-queue/difficulty?n=200")
	s200 := sampleIDs(t, all)
	if len(s200) != 200 || !slices.Equal(s200[:50], s1) {
		t.Errorf("n=200: %d cases; the first 50 are the default sample: %v", len(s200), len(s200) >= 50 && slices.Equal(s200[:50], s1))
	}
	for q, want := range map[string]string{
		"n=0":     `n="0": the sample's size is a whole number from 1 to 200 (50–100 rated cases characterise a workload)`,
		"n=201":   `n="201": the sample's size is a whole number from 1 to 200 (50–100 rated cases characterise a workload)`,
		"n=ten":   `n="ten": the sample's size is a whole number from 1 to 200 (50–100 rated cases characterise a workload)`,
		"seed=-1": `seed="-1": the seed is a whole number from 0 up`,
	} {
		if code, body := c.get("/runs/run-queue/difficulty?" + q); code != http.StatusBadRequest || body != want+"\n" {
			t.Errorf("?%s: %d %q, want 400 %q", q, code, body, want)
		}
	}
	if fileSum(t, path) != before {
		t.Fatal("the queue's GETs changed the dataset file")
	}

	// The sample's links open the case with the queue's seed and size;
	// rating from there names the next case of the sample.
	first := regexp.MustCompile(`<ol id="sample"><li><a href="([^"]*)"`).FindStringSubmatch(body)
	if first == nil {
		t.Fatal("no link in the sample")
	}
	link := html.UnescapeString(first[1])
	if want := "/runs/run-queue/cases/" + url.PathEscape(s1[0]) + "?seed=1&n=50#difficulty"; link != want {
		t.Errorf("first link %q, want %q", link, want)
	}
	_, page := c.get(strings.TrimSuffix(link, "#difficulty"))
	if !strings.Contains(page, `<input type="hidden" name="seed" value="1"><input type="hidden" name="n" value="50">`) {
		t.Fatalf("the case page opened from the queue does not carry it:\n%.3000s", page)
	}
	code, body = c.post("/runs/run-queue/cases/"+url.PathEscape(s1[0])+"/difficulty", url.Values{"difficulty": {"mid"}, "seed": {"1"}, "n": {"50"}})
	if code != http.StatusOK || !strings.Contains(body, "Rate the next case of the sample: "+html.EscapeString(s1[1])+"</a> · 245 unrated left") {
		t.Errorf("after rating from the queue: %d\n%.3000s", code, body)
	}
	_, body = c.get("/runs/run-queue/difficulty")
	s1b := sampleIDs(t, body)
	if len(s1b) != 50 || !slices.Equal(s1b[:49], s1[1:]) || s1b[49] != s200[50] {
		t.Errorf("after rating the first: the others stay and the 51st comes in:\n%v\n%v", s1, s1b)
	}
	if !strings.Contains(body, `<td>mid</td><td class="num">1</td>`) || !strings.Contains(body, `<span id="rated">13</span>`) {
		t.Errorf("the rating is not counted")
	}
}

// Runs whose cases cannot be rated say why on the queue page, offer no
// form and refuse a POST: no difficulty tag, a tag computed by an
// expression, a CSV dataset.
func TestDifficultyNotRatable(t *testing.T) {
	t.Parallel()
	fx := newLabelFixture(t)
	content := "{\"id\":\"a\",\"n\":2}\n"
	ratedRun(t, fx, "run-none", "none.jsonl", content, nil, nil, []string{"a"})
	ratedRun(t, fx, "run-cel", "cel.jsonl", content, &spec.Difficulty{Tag: "size"}, []spec.Tag{{Key: "size", Expr: "case.n > 1 ? 'big' : 'small'"}}, []string{"a"})
	ratedRun(t, fx, "run-csv", "set.csv", "id,n\na,2\n", &spec.Difficulty{Tag: "tier"}, nil, []string{"a"})
	c := newClient(t, fx.srv)
	for run, want := range map[string]string{
		"run-none": "run run-none&#39;s spec names no difficulty tag: add a difficulty: section",
		"run-cel":  "the difficulty tag &#34;size&#34; is computed by the expression dataset.tags.size, not read from one field",
		"run-csv":  "the dataset set.csv is CSV: ratings are written only into a JSONL file&#39;s lines",
	} {
		code, body := c.get("/runs/" + run + "/difficulty")
		if code != http.StatusOK || !strings.Contains(body, want) || strings.Contains(body, `id="sample"`) {
			t.Errorf("%s queue: %d, lacks %q:\n%.2000s", run, code, want, body)
		}
		if _, body := c.get("/runs/" + run + "/cases/a"); strings.Contains(body, `id="rate-difficulty"`) {
			t.Errorf("%s: the case page offers a rating form", run)
		}
		if code, _ := c.post("/runs/"+run+"/cases/a/difficulty", url.Values{"difficulty": {"3"}}); code != http.StatusBadRequest {
			t.Errorf("%s: POST %d, want 400", run, code)
		}
	}
	for _, f := range []string{"none.jsonl", "cel.jsonl"} {
		if b, _ := os.ReadFile(filepath.Join(fx.dir, f)); string(b) != content {
			t.Errorf("%s changed: %q", f, b)
		}
	}
}
