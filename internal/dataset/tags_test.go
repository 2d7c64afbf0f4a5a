package dataset

import (
	"fmt"
	"strings"
	"testing"
)

// A tag expression that fails on many cases is one problem per tag, at the
// first case it failed on, saying how many cases it hit, not one problem
// per case (which buried every other problem under copies of it). Cases
// where it works are not counted; other problems still come per row.
func TestCELTagErrorReportedOnce(t *testing.T) {
	var b strings.Builder
	b.WriteString("{\"id\": \"a\", \"q\": \"x\", \"tier\": \"hard\"}\n") // line 1: has the field
	for i := 2; i <= 60; i++ {
		fmt.Fprintf(&b, "{\"id\": \"c%d\", \"q\": \"x\"}\n", i) // lines 2–60 lack it
	}
	b.WriteString("{\"id\": \"c2\", \"q\": \"x\", \"tier\": \"easy\"}\n") // line 61: a duplicate id
	sp := specFor(t, "d.jsonl", b.String(), "  id: id\n  tags: {tier: 'case.tier', len: 'size(case.q) > 0 ? \"some\" : \"none\"', n: 'case.n + 1'}\n")
	ps := problems(t, sp)
	want := []string{
		// In the order they first failed: n on line 1, tier on line 2.
		`d.jsonl:1:1: tag "n": no such key: n (on 61 cases; this is the first) (use has(case.FIELD) ? … : … for fields some cases lack)`,
		`d.jsonl:2:1: tag "tier": no such key: tier (on 59 cases; this is the first) (use has(case.FIELD) ? … : … for fields some cases lack)`,
		`d.jsonl:61:2: duplicate case id "c2" at line 61 (first at line 2) (case ids must be unique)`,
	}
	if strings.Join(ps, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n got %s\nwant %s", strings.Join(ps, "\n     "), strings.Join(want, "\n     "))
	}
}

// A tag that fails on a single case reads as before: no count.
func TestCELTagErrorOnOneCase(t *testing.T) {
	sp := specFor(t, "d.jsonl", "{\"q\": \"x\", \"n\": 1}\n{\"q\": \"y\"}\n", "  tags: {n: 'string(case.n)'}\n")
	ps := problems(t, sp)
	want := `d.jsonl:2:1: tag "n": no such key: n (use has(case.FIELD) ? … : … for fields some cases lack)`
	if len(ps) != 1 || ps[0] != want {
		t.Errorf("problems = %q, want [%q]", ps, want)
	}
}
