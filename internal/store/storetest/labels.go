package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

// labelTests are the conformance tests of store.Labels: labeling queues and
// people's labels.
var labelTests = []struct {
	name string
	fn   func(*testing.T, store.Store)
}{
	{"QueueRoundTrip", testQueueRoundTrip},
	{"QueueExists", testQueueExists},
	{"PutLabelsReplacesByKey", testPutLabelsReplaces},
	{"UndoLabel", testUndoLabel},
	{"LabelsOrder", testLabelsOrder},
	{"QueueProgress", testQueueProgress},
	{"DeleteRunLabels", testDeleteRunLabels},
}

func testQueue(run, name string, created time.Time, items int) *record.Queue {
	q := &record.Queue{
		RunID: run, Name: name, Judge: "judge", Size: items + 2, Seed: 1<<63 + 5,
		Strata: []string{"target", "judge", "slice:lang"}, Created: created,
	}
	// Positions are given out of order: Queue returns them in order.
	for i := items - 1; i >= 0; i-- {
		q.Items = append(q.Items, record.QueueItem{
			Position: i, CaseID: fmt.Sprintf("case-%04d", i), Target: []string{"a", "b"}[i%2], Epoch: 1,
			OutputHash: fmt.Sprintf("%016x", i), Stratum: fmt.Sprintf("target=%s", []string{"a", "b"}[i%2]), Weight: 1.5 + float64(i),
		})
	}
	return q
}

func label(run, queue, caseID, target, labeler, verdict string, created time.Time) record.Label {
	l := record.Label{
		RunID: run, CaseID: caseID, Target: target, Epoch: 1, OutputHash: "00ff00ff00ff00ff",
		Queue: queue, Labeler: labeler, Verdict: verdict, Created: created,
	}
	if verdict == record.LabelFail {
		l.Reason, l.Corrected = "says <refund> for a billing question", `{"label":"billing"}`
	}
	return l
}

func allLabels(t *testing.T, s store.Store, run string) []record.Label {
	t.Helper()
	var out []record.Label
	if err := s.Labels(context.Background(), run, func(l record.Label) error {
		out = append(out, l)
		return nil
	}); err != nil {
		t.Fatalf("Labels(%q): %v", run, err)
	}
	return out
}

func putLabels(t *testing.T, s store.Store, want int, ls ...record.Label) {
	t.Helper()
	n, err := s.PutLabels(context.Background(), ls)
	if err != nil {
		t.Fatalf("PutLabels: %v", err)
	}
	if n != want {
		t.Errorf("PutLabels of %d labels counted %d new or changed; want %d", len(ls), n, want)
	}
}

// sameLabel compares labels with times to the microsecond.
func sameLabel(want, got record.Label) bool {
	if !sameTime(want.Created, got.Created) {
		return false
	}
	want.Created, got.Created = time.Time{}, time.Time{}
	return want == got
}

// A queue comes back as stored: every field, the uint64 seed's high bit,
// and its items in position order.
func testQueueRoundTrip(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newRun("r", t0()))
	q := testQueue("r", "first pass", t0(), 5)
	if err := s.CreateQueue(ctx, q); err != nil {
		t.Fatalf("CreateQueue: %v", err)
	}
	got, err := s.Queue(ctx, "r", "first pass")
	if err != nil {
		t.Fatalf("Queue: %v", err)
	}
	if !sameTime(q.Created, got.Created) {
		t.Errorf("created %v; want %v", got.Created, q.Created)
	}
	for i, it := range got.Items {
		if it.Position != i {
			t.Errorf("item %d has position %d; items come in position order", i, it.Position)
		}
	}
	want := *q
	want.Items = nil
	for i := len(q.Items) - 1; i >= 0; i-- {
		want.Items = append(want.Items, q.Items[i])
	}
	want.Created, got.Created = time.Time{}, time.Time{}
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("Queue returned\n%+v\nwant\n%+v", *got, want)
	}
	if _, err := s.Queue(ctx, "r", "second pass"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Queue of an unknown name: %v; want ErrNotFound", err)
	}
	if _, err := s.Queue(ctx, "other", "first pass"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Queue of another run: %v; want ErrNotFound", err)
	}
}

