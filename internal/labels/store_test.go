package labels

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// plainReader is a store seen as a bare record.Reader: NewQueue cannot
// find the light streams on it and reads every result and score.
type plainReader struct{ record.Reader }

// lightOnly is a store whose full streams fail: NewQueue must sample it
// through ResultKeys and Verdicts alone.
type lightOnly struct{ store.Store }

var errFullStream = errors.New("the full stream was read")

func (lightOnly) Results(context.Context, string, func(record.Result) error) error {
	return errFullStream
}

func (lightOnly) Scores(context.Context, string, int, func(record.Score) error) error {
	return errFullStream
}

// storedRun fills a SQLite store with a run of 3 targets × 2 epochs over
// 150 cases whose lines are not in ID order, plus results of 4 case IDs
// with no stored case; every 7th result a failed call, some with tool
// calls; the judge's verdicts in scoring 1, overturned in a completed
// rescore (scoring 2) that left some results unscored by the judge
// (and where a second scorer, exact, fails every third result).
func storedRun(t *testing.T) *sqlite.DB {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.CreateRun(ctx, &record.Run{ID: "run", Spec: "s", Targets: []string{"a", "b", "c"}, Cases: 150, Epochs: 2,
		Status: record.StatusComplete, Started: time.Unix(1000, 0)}); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	var cases []record.Case
	for i, line := range rng.Perm(150) {
		tags := map[string]string{"lang": []string{"en", "de", "fr"}[i%3]}
		if i%11 == 0 {
			tags = nil
		}
		cases = append(cases, record.Case{RunID: "run", ID: fmt.Sprintf("case-%03d", i), Line: line + 1, Tags: tags})
	}
	if err := db.PutCases(ctx, cases); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 0, 154)
	for _, c := range cases {
		ids = append(ids, c.ID)
	}
	ids = append(ids, "orphan-1", "orphan-2", "orphan-3", "orphan-4")
	var rs []record.Result
	var s1, s2 []record.Score
	n := 0
	for _, id := range ids {
		for _, tg := range []string{"a", "b", "c"} {
			for e := 1; e <= 2; e++ {
				n++
				r := record.Result{RunID: "run", CaseID: id, Target: tg, Epoch: e, Raw: fmt.Sprintf("output %d of %s", n, id)}
				if n%5 == 0 {
					r.ToolCalls = []record.ToolCall{{Name: "lookup", Arguments: fmt.Sprintf(`{"n":%d}`, n)}}
				}
				if n%7 == 0 {
					r.Raw, r.ErrorKind, r.Error = "", "timeout", "deadline exceeded"
				}
				rs = append(rs, r)
				pass := rng.IntN(4) != 0
				s1 = append(s1,
					record.Score{RunID: "run", Scoring: 1, CaseID: id, Target: tg, Epoch: e, Scorer: "judge", Pass: !pass},
					record.Score{RunID: "run", Scoring: 1, CaseID: id, Target: tg, Epoch: e, Scorer: "exact", Primary: true, Pass: true})
				if n%13 != 0 {
					s2 = append(s2, record.Score{RunID: "run", Scoring: 2, CaseID: id, Target: tg, Epoch: e, Scorer: "judge", Pass: pass})
				}
				s2 = append(s2, record.Score{RunID: "run", Scoring: 2, CaseID: id, Target: tg, Epoch: e, Scorer: "exact", Primary: true, Pass: n%3 != 0})
			}
		}
	}
	// Stored in an order of their own, not the stream's.
	rng.Shuffle(len(rs), func(i, j int) { rs[i], rs[j] = rs[j], rs[i] })
	if err := db.PutResults(ctx, rs, s1); err != nil {
		t.Fatal(err)
	}
	scoring, err := db.ReserveScoring(ctx, "run")
	if err != nil || scoring != 2 {
		t.Fatalf("ReserveScoring = %d, %v; want 2", scoring, err)
	}
	if err := db.PutScores(ctx, s2); err != nil {
		t.Fatal(err)
	}
	if err := db.CompleteScoring(ctx, "run", 2); err != nil {
		t.Fatal(err)
	}
	return db
}

