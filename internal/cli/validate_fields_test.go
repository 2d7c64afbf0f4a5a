package cli

import (
	"strings"
	"testing"
)

// validate --deep on an extraction dataset whose expected answers are
// objects shows each field's distribution: a text field's values with
// counts and shares, a numeric field's range and median (not its values),
// in text and in JSON. Figures by hand from
// internal/dataset/testdata/health/invoices.jsonl.
func TestValidateDeepObjectLabels(t *testing.T) {
	t.Parallel()
	path := healthFixture(t, "invoices.jsonl", "  id: id\n  expected: expected\n")
	inv := runCLI(t, cliEnv{}, "validate", path, "--deep")
	if inv.code != 0 {
		t.Fatalf("exit %d\n%s%s", inv.code, inv.stdout, inv.stderr)
	}
	out := inv.stdout
	for _, want := range []string{
		"    by field (8 of the values are objects):\n",
		"      currency: 3 distinct value(s) in 8 case(s)\n",
		"        EUR      5   62.5%\n",
		"        USD      2   25.0%\n",
		"        GBP      1   12.5%\n",
		"      total: numeric in 7 case(s); missing or null in 1: min 1.5, median 12, max 12442\n",
		"      vendor: 4 distinct value(s) in 7 case(s); missing or null in 1\n",
		"        Acme      3   42.9%\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("validate --deep lacks %q:\n%s", want, out)
		}
	}
	// The numeric field's values are not listed one by one.
	if strings.Contains(out, "12442  ") || strings.Contains(out, "   1.5 ") {
		t.Errorf("a numeric field's values are listed:\n%s", out)
	}

	rep := validateJSON(t, 0, path, "--deep")
	cur := get(t, rep, "health", "labels", "fields", 1)
	if get(t, cur, "field") != "currency" || get(t, cur, "top", 0, "value") != "EUR" || get(t, cur, "top", 0, "count") != 5.0 {
		t.Errorf("JSON currency field %v", cur)
	}
	total := get(t, rep, "health", "labels", "fields", 3)
	if get(t, total, "field") != "total" || get(t, total, "numeric") != true || get(t, total, "median") != 12.0 || get(t, total, "top") != nil {
		t.Errorf("JSON total field %v", total)
	}
}