// A second queue of one name in a run is refused and leaves the first as
// it was; the same name in another run is another queue.
func testQueueExists(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newRun("r", t0()), newRun("r2", t0()))
	if err := s.CreateQueue(ctx, testQueue("r", "q", t0(), 3)); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateQueue(ctx, testQueue("r", "q", t0(), 7)); !errors.Is(err, store.ErrQueueExists) {
		t.Errorf("CreateQueue of a taken name: %v; want ErrQueueExists", err)
	}
	if got, err := s.Queue(ctx, "r", "q"); err != nil || len(got.Items) != 3 {
		t.Errorf("after the refused CreateQueue the queue has %d items (%v); want the first's 3", len(got.Items), err)
	}
	if err := s.CreateQueue(ctx, testQueue("r2", "q", t0(), 2)); err != nil {
		t.Errorf("CreateQueue of the same name in another run: %v", err)
	}
}

// A label with the key of a stored one (run, case, target, epoch, queue,
// labeler) replaces it; PutLabels counts what was new or changed, so
// storing the same labels twice counts 0 the second time.
func testPutLabelsReplaces(t *testing.T, s store.Store) {
	mustCreate(t, s, newRun("r", t0()))
	at := t0()
	a := label("r", "q", "case-0001", "a", "ann", record.LabelPass, at)
	b := label("r", "q", "case-0001", "a", "bob", record.LabelFail, at.Add(time.Second))
	c := label("r", "", "case-0001", "a", "ann", record.LabelSkip, at.Add(2*time.Second)) // no queue: another key
	d := label("r", "q", "case-0001", "b", "ann", record.LabelPass, at.Add(3*time.Second))
	putLabels(t, s, 4, a, b, c, d)
	putLabels(t, s, 0, a, b, c, d)
	// Labels as read back (times at the store's precision) are the same labels.
	putLabels(t, s, 0, allLabels(t, s, "r")...)

	a2 := a
	a2.Verdict, a2.Reason, a2.Created = record.LabelFail, "wrong queue", at.Add(time.Hour)
	putLabels(t, s, 1, a2, b)
	got := allLabels(t, s, "r")
	if len(got) != 4 {
		t.Fatalf("%d labels stored; want 4 (the changed label replaces its key's)", len(got))
	}
	var found bool
	for _, l := range got {
		if l.Labeler == "ann" && l.Queue == "q" && l.Target == "a" {
			found = true
			if !sameLabel(a2, l) {
				t.Errorf("the replaced label reads back as %+v; want %+v", l, a2)
			}
		}
	}
	if !found {
		t.Error("the replaced label is gone")
	}
	a3 := a2
	a3.OutputHash = "1111111111111111"
	putLabels(t, s, 1, a3)
	a4 := a3
	a4.Corrected = "billing"
	putLabels(t, s, 1, a4)
}

