package runner

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// Every request carries the spec's tools, tool choice and response format,
// and each result stores the reply's tool calls in order, arguments as the
// model wrote them (invalid JSON too).
func TestOfferAndToolCalls(t *testing.T) {
	sp := &spec.Spec{
		Tools: []spec.Tool{
			{Name: "book", Description: "Book a trip.", Parameters: json.RawMessage(`{"type":"object"}`), File: "tools.json"},
			{Name: "weather", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
		},
		ToolChoice:     "book",
		ResponseFormat: &spec.ResponseFormat{Name: "r", Schema: json.RawMessage(`{"type":"object"}`), Strict: true},
	}
	offer := OfferOf(sp)
	wantTools := []provider.Tool{
		{Name: "book", Description: "Book a trip.", Parameters: json.RawMessage(`{"type":"object"}`)},
		{Name: "weather", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
	}
	if !reflect.DeepEqual(offer.Tools, wantTools) || offer.ToolChoice != "book" ||
		!reflect.DeepEqual(offer.ResponseFormat, &provider.ResponseFormat{Name: "r", Schema: json.RawMessage(`{"type":"object"}`), Strict: true}) {
		t.Fatalf("offer = %+v", offer)
	}
	if o := OfferOf(&spec.Spec{}); o.Tools != nil || o.ToolChoice != "" || o.ResponseFormat != nil {
		t.Fatalf("a spec without tools offers nothing: %+v", o)
	}

	calls := []provider.ToolCall{{ID: "c1", Name: "book", Arguments: `{"city":"Paris"}`}, {Name: "weather", Arguments: `{"city": "Par`}}
	var seen []*provider.Request
	p := provider.Func(func(_ context.Context, req *provider.Request) (*provider.Response, error) {
		seen = append(seen, req)
		return &provider.Response{FinishReason: "tool_calls", ToolCalls: calls, Attempts: 1}, nil
	})
	st := newMemStore()
	_, err := Run(context.Background(), Options{
		RunID:   "r",
		Targets: []Target{{Spec: &spec.Target{Name: "a"}, Provider: p, Workers: 1}},
		Cases:   cases(1),
		Render:  render,
		Offer:   offer,
		Score:   noScore,
		Store:   st,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || !reflect.DeepEqual(seen[0].Tools, wantTools) || seen[0].ToolChoice != "book" || seen[0].ResponseFormat == nil {
		t.Fatalf("request = %+v", seen)
	}
	got := st.results[record.Key{CaseID: "1", Target: "a", Epoch: 1}].ToolCalls
	want := []record.ToolCall{{ID: "c1", Name: "book", Arguments: `{"city":"Paris"}`}, {Name: "weather", Arguments: `{"city": "Par`}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stored tool calls = %+v", got)
	}
	if ToolCalls(nil) != nil {
		t.Error("no calls are stored as nil")
	}
}
