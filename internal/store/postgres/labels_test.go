package postgres

import (
	"context"
	"errors"
	"testing"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

// A run or sample ID that TEXT cannot hold (typed by a user: invalid
// UTF-8, a NUL byte) names nothing, as in the SQLite store, where the
// same readers find nothing; PostgreSQL would refuse the query instead.
func TestUnstorableIDsNameNothing(t *testing.T) {
	d := openTemp(t)
	ctx := context.Background()
	for _, id := range []string{"run-\xff", "run\x00"} {
		if _, err := d.Queue(ctx, id, "q"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Queue(%q): %v; want ErrNotFound", id, err)
		}
		if qs, err := d.Queues(ctx, id); err != nil || len(qs) != 0 {
			t.Errorf("Queues(%q) = %v, %v; want none", id, qs, err)
		}
		if err := d.CreateQueue(ctx, &record.Queue{RunID: id, Name: "q"}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("CreateQueue in run %q: %v; want ErrNotFound", id, err)
		}
		if _, err := d.UndoLabel(ctx, id, "q", "ann"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("UndoLabel(%q): %v; want ErrNotFound", id, err)
		}
		n := 0
		count := func() { n++ }
		if err := d.Labels(ctx, id, func(record.Label) error { count(); return nil }); err != nil {
			t.Errorf("Labels(%q): %v", id, err)
		}
		if err := d.LoadSteps(ctx, id, func(record.LoadStep) error { count(); return nil }); err != nil {
			t.Errorf("LoadSteps(%q): %v", id, err)
		}
		if err := d.LoadRequests(ctx, id, func(record.LoadRequest) error { count(); return nil }); err != nil {
			t.Errorf("LoadRequests(%q): %v", id, err)
		}
		if n != 0 {
			t.Errorf("readers of run %q streamed %d records", id, n)
		}
		steps := []record.LoadStep{{RunID: id, Target: "m", Mode: "rate", Level: 1}}
		if err := d.PutLoadSteps(ctx, steps); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("PutLoadSteps in run %q: %v; want ErrNotFound", id, err)
		}
		if _, err := d.Sample(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Sample(%q): %v; want ErrNotFound", id, err)
		}
	}
}

// Trace IDs are BYTEA: any bytes round-trip, and order bytewise.
func TestTraceIDsAreBytes(t *testing.T) {
	d := openTemp(t)
	ctx := context.Background()
	ids := []string{"b", "a\x00z", "\xff", "a"}
	var ts []record.Trace
	for _, id := range ids {
		ts = append(ts, record.Trace{ID: id})
	}
	if n, err := d.PutTraces(ctx, ts); err != nil || n != len(ids) {
		t.Fatalf("PutTraces = %d, %v; want %d", n, err, len(ids))
	}
	var got []string
	if err := d.Traces(ctx, store.TraceFilter{}, func(tr *record.Trace) error { got = append(got, tr.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []string{"a", "a\x00z", "b", "\xff"}
	if len(got) != len(want) {
		t.Fatalf("Traces streamed %q; want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Traces streamed %q; want %q (bytewise)", got, want)
		}
	}
	if tr, err := d.Trace(ctx, "\xff"); err != nil || tr.ID != "\xff" {
		t.Errorf("Trace(\\xff) = %v, %v", tr, err)
	}
}