// Undo deletes the labeler's latest label in that queue and run only; with
// none there it is ErrNotFound.
func testUndoLabel(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newRun("r", t0()), newRun("r2", t0()))
	at := t0()
	first := label("r", "q", "case-0001", "a", "ann", record.LabelPass, at)
	latest := label("r", "q", "case-0002", "a", "ann", record.LabelFail, at.Add(time.Minute))
	putLabels(t, s, 6, latest, first,
		label("r", "q", "case-0003", "a", "bob", record.LabelPass, at.Add(time.Hour)),     // another labeler, later
		label("r", "other", "case-0004", "a", "ann", record.LabelPass, at.Add(time.Hour)), // another queue, later
		label("r2", "q", "case-0005", "a", "ann", record.LabelPass, at.Add(time.Hour)),    // another run, later
		label("r", "", "case-0006", "a", "ann", record.LabelSkip, at.Add(2*time.Hour)))    // no queue, later

	got, err := s.UndoLabel(ctx, "r", "q", "ann")
	if err != nil {
		t.Fatalf("UndoLabel: %v", err)
	}
	if !sameLabel(latest, *got) {
		t.Errorf("UndoLabel returned %+v; want the latest of ann in q: %+v", *got, latest)
	}
	got, err = s.UndoLabel(ctx, "r", "q", "ann")
	if err != nil || !sameLabel(first, *got) {
		t.Errorf("second UndoLabel returned %+v, %v; want %+v", got, err, first)
	}
	if _, err := s.UndoLabel(ctx, "r", "q", "ann"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("UndoLabel with no label left: %v; want ErrNotFound", err)
	}
	if _, err := s.UndoLabel(ctx, "r", "q", "carol"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("UndoLabel of a labeler with none: %v; want ErrNotFound", err)
	}
	if n := len(allLabels(t, s, "r")); n != 3 {
		t.Errorf("%d labels left in run r; want 3 (bob's, ann's in another queue and outside any)", n)
	}
	if n := len(allLabels(t, s, "r2")); n != 1 {
		t.Errorf("%d labels left in run r2; want 1", n)
	}
}

// Labels stream by run, creation time, queue, case, target, epoch and
// labeler; "" streams every run's.
func testLabelsOrder(t *testing.T, s store.Store) {
	mustCreate(t, s, newRun("r1", t0()), newRun("r2", t0()))
	at := t0()
	want := []record.Label{
		label("r1", "a", "case-0002", "x", "ann", record.LabelPass, at),
		label("r1", "b", "case-0001", "x", "ann", record.LabelPass, at),
		label("r1", "b", "case-0002", "x", "ann", record.LabelPass, at),
		label("r1", "b", "case-0002", "y", "ann", record.LabelPass, at),
		label("r1", "b", "case-0002", "y", "bob", record.LabelPass, at),
		label("r1", "a", "case-0001", "x", "ann", record.LabelFail, at.Add(time.Second)),
		label("r2", "a", "case-0000", "x", "ann", record.LabelSkip, at.Add(-time.Hour)),
	}
	e2 := label("r1", "b", "case-0002", "y", "ann", record.LabelPass, at)
	e2.Epoch = 2
	want = append(want[:5], append([]record.Label{e2}, want[5:]...)...)
	var shuffled []record.Label
	for i := range want {
		shuffled = append(shuffled, want[(i*5)%len(want)])
	}
	putLabels(t, s, len(want), shuffled...)
	check := func(run string, want []record.Label) {
		t.Helper()
		got := allLabels(t, s, run)
		if len(got) != len(want) {
			t.Fatalf("Labels(%q) streamed %d; want %d", run, len(got), len(want))
		}
		for i := range want {
			if !sameLabel(want[i], got[i]) {
				t.Errorf("Labels(%q)[%d] = %s %s %s/%s/%d %s; want %s %s %s/%s/%d %s", run, i,
					got[i].RunID, got[i].Queue, got[i].CaseID, got[i].Target, got[i].Epoch, got[i].Labeler,
					want[i].RunID, want[i].Queue, want[i].CaseID, want[i].Target, want[i].Epoch, want[i].Labeler)
			}
		}
	}
	check("", want)
	check("r1", want[:len(want)-1])
	check("r2", want[len(want)-1:])
}

