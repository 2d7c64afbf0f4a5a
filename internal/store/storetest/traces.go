package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

// traceTests are the conformance tests of store.Traces: production traces
// and the samples drawn from them, and the sample a run scored.
//
// Contract details they fix, beyond the interface comments:
//   - A trace round-trips field for field: times to the microsecond, in
//     UTC; Attributes and Resource byte for byte (nil stays nil); messages
//     as given (their text is UTF-8, as the JSON and protobuf they arrive
//     in are). A trace stored without a Received time gets the store's
//     clock.
//   - Of traces with one ID in one call, the first is stored.
//   - A nil IDs filter selects every trace; an empty, non-nil one none.
//   - A trace without a time (the zero time) streams first, and is
//     selected by no filter with Since or Until.
//   - A sample's strata and items come back in the order given; a trace
//     appears in a sample at most once.
var traceTests = []struct {
	name string
	fn   func(*testing.T, store.Store)
}{
	{"TraceRoundTrip", testTraceRoundTrip},
	{"PutTracesIdempotent", testPutTracesIdempotent},
	{"PutTracesAtomic", testPutTracesAtomic},
	{"TracesOrderAndFilters", testTracesOrderAndFilters},
	{"TracesLongIDList", testTracesLongIDList},
	{"TracesStreamErrors", testTracesStreamErrors},
	{"SampleRoundTrip", testSampleRoundTrip},
	{"SampleExists", testSampleExists},
	{"Samples", testSamples},
	{"RunSample", testRunSample},
}

// fullTrace is a trace with every field set: a chat call that answered
// with a tool call, times with sub-microsecond digits in a non-UTC zone.
func fullTrace(id string) record.Trace {
	return record.Trace{
		ID: id, TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", SpanID: "00f067aa0ba902b7",
		Source: "otlp", Time: t0(), LatencyMS: 1234.5,
		Operation: "chat", Provider: "openai", Model: "gpt-small", ResponseModel: "gpt-small-2026-01-01",
		InputTokens: 321, OutputTokens: 45, CostUSD: 0.000789, Priced: true,
		System: "You triage support tickets.\n\"Be brief.\"",
		Input: []record.Message{
			{Role: "user", Content: "Where is my refund? <b>order #12</b> ünïcödé \u2028"},
			{Role: "assistant", ToolCalls: []record.ToolCall{{ID: "call_1", Name: "lookup_order", Arguments: `{"order": 12}`}}},
			{Role: "tool", ToolCallID: "call_1", Name: "lookup_order", Content: `{"status":"refunded"}`},
		},
		Output: []record.Message{{Role: "assistant", Content: "It was refunded.", ToolCalls: []record.ToolCall{
			{ID: "call_2", Name: "notify", Arguments: `{"to": "user", "broken json`},
		}}},
		FinishReason: "tool_calls",
		ErrorType:    "timeout",
		Attributes:   []byte(`{"gen_ai.request.model": "gpt-small", "route":"/refunds", "z": [1, 2.50]}`),
		Resource:     []byte(`{"service.name":"support-bot"}`),
		Redactions:   2,
		Received:     t0().Add(1500 * time.Millisecond),
	}
}

// trace is a small trace of a model at a time.
func trace(id, model string, at time.Time) record.Trace {
	return record.Trace{
		ID: id, TraceID: id, Source: "jsonl:app.log", Time: at, Model: model,
		Input:    []record.Message{{Role: "user", Content: "question " + id}},
		Output:   []record.Message{{Role: "assistant", Content: "answer " + id}},
		Received: at.Add(time.Second),
	}
}

func putTraces(t *testing.T, s store.Store, want int, ts ...record.Trace) {
	t.Helper()
	n, err := s.PutTraces(context.Background(), ts)
	if err != nil {
		t.Fatalf("PutTraces(%d traces): %v", len(ts), err)
	}
	if n != want {
		t.Errorf("PutTraces of %d traces stored %d new; want %d", len(ts), n, want)
	}
}

