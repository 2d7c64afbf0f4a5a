package sqlite

import (
	"strings"
	"testing"
)

// The light streams read a million results in seconds only if they walk
// indexes in order: no whole-table scan, no sort of the run's rows. ("SCAN
// o" walks the co-routine of a run's distinct case IDs, read from the
// results' unique index.)
func TestLightQueriesUseIndexes(t *testing.T) {
	d := openTemp(t)
	for name, q := range map[string]string{
		"resultKeysOfCases":        resultKeysOfCases,
		"resultKeysOfUnknownCases": resultKeysOfUnknownCases,
		"verdictsOf":               verdictsOf,
	} {
		rows, err := d.r.Query("EXPLAIN QUERY PLAN "+q, "r", 1, "judge")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		for _, step := range plan {
			if strings.Contains(step, "TEMP B-TREE") && !strings.Contains(step, "FOR LAST") || strings.HasPrefix(step, "SCAN") && !strings.Contains(step, "INDEX") && step != "SCAN o" {
				t.Errorf("%s: the plan sorts or scans a whole table (%q); plan: %q", name, step, plan)
			}
		}
		if name == "verdictsOf" && !strings.Contains(strings.Join(plan, " "), "INDEX") {
			t.Errorf("verdictsOf: the plan uses no index: %q", plan)
		}
		t.Logf("%s: %q", name, plan)
	}
}
