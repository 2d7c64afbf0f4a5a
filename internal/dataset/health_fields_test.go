package dataset

import (
	"reflect"
	"testing"
)

// Object-valued expected answers (an extraction task's invoices) get a
// distribution per field, figures worked out by hand from
// testdata/health/invoices.jsonl: text fields list their top values,
// numeric ones are summarised by range and median; a field an object lacks
// (or holds null) is missing there; nested objects by dotted path; an
// answer written as a string holding an object counts as that object.
func TestHealthObjectLabelsByField(t *testing.T) {
	sp := healthSpec(t, "  path: invoices.jsonl\n  id: id\n  expected: expected\n")
	h, err := CheckHealth(sp, HealthOptions{TextFields: []string{"question"}, TopLabels: 3})
	if err != nil {
		t.Fatal(err)
	}
	l := h.Labels
	if l == nil || l.Objects != 8 || l.Values != 8 {
		t.Fatalf("labels %+v: want 8 object answers", l)
	}
	f := func(x float64) *float64 { return &x }
	want := []FieldLabels{
		{Field: "address.city", Values: 1, Missing: 7, Distinct: 1, Top: []ValueCount{{Value: "Lyon", Count: 1, Share: 1}}},
		{Field: "currency", Values: 8, Distinct: 3, Top: []ValueCount{{Value: "EUR", Count: 5, Share: 5.0 / 8}, {Value: "USD", Count: 2, Share: 2.0 / 8}, {Value: "GBP", Count: 1, Share: 1.0 / 8}}},
		{Field: "date", Values: 1, Missing: 7, Distinct: 1, Top: []ValueCount{{Value: "2024-01-02", Count: 1, Share: 1}}},
		// 1.5, 5, 7, 12, 30, 100, 12442 (i8's is null).
		{Field: "total", Values: 7, Missing: 1, Distinct: 7, Numeric: true, Min: f(1.5), Median: f(12), Max: f(12442)},
		// Acme 3, Bolt 2, Corp 1, Dyn 1: the top 3, and 1 other.
		{Field: "vendor", Values: 7, Missing: 1, Distinct: 4, Top: []ValueCount{{Value: "Acme", Count: 3, Share: 3.0 / 7}, {Value: "Bolt", Count: 2, Share: 2.0 / 7}, {Value: "Corp", Count: 1, Share: 1.0 / 7}}, Other: 1},
	}
	if !reflect.DeepEqual(l.Fields, want) {
		t.Errorf("fields:\n got %+v\nwant %+v", l.Fields, want)
	}
}

// Scalar answers have no field distribution.
func TestHealthScalarLabelsHaveNoFields(t *testing.T) {
	sp := healthSpec(t, "  path: planted.jsonl\n  id: id\n  expected: answer\n")
	h, err := CheckHealth(sp, HealthOptions{TextFields: []string{"question"}})
	if err != nil {
		t.Fatal(err)
	}
	if h.Labels == nil || h.Labels.Fields != nil || h.Labels.Objects != 0 {
		t.Errorf("labels %+v: want no fields", h.Labels)
	}
}