func allTraces(t *testing.T, s store.Store, f store.TraceFilter) []record.Trace {
	t.Helper()
	var out []record.Trace
	if err := s.Traces(context.Background(), f, func(tr *record.Trace) error {
		out = append(out, *tr)
		return nil
	}); err != nil {
		t.Fatalf("Traces(%+v): %v", f, err)
	}
	return out
}

func traceIDs(ts []record.Trace) []string {
	ids := make([]string, len(ts))
	for i, tr := range ts {
		ids[i] = tr.ID
	}
	return ids
}

// checkTrace fails t unless got is want, times to the microsecond and in
// UTC.
func checkTrace(t *testing.T, what string, want, got record.Trace) {
	t.Helper()
	if d := diffFields(want, got); d != nil {
		t.Errorf("%s: trace %q did not round-trip:\n%s", what, want.ID, strings.Join(d, "\n"))
	}
	for _, tm := range []time.Time{got.Time, got.Received} {
		if !tm.IsZero() && tm.Location() != time.UTC {
			t.Errorf("%s: trace %q: time %v is not in UTC", what, want.ID, tm)
		}
	}
}

func testTraceRoundTrip(t *testing.T, s store.Store) {
	ctx := context.Background()
	want := fullTrace("4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7")
	// Plain text fields are kept byte for byte, even when not UTF-8.
	want.System += "\xff\xfe"
	want.FinishReason = "stop\x80"
	bare := record.Trace{ID: "sha256:0b1e"}
	putTraces(t, s, 2, want, bare)

	got, err := s.Trace(ctx, want.ID)
	if err != nil {
		t.Fatalf("Trace: %v", err)
	}
	checkTrace(t, "Trace", want, *got)
	if string(got.Attributes) != string(want.Attributes) {
		t.Errorf("attributes came back as %s, want the bytes given, %s", got.Attributes, want.Attributes)
	}
	streamed := allTraces(t, s, store.TraceFilter{IDs: []string{want.ID}})
	if len(streamed) != 1 {
		t.Fatalf("Traces with the trace's ID streamed %d traces, want 1", len(streamed))
	}
	checkTrace(t, "Traces", want, streamed[0])

	// A bare trace comes back bare, stamped with the store's clock.
	got, err = s.Trace(ctx, bare.ID)
	if err != nil {
		t.Fatalf("Trace(bare): %v", err)
	}
	if got.Input != nil || got.Output != nil || got.Attributes != nil || got.Resource != nil || !got.Time.IsZero() ||
		got.Model != "" || got.CostUSD != 0 || got.Priced {
		t.Errorf("a bare trace came back with content: %+v", got)
	}
	if got.Received.Before(clockStart()) || got.Received.After(clockStart().Add(time.Hour)) {
		t.Errorf("a trace stored without a Received time got %v; want the store's clock (from %v)", got.Received, clockStart())
	}

	if _, err := s.Trace(ctx, "missing"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Trace(missing): err = %v, want one wrapping store.ErrNotFound", err)
	}
}

func testPutTracesIdempotent(t *testing.T, s store.Store) {
	ctx := context.Background()
	var first []record.Trace
	for i := range 3 {
		first = append(first, fullTrace(fmt.Sprintf("t%d", i)))
	}
	putTraces(t, s, 3, first...)
	// The same IDs again, with other content: nothing stored, nothing
	// replaced.
	again := slices.Clone(first)
	for i := range again {
		again[i].Model, again[i].Output = "other-model", []record.Message{{Role: "assistant", Content: "changed"}}
		again[i].Received = again[i].Received.Add(time.Hour)
	}
	putTraces(t, s, 0, again...)
	// Old and new mixed, and an ID twice in one call: the first is kept.
	dup := fullTrace("t3")
	dup2 := fullTrace("t3")
	dup2.Model = "second"
	putTraces(t, s, 1, again[0], dup, again[2], dup2)

	if n, err := s.CountTraces(ctx, store.TraceFilter{}); err != nil || n != 4 {
		t.Fatalf("CountTraces = %d, %v; want 4", n, err)
	}
	got := allTraces(t, s, store.TraceFilter{})
	want := append(slices.Clone(first), dup)
	if !slices.Equal(traceIDs(got), traceIDs(want)) {
		t.Fatalf("stored traces %q, want %q", traceIDs(got), traceIDs(want))
	}
	for i := range want {
		checkTrace(t, "after storing the same IDs again", want[i], got[i])
	}
}