// Queues reports each queue's items, the items labeled in it (by anyone)
// and its labels by verdict, oldest queue first; labels outside the queue
// (another queue, none, a key not among its items) do not count.
func testQueueProgress(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newRun("r1", t0()), newRun("r2", t0()))
	at := t0()
	q1 := testQueue("r1", "later", at.Add(time.Hour), 4) // items case-0000..3, targets a b a b
	q2 := testQueue("r1", "earlier", at, 2)
	q3 := testQueue("r2", "other", at.Add(2*time.Hour), 3)
	q3.Judge = ""
	for _, q := range []*record.Queue{q1, q2, q3} {
		if err := s.CreateQueue(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	putLabels(t, s, 7,
		label("r1", "later", "case-0000", "a", "ann", record.LabelPass, at),
		label("r1", "later", "case-0001", "b", "ann", record.LabelFail, at),
		label("r1", "later", "case-0001", "b", "bob", record.LabelSkip, at),   // a second labeler of one item
		label("r1", "later", "case-0002", "b", "ann", record.LabelPass, at),   // not an item: case-0002 is target a
		label("r1", "earlier", "case-0003", "b", "ann", record.LabelFail, at), // not an item of earlier
		label("r1", "", "case-0003", "b", "ann", record.LabelFail, at),
		label("r2", "other", "case-0000", "a", "ann", record.LabelPass, at))

	got, err := s.Queues(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	want := []store.QueueProgress{
		{RunID: "r1", Name: "earlier", Judge: "judge", Items: 2},
		{RunID: "r1", Name: "later", Judge: "judge", Items: 4, Labeled: 2, Pass: 1, Fail: 1, Skip: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Queues(r1) = %+v\nwant %+v", got, want)
	}
	all, err := s.Queues(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, store.QueueProgress{RunID: "r2", Name: "other", Items: 3, Labeled: 1, Pass: 1})
	if !reflect.DeepEqual(all, want) {
		t.Errorf("Queues(\"\") = %+v\nwant %+v", all, want)
	}
	if none, err := s.Queues(ctx, "nope"); err != nil || len(none) != 0 {
		t.Errorf("Queues of a run without queues = %+v, %v; want none", none, err)
	}
}

// DeleteRun deletes a run's queues and labels, counts them, and leaves
// another run's alone.
func testDeleteRunLabels(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newRun("gone", t0()), newRun("kept", t0()))
	for _, run := range []string{"gone", "kept"} {
		for _, name := range []string{"q1", "q2"} {
			if err := s.CreateQueue(ctx, testQueue(run, name, t0(), 3)); err != nil {
				t.Fatal(err)
			}
		}
		putLabels(t, s, 3,
			label(run, "q1", "case-0000", "a", "ann", record.LabelPass, t0()),
			label(run, "q1", "case-0001", "b", "ann", record.LabelFail, t0()),
			label(run, "", "case-0001", "b", "ann", record.LabelFail, t0()))
	}
	del, err := s.DeleteRun(ctx, "gone")
	if err != nil {
		t.Fatal(err)
	}
	if del.Queues != 2 || del.Labels != 3 {
		t.Errorf("DeleteRun counted %d queues and %d labels; want 2 and 3", del.Queues, del.Labels)
	}
	if n := len(allLabels(t, s, "gone")); n != 0 {
		t.Errorf("%d labels of the deleted run left", n)
	}
	if qs, err := s.Queues(ctx, "gone"); err != nil || len(qs) != 0 {
		t.Errorf("queues of the deleted run left: %+v, %v", qs, err)
	}
	if _, err := s.Queue(ctx, "gone", "q1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Queue of the deleted run: %v; want ErrNotFound", err)
	}
	// A new run of the same ID starts with no queues: q1 can be made again.
	mustCreate(t, s, newRun("gone", t0()))
	if err := s.CreateQueue(ctx, testQueue("gone", "q1", t0(), 1)); err != nil {
		t.Errorf("CreateQueue after the run's deletion: %v", err)
	}
	if n := len(allLabels(t, s, "kept")); n != 3 {
		t.Errorf("%d labels of the kept run; want 3", n)
	}
	if qs, err := s.Queues(ctx, "kept"); err != nil || len(qs) != 2 || qs[0].Labeled != 2 {
		t.Errorf("queues of the kept run: %+v, %v; want 2, the first with 2 labeled", qs, err)
	}
}
