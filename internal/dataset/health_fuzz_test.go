package dataset

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

// FuzzHealth runs the health check over arbitrary JSONL: it must not panic,
// must end in bounded time, and its counts must add up.
func FuzzHealth(f *testing.F) {
	f.Add([]byte(`{"id": "a", "q": "Hello, world", "answer": "x\n#### 4", "k": "v"}`+"\n"+`{"id": "b", "q": "hello world!", "answer": "#### 5"}`+"\n"), 0.9)
	f.Add([]byte(`{"id": 1, "q": "a b c d e"}`+"\n"+`{"id": 2, "q": "a b c d f", "answer": null}`+"\n"+`{"id": 2}`+"\n"), 0.5)
	f.Add([]byte(`{"id": "x", "q": "\u0000\u001f 3.5 ... ｆｕｌｌ", "answer": ""}`+"\n"+"not json\n"), 1.0)
	f.Add([]byte(`{"id": "s", "q": ["list"], "k": "should-refuse", "answer": {"a": 1}}`+"\n"), 0.01)
	f.Add([]byte(`{"id": "o1", "q": "a", "answer": {"cur": "EUR", "total": 12, "n": {"x": [1]}}}`+"\n"+`{"id": "o2", "q": "b", "answer": "{\"cur\": null, \"total\": \"12\"}"}`+"\n"+`{"id": "o3", "q": "c", "answer": {"total": 1e400, "": {}}}`+"\n"), 0.9)
	f.Fuzz(func(t *testing.T, src []byte, threshold float64) {
		if len(src) > 64<<10 {
			return
		}
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				panic(fmt.Sprintf("health check did not finish in 10s on %q", src))
			}
		}()
		sp := fuzzSpec("jsonl")
		sp.Dataset.Weight = ""
		sp.Dataset.Tags = sp.Dataset.Tags[:1]
		sp.Dataset.Tags[0].Key = BucketTag
		r, _, err := newReader(rawExpected(sp), sp.Dataset.Path, bytes.NewReader(src))
		if err != nil {
			return
		}
		h, err := checkHealth(r, sp, HealthOptions{TextFields: []string{"q"}, DupThreshold: threshold, MaxListed: 5})
		if threshold < 0 || threshold > 1 || threshold != threshold {
			if err == nil {
				t.Fatalf("threshold %v accepted", threshold)
			}
			return
		}
		if err != nil {
			t.Fatalf("checkHealth: %v", err)
		}
		n := h.Cases
		if h.Exact.Extra != h.Exact.Cases-h.Exact.Groups || h.Exact.Cases > n || h.Exact.Conflicting > h.Exact.Groups {
			t.Fatalf("exact duplicates %+v of %d cases", h.Exact, n)
		}
		if h.Near.Pairs < 0 || int64(h.Near.Pairs) > int64(n)*int64(n-1)/2 || h.Near.Cases > n || len(h.Near.List) > 5 || int64(h.Near.Pairs) > h.Near.Compared {
			t.Fatalf("near duplicates %+v of %d cases", h.Near, n)
		}
		if threshold == 0 {
			threshold = DefaultDupThreshold
		}
		for _, p := range h.Near.List {
			if p.Similarity < threshold-1e-4 || p.Similarity > 1 || p.A.Line >= p.B.Line {
				t.Fatalf("pair %+v at threshold %v", p, threshold)
			}
		}
		e := h.Expected
		if e.Missing+e.Unextractable+e.ShouldRefuseExempt+h.Labels.Values != n {
			t.Fatalf("expected %+v and %d labels do not add up to %d cases", e, h.Labels.Values, n)
		}
		if len(h.Labels.Fields) > MaxLabelFields || h.Labels.Objects > h.Labels.Values {
			t.Fatalf("%d fields of %d objects among %d answers", len(h.Labels.Fields), h.Labels.Objects, h.Labels.Values)
		}
		for _, fl := range h.Labels.Fields {
			listed := fl.Other
			for _, v := range fl.Top {
				listed += v.Count
			}
			switch {
			case fl.Values+fl.Missing != h.Labels.Objects, fl.Values < 1:
				t.Fatalf("field %+v: values and missing do not add up to %d objects", fl, h.Labels.Objects)
			case fl.Numeric && !(*fl.Min <= *fl.Median && *fl.Median <= *fl.Max):
				t.Fatalf("numeric field %+v out of order", fl)
			case !fl.Numeric && listed != fl.Values:
				t.Fatalf("field %+v lists %d values", fl, listed)
			}
		}
		tag := h.Tags[0]
		sum := tag.Missing
		for _, v := range tag.Values {
			sum += v.Count
		}
		if sum != n {
			t.Fatalf("tag %+v does not add up to %d cases", tag, n)
		}
	})
}