func testPutTracesAtomic(t *testing.T, s store.Store) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		bad  func(*record.Trace)
	}{
		{"no ID", func(tr *record.Trace) { tr.ID = "" }},
		{"attributes not JSON", func(tr *record.Trace) { tr.Attributes = []byte(`{"route": `) }},
		{"resource not JSON", func(tr *record.Trace) { tr.Resource = []byte(`service.name=x`) }},
	} {
		var ts []record.Trace
		for i := range 5 {
			ts = append(ts, trace(fmt.Sprintf("a%d", i), "m", t0().Add(time.Duration(i)*time.Second)))
		}
		tc.bad(&ts[3])
		if n, err := s.PutTraces(ctx, ts); err == nil {
			t.Errorf("%s: PutTraces of a batch with a bad trace succeeded (%d new)", tc.name, n)
		}
		if n, err := s.CountTraces(ctx, store.TraceFilter{}); err != nil || n != 0 {
			t.Errorf("%s: a failed PutTraces left %d traces (%v); want none", tc.name, n, err)
		}
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	ts := []record.Trace{trace("c1", "m", t0()), trace("c2", "m", t0())}
	if _, err := s.PutTraces(cancelled, ts); !errors.Is(err, context.Canceled) {
		t.Errorf("PutTraces with a cancelled context: err = %v, want context.Canceled", err)
	}
	if n, err := s.CountTraces(ctx, store.TraceFilter{}); err != nil || n != 0 {
		t.Errorf("PutTraces with a cancelled context stored %d traces (%v)", n, err)
	}
	if n, err := s.PutTraces(ctx, nil); err != nil || n != 0 {
		t.Errorf("PutTraces(nil) = %d, %v; want 0, nil", n, err)
	}
}

func testTracesOrderAndFilters(t *testing.T, s store.Store) {
	ctx := context.Background()
	base := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	// Stored out of order; "b" and "a" share a time (order by ID), "z"
	// has no time (first).
	in := []record.Trace{
		trace("d", "gpt", base.Add(2*day)),
		trace("b", "claude", base.Add(day)),
		trace("a", "gpt", base.Add(day)),
		trace("e", "claude", base.Add(7*day)),
		trace("c", "gpt", base.Add(day+time.Microsecond)),
		trace("z", "gpt", time.Time{}),
		trace("f", "gpt", base.Add(7*day-time.Microsecond)),
	}
	putTraces(t, s, len(in), in...)
	for _, tc := range []struct {
		name string
		f    store.TraceFilter
		want []string
	}{
		{"all", store.TraceFilter{}, []string{"z", "a", "b", "c", "d", "f", "e"}},
		{"since (inclusive)", store.TraceFilter{Since: base.Add(day)}, []string{"a", "b", "c", "d", "f", "e"}},
		// A trace without a time is in no bounded window.
		{"until (exclusive)", store.TraceFilter{Until: base.Add(day + time.Microsecond)}, []string{"a", "b"}},
		{"window", store.TraceFilter{Since: base.Add(day + time.Microsecond), Until: base.Add(7 * day)}, []string{"c", "d", "f"}},
		{"window in another zone", store.TraceFilter{
			Since: base.Add(day + time.Microsecond).In(time.FixedZone("PST", -8*3600)),
			Until: base.Add(7 * day).In(time.FixedZone("IST", 5*3600+1800)),
		}, []string{"c", "d", "f"}},
		{"sub-microsecond bounds", store.TraceFilter{Since: base.Add(day + time.Nanosecond), Until: base.Add(2*day + time.Nanosecond)}, []string{"c", "d"}},
		{"empty window", store.TraceFilter{Since: base.Add(3 * day), Until: base.Add(4 * day)}, nil},
		{"model", store.TraceFilter{Model: "claude"}, []string{"b", "e"}},
		{"model and window", store.TraceFilter{Model: "gpt", Since: base.Add(day), Until: base.Add(7 * day)}, []string{"a", "c", "d", "f"}},
		{"unknown model", store.TraceFilter{Model: "gp"}, nil},
		{"IDs", store.TraceFilter{IDs: []string{"e", "a", "missing", "z", "a"}}, []string{"z", "a", "e"}},
		{"IDs and model", store.TraceFilter{IDs: []string{"e", "a", "b"}, Model: "claude"}, []string{"b", "e"}},
		{"empty IDs", store.TraceFilter{IDs: []string{}}, nil},
	} {
		got := traceIDs(allTraces(t, s, tc.f))
		if !slices.Equal(got, tc.want) && (len(got) != 0 || len(tc.want) != 0) {
			t.Errorf("%s: Traces streamed %q, want %q", tc.name, got, tc.want)
		}
		n, err := s.CountTraces(ctx, tc.f)
		if err != nil {
			t.Fatalf("%s: CountTraces: %v", tc.name, err)
		}
		if n != int64(len(tc.want)) {
			t.Errorf("%s: CountTraces = %d, want %d", tc.name, n, len(tc.want))
		}
	}
}