// A store samples through its light streams (ResultKeys, Verdicts) the
// very queue a plain record.Reader over it samples through Results and
// Scores: same items at the same positions, weights, strata and output
// hashes, for every kind of queue.
func TestNewQueueStoreSameAsReader(t *testing.T) {
	ctx := context.Background()
	db := storedRun(t)
	run, err := db.GetRun(ctx, "run")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := any(plainReader{db}).(keyReader); ok {
		t.Fatal("plainReader has the light streams: the test would compare the store with itself")
	}
	for _, q := range []QueueSpec{
		{Size: 40, Seed: 1, Judge: "judge", Slices: []string{"lang"}},
		{Size: 40, Seed: 2, Judge: "judge", Slices: []string{"lang"}},
		{Size: 25, Seed: 3},
		{Size: 5, Seed: 4, Judge: "judge", Slices: []string{"lang"}}, // fewer items than strata
		{Size: 2000, Seed: 5, Judge: "judge"},                        // the whole run
		{Size: 30, Seed: 6, Judge: "exact"},
	} {
		q.Name = fmt.Sprintf("q%d", q.Seed)
		t.Run(q.Name, func(t *testing.T) {
			now := time.Unix(2000, 0)
			want, err := NewQueue(ctx, plainReader{db}, run, q, now)
			if err != nil {
				t.Fatalf("NewQueue(plain reader): %v", err)
			}
			got, err := NewQueue(ctx, lightOnly{db}, run, q, now)
			if err != nil {
				t.Fatalf("NewQueue(store): %v", err)
			}
			if len(want.Items) != min(q.Size, 154*6-154*6/7) {
				t.Errorf("the plain reader's queue has %d items", len(want.Items))
			}
			if !reflect.DeepEqual(got, want) {
				for i := range min(len(got.Items), len(want.Items)) {
					if got.Items[i] != want.Items[i] {
						t.Errorf("item %d:\n store  %+v\n reader %+v", i, got.Items[i], want.Items[i])
					}
				}
				t.Fatalf("the store's queue differs from the reader's: %d items vs %d", len(got.Items), len(want.Items))
			}
			// Every hash is the drawn output's.
			for _, it := range got.Items {
				res, err := db.Result(ctx, "run", it.Key())
				if err != nil {
					t.Fatal(err)
				}
				if res.ErrorKind != "" {
					t.Errorf("item %d is a failed call", it.Position)
				}
				if h := record.LabelOutputHash(res); it.OutputHash != h {
					t.Errorf("item %d's hash is %s; its output's is %s", it.Position, it.OutputHash, h)
				}
			}
		})
	}
}

// A queue of the whole run names each result's judge verdict in the
// latest scoring (or unscored) in its stratum, whether the run records
// its epochs or not (a verdict on an epoch beyond Run.Epochs is held
// apart).
func TestNewQueueStoreVerdicts(t *testing.T) {
	ctx := context.Background()
	db := storedRun(t)
	want := map[record.Key]string{}
	if err := db.Scores(ctx, "run", 2, func(s record.Score) error {
		if s.Scorer == "judge" {
			want[record.Key{CaseID: s.CaseID, Target: s.Target, Epoch: s.Epoch}] = map[bool]string{true: "pass", false: "fail"}[s.Pass]
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, epochs := range []int{2, 1, 0} {
		run := &record.Run{ID: "run", Epochs: epochs}
		q, err := NewQueue(ctx, db, run, QueueSpec{Name: "all", Size: 2000, Seed: 9, Judge: "judge"}, time.Unix(2000, 0))
		if err != nil {
			t.Fatal(err)
		}
		if len(q.Items) != 154*6-154*6/7 {
			t.Errorf("epochs %d: %d items; want every output", epochs, len(q.Items))
		}
		unscored := 0
		for _, it := range q.Items {
			v, ok := want[it.Key()]
			if !ok {
				v = "unscored"
				unscored++
			}
			if w := "target=" + it.Target + ", judge=" + v; it.Stratum != w {
				t.Errorf("epochs %d: %s/%s/%d is in stratum %q; want %q", epochs, it.CaseID, it.Target, it.Epoch, it.Stratum, w)
			}
		}
		if unscored == 0 {
			t.Errorf("epochs %d: no unscored item: the test checks nothing of them", epochs)
		}
	}
}
