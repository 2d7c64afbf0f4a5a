package runview

import (
	"fmt"
	"reflect"
	"testing"
)

// The number a snapshot holds is the hash the baseline file writes.
func TestOutputSumIsOutputHash(t *testing.T) {
	for _, raw := range []string{"", "hi", "the answer is 4", "\x00\xff"} {
		if got := fmt.Sprintf("%016x", OutputSum(raw)); got != OutputHash(raw) {
			t.Errorf("%q: OutputSum %s, OutputHash %s", raw, got, OutputHash(raw))
		}
	}
}

// Tags are answered per case and key: a case without the key has none, an
// empty value is a value, and cases added after a tag was set have none.
func TestCaseTags(t *testing.T) {
	s := &View{}
	s.AddCase("a", map[string]string{"tier": "hard", "lang": ""})
	s.AddCase("b", nil)
	s.AddCase("c", map[string]string{"tier": "hard"})
	s.AddCase("d", map[string]string{"tier": "easy"})
	s.AddCase("e", nil)
	for _, tc := range []struct {
		i        int
		key, val string
		ok       bool
	}{{0, "tier", "hard", true}, {0, "lang", "", true}, {1, "tier", "", false}, {2, "tier", "hard", true},
		{2, "lang", "", false}, {3, "tier", "easy", true}, {4, "tier", "", false}, {0, "none", "", false}} {
		if v, ok := s.Tag(tc.i, tc.key); v != tc.val || ok != tc.ok {
			t.Errorf("Tag(%d, %q) = %q, %v; want %q, %v", tc.i, tc.key, v, ok, tc.val, tc.ok)
		}
	}
	if got := s.CaseTags(0); !reflect.DeepEqual(got, map[string]string{"tier": "hard", "lang": ""}) {
		t.Errorf("CaseTags(0) = %v", got)
	}
	if s.CaseTags(1) != nil || s.CaseTags(4) != nil {
		t.Errorf("a case without tags has %v, %v", s.CaseTags(1), s.CaseTags(4))
	}
	if got := s.TagKeys(); !reflect.DeepEqual(got, []string{"lang", "tier"}) {
		t.Errorf("TagKeys() = %v", got)
	}
	if n := len(s.tags["tier"].values); n != 2 {
		t.Errorf("tier holds %d values, want 2 (interned)", n)
	}
}