func testTracesLongIDList(t *testing.T, s store.Store) {
	const stored = 3000
	var ts []record.Trace
	base := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	for i := range stored {
		// Times run against the IDs' order, so ID order is not time order.
		ts = append(ts, trace(fmt.Sprintf("id-%05d", i), "m", base.Add(time.Duration(stored-i)*time.Second)))
	}
	putTraces(t, s, stored, ts...)
	// Every third stored ID among 40,000 unknown ones: far more than any
	// limit on bound parameters.
	var ids, want []string
	for i := range 40_000 {
		ids = append(ids, fmt.Sprintf("unknown-%05d", i))
	}
	for i := stored - 1; i >= 0; i-- {
		if i%3 == 0 {
			id := fmt.Sprintf("id-%05d", i)
			ids = append(ids, id)
			want = append(want, id) // descending IDs are ascending times
		}
	}
	f := store.TraceFilter{IDs: ids}
	if got := traceIDs(allTraces(t, s, f)); !slices.Equal(got, want) {
		t.Errorf("Traces with %d IDs streamed %d traces, want %d in time order (first %q, want %q)", len(ids), len(got), len(want), got[:min(3, len(got))], want[:3])
	}
	if n, err := s.CountTraces(context.Background(), f); err != nil || n != int64(len(want)) {
		t.Errorf("CountTraces with %d IDs = %d, %v; want %d", len(ids), n, err, len(want))
	}
}

func testTracesStreamErrors(t *testing.T, s store.Store) {
	ctx := context.Background()
	var ts []record.Trace
	for i := range 10 {
		ts = append(ts, trace(fmt.Sprintf("s%02d", i), "m", t0().Add(time.Duration(i)*time.Second)))
	}
	putTraces(t, s, 10, ts...)

	errStop := errors.New("stop here")
	calls := 0
	err := s.Traces(ctx, store.TraceFilter{}, func(*record.Trace) error {
		calls++
		if calls == 3 {
			return errStop
		}
		return nil
	})
	if !errors.Is(err, errStop) || calls != 3 {
		t.Errorf("Traces after the callback failed at the 3rd trace: err = %v after %d calls; want the callback's error after 3", err, calls)
	}

	cctx, cancel := context.WithCancel(ctx)
	calls = 0
	err = s.Traces(cctx, store.TraceFilter{}, func(*record.Trace) error {
		calls++
		if calls == 2 {
			cancel()
		}
		return nil
	})
	cancel()
	if !errors.Is(err, context.Canceled) || calls > 3 {
		t.Errorf("Traces cancelled at the 2nd trace: err = %v after %d calls; want context.Canceled at once", err, calls)
	}

	// The callback may write traces (a collector stores while a sampler
	// reads).
	n := 0
	err = s.Traces(ctx, store.TraceFilter{}, func(tr *record.Trace) error {
		n++
		_, err := s.PutTraces(ctx, []record.Trace{trace("w-"+tr.ID, "m", tr.Time)})
		return err
	})
	if err != nil || n != 10 {
		t.Errorf("Traces writing from its callback: %v after %d traces; want none after 10", err, n)
	}
	if c, err := s.CountTraces(ctx, store.TraceFilter{}); err != nil || c != 20 {
		t.Errorf("after writing from the callback, CountTraces = %d, %v; want 20", c, err)
	}
}

