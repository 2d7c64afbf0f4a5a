package labels

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
)

// fakeRun is a run's records in memory: what NewQueue reads.
type fakeRun struct {
	record.Reader // nil: a method the tests do not expect panics
	results       []record.Result
	scores        []record.Score
	cases         []record.Case
}

func (f *fakeRun) LatestScoring(ctx context.Context, runID string) (int, error) {
	if len(f.scores) == 0 {
		return 0, nil
	}
	return 2, nil
}

func (f *fakeRun) ScorerNames(ctx context.Context, runID string, scoring int) ([]string, error) {
	var names []string
	for _, s := range f.scores {
		if s.Scoring == scoring && !slices.Contains(names, s.Scorer) {
			names = append(names, s.Scorer)
		}
	}
	slices.Sort(names)
	return names, nil
}

func (f *fakeRun) Scores(ctx context.Context, runID string, scoring int, fn func(record.Score) error) error {
	for _, s := range f.scores {
		if s.Scoring == scoring {
			if err := fn(s); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *fakeRun) Cases(ctx context.Context, runID string, fn func(record.Case) error) error {
	for _, c := range f.cases {
		if err := fn(c); err != nil {
			return err
		}
	}
	return nil
}

func (f *fakeRun) Results(ctx context.Context, runID string, fn func(record.Result) error) error {
	for _, r := range f.results {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

func (f *fakeRun) Result(ctx context.Context, runID string, k record.Key) (*record.Result, error) {
	for i := range f.results {
		if f.results[i].Key() == k {
			return &f.results[i], nil
		}
	}
	return nil, record.ErrNotFound
}

// cell is a stratum to fill: n results of target with the judge's verdict
// (pass, fail, or "" for none) on cases tagged lang.
type cell struct {
	target, verdict, lang string
	n                     int
}

// build makes a run with one result per case of each cell; the judge
// "judge" scores in scoring 2 (and an older verdict in scoring 1 says the
// opposite, which must not be read).
func build(cells ...cell) *fakeRun {
	f := &fakeRun{}
	i := 0
	for _, c := range cells {
		for range c.n {
			id := fmt.Sprintf("case-%05d", i)
			i++
			r := record.Result{RunID: "run", CaseID: id, Target: c.target, Epoch: 1, Raw: "output " + id}
			f.results = append(f.results, r)
			f.cases = append(f.cases, record.Case{ID: id, Tags: map[string]string{"lang": c.lang}})
			if c.verdict != "" {
				pass := c.verdict == "pass"
				f.scores = append(f.scores,
					record.Score{Scoring: 2, CaseID: id, Target: c.target, Epoch: 1, Scorer: "judge", Pass: pass},
					record.Score{Scoring: 1, CaseID: id, Target: c.target, Epoch: 1, Scorer: "judge", Pass: !pass},
					record.Score{Scoring: 2, CaseID: id, Target: c.target, Epoch: 1, Scorer: "exact", Pass: true})
			}
		}
	}
	return f
}

var run = &record.Run{ID: "run"}

func mustQueue(t *testing.T, f *fakeRun, q QueueSpec) *record.Queue {
	t.Helper()
	if q.Name == "" {
		q.Name = "q"
	}
	got, err := NewQueue(context.Background(), f, run, q, time.Unix(1000, 0))
	if err != nil {
		t.Fatalf("NewQueue(%+v): %v", q, err)
	}
	return got
}

// counts is the number of items per stratum name.
func counts(q *record.Queue) map[string]int {
	m := map[string]int{}
	for _, it := range q.Items {
		m[it.Stratum]++
	}
	return m
}

// With every proportional share a whole number, each stratum gets exactly
// its share n·Nh/N, and each item's weight is Nh / drawn.
func TestNewQueueProportional(t *testing.T) {
	f := build(cell{"a", "pass", "en", 50}, cell{"a", "fail", "en", 10}, cell{"b", "pass", "en", 15}, cell{"b", "fail", "en", 15}, cell{"c", "pass", "en", 10})
	q := mustQueue(t, f, QueueSpec{Size: 20, Seed: 7, Judge: "judge"})
	want := map[string]int{ // 20 × Nh / 100
		"target=a, judge=pass": 10, "target=a, judge=fail": 2,
		"target=b, judge=pass": 3, "target=b, judge=fail": 3, "target=c, judge=pass": 2,
	}
	if got := counts(q); !reflect.DeepEqual(got, want) {
		t.Errorf("items per stratum %v; want %v", got, want)
	}
	for _, it := range q.Items {
		if it.Weight != 5 { // Nh / drawn = 100/20 in every stratum
			t.Errorf("item %s/%s in %s has weight %v; want 5", it.CaseID, it.Target, it.Stratum, it.Weight)
		}
	}
	if !reflect.DeepEqual(q.Strata, []string{"target", "judge"}) {
		t.Errorf("Strata = %q; want target, judge", q.Strata)
	}
	if q.RunID != "run" || q.Name != "q" || q.Judge != "judge" || q.Size != 20 || q.Seed != 7 || !q.Created.Equal(time.Unix(1000, 0)) {
		t.Errorf("queue header %+v", *q)
	}
	checkItems(t, f, q)
}

// checkItems: positions 0..n-1 in order, no result twice, the judge's
// verdict in the stratum is the verdict of the latest scoring, and each
// output hash is the result's LabelOutputHash.
func checkItems(t *testing.T, f *fakeRun, q *record.Queue) {
	t.Helper()
	seen := map[record.Key]bool{}
	for i, it := range q.Items {
		if it.Position != i {
			t.Errorf("item %d has position %d", i, it.Position)
		}
		if seen[it.Key()] {
			t.Errorf("%v is in the queue twice", it.Key())
		}
		seen[it.Key()] = true
		r, _ := f.Result(context.Background(), "run", it.Key())
		if r == nil {
			t.Fatalf("item %v is not a result of the run", it.Key())
		}
		if r.ErrorKind != "" {
			t.Errorf("item %v is a failed call", it.Key())
		}
		if h := record.LabelOutputHash(r); it.OutputHash != h {
			t.Errorf("item %v has output hash %q; want %q", it.Key(), it.OutputHash, h)
		}
		if !strings.HasPrefix(it.Stratum, "target="+it.Target) {
			t.Errorf("item %v of target %s is in stratum %q", it.Key(), it.Target, it.Stratum)
		}
		for _, s := range f.scores {
			if s.Scoring == 2 && s.Scorer == "judge" && s.CaseID == it.CaseID && s.Target == it.Target {
				want := map[bool]string{true: "judge=pass", false: "judge=fail"}[s.Pass]
				if q.Judge != "" && !strings.Contains(it.Stratum, want) {
					t.Errorf("item %v judged %v in the latest scoring is in stratum %q", it.Key(), s.Pass, it.Stratum)
				}
			}
		}
	}
}

// A stratum far smaller than its share of one still gets an item; the
// rest stay proportional, and weights follow each stratum's draw.
func TestNewQueueAtLeastOnePerStratum(t *testing.T) {
	f := build(cell{"a", "pass", "en", 990}, cell{"a", "fail", "en", 9}, cell{"b", "fail", "en", 1})
	q := mustQueue(t, f, QueueSpec{Size: 10, Seed: 1, Judge: "judge"})
	want := map[string]int{"target=a, judge=pass": 8, "target=a, judge=fail": 1, "target=b, judge=fail": 1}
	if got := counts(q); !reflect.DeepEqual(got, want) {
		t.Errorf("items per stratum %v; want %v", got, want)
	}
	wantW := map[string]float64{"target=a, judge=pass": 990.0 / 8, "target=a, judge=fail": 9, "target=b, judge=fail": 1}
	for _, it := range q.Items {
		if it.Weight != wantW[it.Stratum] {
			t.Errorf("weight %v in %s; want %v", it.Weight, it.Stratum, wantW[it.Stratum])
		}
	}
	checkItems(t, f, q)

	// Fewer items than strata: the largest strata get one each.
	q = mustQueue(t, f, QueueSpec{Size: 2, Seed: 1, Judge: "judge"})
	want = map[string]int{"target=a, judge=pass": 1, "target=a, judge=fail": 1}
	if got := counts(q); !reflect.DeepEqual(got, want) {
		t.Errorf("size 2 over 3 strata: items per stratum %v; want %v", got, want)
	}
}

// Over many stratum sizes, the allocation adds up to n, never exceeds a
// stratum, gives every stratum one while n allows, and keeps every count
// within one of its proportional share when every share is at least one.
func TestNewQueueAllocationProperties(t *testing.T) {
	for trial := range 200 {
		var cells []cell
		total := 0
		h := 1 + trial%6
		for i := range h {
			n := 1 + (trial*7919+i*104729)%(40+trial)
			cells = append(cells, cell{fmt.Sprintf("t%d", i), "", "", n})
			total += n
		}
		size := 1 + (trial*31)%(total+5)
		f := build(cells...)
		q := mustQueue(t, f, QueueSpec{Size: size, Seed: uint64(trial)})
		n := min(size, total)
		if len(q.Items) != n {
			t.Fatalf("trial %d: %d items; want min(size %d, results %d)", trial, len(q.Items), size, total)
		}
		got := counts(q)
		allShares := true
		for _, c := range cells {
			if float64(n)*float64(c.n)/float64(total) < 1 {
				allShares = false
			}
		}
		for _, c := range cells {
			k := got["target="+c.target]
			share := float64(n) * float64(c.n) / float64(total)
			if k > c.n {
				t.Errorf("trial %d: %d drawn from a stratum of %d", trial, k, c.n)
			}
			if n >= h && k < 1 {
				t.Errorf("trial %d: stratum %s of %d got nothing with %d items over %d strata", trial, c.target, c.n, n, h)
			}
			if allShares && math.Abs(float64(k)-share) >= 1 {
				t.Errorf("trial %d: stratum %s of %d/%d got %d; its share is %.2f", trial, c.target, c.n, total, k, share)
			}
		}
	}
}

// A size at or above the run's outputs takes them all, each of weight 1.
func TestNewQueueSizeAboveRun(t *testing.T) {
	f := build(cell{"a", "", "", 7}, cell{"b", "", "", 3})
	q := mustQueue(t, f, QueueSpec{Size: 1000, Seed: 3})
	if len(q.Items) != 10 || q.Size != 1000 {
		t.Fatalf("%d items (size %d); want all 10 (size 1000 as asked)", len(q.Items), q.Size)
	}
	for _, it := range q.Items {
		if it.Weight != 1 {
			t.Errorf("weight %v; want 1 when a stratum is taken whole", it.Weight)
		}
	}
	checkItems(t, f, q)
}

// Failed calls have no output to judge: they are never drawn and count in
// no stratum's size.
func TestNewQueueLeavesOutFailedCalls(t *testing.T) {
	f := build(cell{"a", "", "", 20}, cell{"b", "", "", 20})
	for i := range f.results {
		if i%2 == 0 || f.results[i].Target == "b" && i < 35 {
			f.results[i].ErrorKind = "timeout"
		}
	}
	// Left: a has 10 (odd indexes), b has 3 (35..39 odd: 35, 37, 39).
	q := mustQueue(t, f, QueueSpec{Size: 100, Seed: 3})
	if got, want := counts(q), map[string]int{"target=a": 10, "target=b": 3}; !reflect.DeepEqual(got, want) {
		t.Errorf("items per stratum %v; want %v", got, want)
	}
	checkItems(t, f, q)

	for i := range f.results {
		f.results[i].ErrorKind = "rate_limit"
	}
	_, err := NewQueue(context.Background(), f, run, QueueSpec{Name: "q", Size: 5}, time.Time{})
	if want := "run run has no outputs to label: all 40 of its results are failed calls"; err == nil || err.Error() != want {
		t.Errorf("every call failed: %v; want %q", err, want)
	}
}

// The same seed draws the same queue in the same order; another seed draws
// another sample or order.
func TestNewQueueSeeded(t *testing.T) {
	f := build(cell{"a", "pass", "en", 40}, cell{"a", "fail", "fr", 40}, cell{"b", "pass", "en", 40}, cell{"b", "fail", "fr", 40})
	spec := QueueSpec{Size: 30, Seed: 42, Judge: "judge", Slices: []string{"lang"}}
	a, b := mustQueue(t, f, spec), mustQueue(t, f, spec)
	if !reflect.DeepEqual(a.Items, b.Items) {
		t.Error("the same seed made two different queues")
	}
	spec.Seed = 43
	c := mustQueue(t, f, spec)
	if reflect.DeepEqual(a.Items, c.Items) {
		t.Error("seeds 42 and 43 made the same queue")
	}
	if !reflect.DeepEqual(counts(a), counts(c)) {
		t.Errorf("the seed changed the allocation: %v vs %v", counts(a), counts(c))
	}
	// Different seeds draw different items, not only another order.
	keys := func(q *record.Queue) []string {
		var ks []string
		for _, it := range q.Items {
			ks = append(ks, it.CaseID+"/"+it.Target)
		}
		slices.Sort(ks)
		return ks
	}
	if slices.Equal(keys(a), keys(c)) {
		t.Error("seeds 42 and 43 drew the same items")
	}
}

// Positions interleave targets and verdicts: the shuffled order is not the
// strata one after another. Over 20 seeds, 20 items of each of two targets
// never sit in runs longer than 10, and switch target at least 10 times.
func TestNewQueueInterleaves(t *testing.T) {
	f := build(cell{"a", "pass", "", 50}, cell{"b", "pass", "", 50})
	for seed := range uint64(20) {
		q := mustQueue(t, f, QueueSpec{Size: 40, Seed: seed, Judge: "judge"})
		switches, longest, cur := 0, 1, 1
		for i := 1; i < len(q.Items); i++ {
			if q.Items[i].Target != q.Items[i-1].Target {
				switches++
				cur = 1
			} else {
				cur++
			}
			longest = max(longest, cur)
		}
		if switches < 10 || longest > 10 {
			t.Errorf("seed %d: %d target switches, longest run %d: the targets are not shuffled together", seed, switches, longest)
		}
	}
}

// Slices stratify by a case tag: every target × judge × tag value cell
// that has results gets an item; a case without the tag has the value "".
func TestNewQueueSlices(t *testing.T) {
	f := build(cell{"a", "pass", "en", 30}, cell{"a", "pass", "fr", 3}, cell{"a", "fail", "de", 1},
		cell{"b", "pass", "en", 30}, cell{"b", "fail", "", 2})
	q := mustQueue(t, f, QueueSpec{Size: 10, Seed: 9, Judge: "judge", Slices: []string{"lang"}})
	want := map[string]int{
		"target=a, judge=pass, lang=en": 4, "target=a, judge=pass, lang=fr": 1, "target=a, judge=fail, lang=de": 1,
		"target=b, judge=pass, lang=en": 3, "target=b, judge=fail, lang=": 1,
	}
	got := counts(q)
	// 10 items over 5 strata: one each, then the 5 left by shortfall from
	// the shares 10·Nh/66 = 4.55, 0.45, 0.15, 4.55, 0.30: a/en and b/en
	// get two more each (ties go to the first), then one to a/en.
	if !reflect.DeepEqual(got, want) {
		t.Errorf("items per stratum %v; want %v", got, want)
	}
	if !reflect.DeepEqual(q.Strata, []string{"target", "judge", "slice:lang"}) {
		t.Errorf("Strata = %q", q.Strata)
	}
	checkItems(t, f, q)
}

// A result the judge did not score is its own stratum, "unscored".
func TestNewQueueUnscored(t *testing.T) {
	f := build(cell{"a", "pass", "", 5}, cell{"a", "", "", 5})
	q := mustQueue(t, f, QueueSpec{Size: 10, Seed: 1, Judge: "judge"})
	if got, want := counts(q), map[string]int{"target=a, judge=pass": 5, "target=a, judge=unscored": 5}; !reflect.DeepEqual(got, want) {
		t.Errorf("items per stratum %v; want %v", got, want)
	}
}

func TestNewQueueErrors(t *testing.T) {
	f := build(cell{"a", "pass", "en", 5})
	noScores := build(cell{"a", "", "", 5})
	noTags := build(cell{"a", "", "", 5})
	for i := range noTags.cases {
		noTags.cases[i].Tags = nil
	}
	for _, tc := range []struct {
		name string
		f    *fakeRun
		q    QueueSpec
		want string
	}{
		{"no name", f, QueueSpec{Name: " ", Size: 5}, "a labeling queue needs a name"},
		{"size 0", f, QueueSpec{Name: "q"}, "the queue's size is 0; give the number of outputs to label (at least 1)"},
		{"empty run", &fakeRun{}, QueueSpec{Name: "q", Size: 5}, "run run has no results to label"},
		{"unknown judge", f, QueueSpec{Name: "q", Size: 5, Judge: "judeg"}, `run run has no scorer "judeg" in its latest scoring (2); its scorers are: exact, judge`},
		{"judge without scores", noScores, QueueSpec{Name: "q", Size: 5, Judge: "judge"}, `run run has no scores, so no judge "judge" to stratify by`},
		{"unknown slice", f, QueueSpec{Name: "q", Size: 5, Slices: []string{"language"}}, `no case of run run has a tag "language"; its cases' tags are: lang`},
		{"no tags", noTags, QueueSpec{Name: "q", Size: 5, Slices: []string{"lang"}}, `no case of run run has a tag "lang": its cases have no tags to slice by`},
		{"slice twice", f, QueueSpec{Name: "q", Size: 5, Slices: []string{"lang", "lang"}}, `slice "lang" is given twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewQueue(context.Background(), tc.f, run, tc.q, time.Time{})
			if err == nil || err.Error() != tc.want {
				t.Errorf("NewQueue: %v\nwant: %s", err, tc.want)
			}
		})
	}
}

// A queue is named so that it can be reached: not empty, ".", "..", overlong
// or holding a control character (serve's address for "…/queues/.." would
// be cleaned away).
func TestCheckQueueName(t *testing.T) {
	for name, want := range map[string]string{
		"":                       "a labeling queue needs a name",
		"  ":                     "a labeling queue needs a name",
		".":                      `a labeling queue cannot be named "." (a web address drops it); use letters, digits and punctuation`,
		"..":                     `a labeling queue cannot be named ".." (a web address drops it); use letters, digits and punctuation`,
		"a\nb":                   `the queue's name "a\nb" holds a control character or is not UTF-8; use letters, digits and punctuation`,
		"bad\xff":                `the queue's name "bad\xff" holds a control character or is not UTF-8; use letters, digits and punctuation`,
		strings.Repeat("q", 101): "the queue's name is 101 bytes; at most 100",
	} {
		err := CheckQueueName(name)
		if err == nil || err.Error() != want {
			t.Errorf("CheckQueueName(%q) = %v, want %q", name, err, want)
		}
	}
	for _, ok := range []string{"first", "../<b>", "week 49 — triage", strings.Repeat("q", 100)} {
		if err := CheckQueueName(ok); err != nil {
			t.Errorf("CheckQueueName(%q): %v", ok, err)
		}
	}
}
