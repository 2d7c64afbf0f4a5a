package longtest

import "testing"

func TestEnabled(t *testing.T) {
	for _, c := range []struct {
		long, ci string
		want     bool
	}{
		{"", "", false},
		{"1", "", true},
		{"", "true", true},
		{"0", "false", false},
		{"yes", "", false}, // only "1" turns them on: a typo never does silently
	} {
		t.Setenv(Env, c.long)
		t.Setenv("CI", c.ci)
		if got := Enabled(); got != c.want {
			t.Errorf("%s=%q CI=%q: Enabled() = %v, want %v", Env, c.long, c.ci, got, c.want)
		}
	}
}