func testSample(id string, created time.Time) *record.Sample {
	return &record.Sample{
		ID: id, Created: created,
		Since: t0().Add(-7 * 24 * time.Hour), Until: t0(),
		Filter: "model=gpt-small", By: []string{"model", "route"}, Per: 2, Seed: 1<<63 + 7,
		// Strata and items out of any sorted order: they come back as given.
		Strata: []record.SampleStratum{
			{Key: "model=gpt-small,route=/refunds", Population: 10, Drawn: 2},
			{Key: "model=claude,route=/refunds", Population: 1, Drawn: 1},
			{Key: "model=claude,route=/billing", Population: 3, Drawn: 2},
		},
		Items: []record.SampleItem{
			{TraceID: "t9", Stratum: "model=gpt-small,route=/refunds", Weight: 5},
			{TraceID: "t2", Stratum: "model=claude,route=/billing", Weight: 1.5},
			{TraceID: "t7", Stratum: "model=claude,route=/refunds", Weight: 1},
			{TraceID: "t1", Stratum: "model=gpt-small,route=/refunds", Weight: 5},
			{TraceID: "t4", Stratum: "model=claude,route=/billing", Weight: 1.5},
		},
	}
}

// checkSample fails t unless got is want (times to the microsecond, in
// UTC), items aside when withItems is false (then got must have none).
func checkSample(t *testing.T, what string, want, got *record.Sample, withItems bool) {
	t.Helper()
	w, g := *want, *got
	if !withItems {
		if g.Items != nil {
			t.Errorf("%s: sample %q came with %d items; want none", what, want.ID, len(g.Items))
		}
		w.Items, g.Items = nil, nil
	}
	if len(w.Items) == 0 && len(g.Items) == 0 {
		w.Items, g.Items = nil, nil
	}
	if len(w.Strata) == 0 && len(g.Strata) == 0 {
		w.Strata, g.Strata = nil, nil
	}
	if d := diffFields(w, g); d != nil {
		t.Errorf("%s: sample %q did not round-trip:\n%s", what, want.ID, strings.Join(d, "\n"))
	}
	for _, tm := range []time.Time{g.Created, g.Since, g.Until} {
		if !tm.IsZero() && tm.Location() != time.UTC {
			t.Errorf("%s: sample %q: time %v is not in UTC", what, want.ID, tm)
		}
	}
}

func testSampleRoundTrip(t *testing.T, s store.Store) {
	ctx := context.Background()
	want := testSample("s-20261202-113512", t0())
	if err := s.PutSample(ctx, want); err != nil {
		t.Fatalf("PutSample: %v", err)
	}
	got, err := s.Sample(ctx, want.ID)
	if err != nil {
		t.Fatalf("Sample: %v", err)
	}
	checkSample(t, "Sample", want, got, true)

	// A simple sample: no strata keys, no filter, nothing drawn.
	empty := &record.Sample{ID: "empty", Created: t0(), Strata: []record.SampleStratum{{Key: "", Population: 0, Drawn: 0}}}
	if err := s.PutSample(ctx, empty); err != nil {
		t.Fatalf("PutSample(empty): %v", err)
	}
	got, err = s.Sample(ctx, "empty")
	if err != nil {
		t.Fatalf("Sample(empty): %v", err)
	}
	checkSample(t, "Sample(empty)", empty, got, true)

	if _, err := s.Sample(ctx, "missing"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Sample(missing): err = %v, want one wrapping store.ErrNotFound", err)
	}
	if err := s.PutSample(ctx, &record.Sample{}); err == nil {
		t.Errorf("PutSample of a sample without an ID succeeded")
	}
}

