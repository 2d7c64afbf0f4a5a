package selftest

import (
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/scorer"
	"github.com/assay-eval/assay/internal/selftest/findings"
)

// The rule's text quotes its own constants in the units forms (it was
// written with %g before): 95% and 2 points, as the help text says.
func TestRuleTextQuotesTheConstants(t *testing.T) {
	t.Parallel()
	rep := run(t, "testdata/sound_labels.yaml", Options{})
	for _, want := range []string{"(simultaneous 95% over the scorer's null-model × mode cells, Bonferroni)", "exceeds its chance rate + 2 points"} {
		if !strings.Contains(rep.Rule.Text, want) {
			t.Errorf("rule text %q lacks %q", rep.Rule.Text, want)
		}
	}
}

// findings spells the scorer roles out (it imports nothing of assay); they
// must stay scorer's.
func TestRolesAreTheScorers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		findings string
		scorer   scorer.Role
	}{{findings.RoleCorrectness, scorer.RoleCorrectness}, {findings.RoleForm, scorer.RoleForm}, {findings.RoleCall, scorer.RoleCall}} {
		if c.findings != string(c.scorer) {
			t.Errorf("findings' role %q is scorer's %q", c.findings, c.scorer)
		}
	}
}