func testSampleExists(t *testing.T, s store.Store) {
	ctx := context.Background()
	want := testSample("weekly", t0())
	if err := s.PutSample(ctx, want); err != nil {
		t.Fatalf("PutSample: %v", err)
	}
	other := testSample("weekly", t0().Add(time.Hour))
	other.Items = other.Items[:1]
	other.Seed = 1
	if err := s.PutSample(ctx, other); !errors.Is(err, store.ErrSampleExists) {
		t.Errorf("PutSample of a taken ID: err = %v, want store.ErrSampleExists", err)
	}
	got, err := s.Sample(ctx, "weekly")
	if err != nil {
		t.Fatalf("Sample: %v", err)
	}
	checkSample(t, "after a refused PutSample", want, got, true)

	// A trace drawn twice is refused, and stores nothing.
	twice := testSample("twice", t0())
	twice.Items = append(twice.Items, twice.Items[0])
	if err := s.PutSample(ctx, twice); err == nil {
		t.Errorf("PutSample of a sample that draws a trace twice succeeded")
	}
	if _, err := s.Sample(ctx, "twice"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a refused PutSample left its sample (Sample: %v)", err)
	}
}

func testSamples(t *testing.T, s store.Store) {
	ctx := context.Background()
	if got, err := s.Samples(ctx); err != nil || len(got) != 0 {
		t.Fatalf("Samples of an empty store = %d, %v; want none", len(got), err)
	}
	// Stored out of creation order; listed oldest first.
	mid, old, young := testSample("mid", t0()), testSample("old", t0().Add(-48*time.Hour)), testSample("young", t0().Add(time.Hour))
	young.By, young.Strata = nil, []record.SampleStratum{{Population: 40, Drawn: 5}}
	for _, sm := range []*record.Sample{mid, young, old} {
		if err := s.PutSample(ctx, sm); err != nil {
			t.Fatalf("PutSample(%s): %v", sm.ID, err)
		}
	}
	got, err := s.Samples(ctx)
	if err != nil {
		t.Fatalf("Samples: %v", err)
	}
	want := []*record.Sample{old, mid, young}
	if len(got) != len(want) {
		t.Fatalf("Samples listed %d samples, want %d", len(got), len(want))
	}
	for i := range want {
		checkSample(t, "Samples", want[i], &got[i], false)
	}
}

func testRunSample(t *testing.T, s store.Store) {
	ctx := context.Background()
	scored := newRun("20261202-113512-5a3p1e", t0())
	scored.Sample, scored.DatasetHash = "s-weekly", "sample:s-weekly"
	eval := newRun("20261202-113513-e7a1", t0().Add(time.Second))
	mustCreate(t, s, scored, eval)
	got, err := s.GetRun(ctx, scored.ID)
	if err != nil {
		t.Fatalf("GetRun: %v", err)
	}
	if d := diffFields(*scored, *got); d != nil {
		t.Errorf("a score-traces run did not round-trip:\n%s", strings.Join(d, "\n"))
	}
	runs, err := s.ListRuns(ctx, 0)
	if err != nil {
		t.Fatalf("ListRuns: %v", err)
	}
	samples := map[string]string{}
	for _, r := range runs {
		samples[r.ID] = r.Sample
	}
	if want := map[string]string{scored.ID: "s-weekly", eval.ID: ""}; !reflect.DeepEqual(samples, want) {
		t.Errorf("ListRuns gave the runs samples %v, want %v", samples, want)
	}
	exp, err := s.ExperimentRuns(ctx, scored.Experiment)
	if err != nil || len(exp) != 2 || exp[0].Sample != "s-weekly" {
		t.Errorf("ExperimentRuns: %v, %v; want the score-traces run first with its sample", exp, err)
	}
	// Updating a run keeps its sample.
	scored.Status, scored.Ended = record.StatusComplete, t0().Add(time.Minute)
	if err := s.UpdateRun(ctx, scored); err != nil {
		t.Fatalf("UpdateRun: %v", err)
	}
	if got, err := s.GetRun(ctx, "latest"); err != nil || got.ID != eval.ID {
		t.Fatalf("GetRun(latest) = %v, %v", got, err)
	}
	if got, err := s.GetRun(ctx, scored.ID); err != nil || got.Sample != "s-weekly" {
		t.Errorf("after UpdateRun, the run's sample is %q (%v); want s-weekly", got.Sample, err)
	}
}
