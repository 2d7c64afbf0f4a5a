package spec

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestDifficultySection(t *testing.T) {
	src := base + `difficulty:
  tag: tier
  levels: [easy, medium, hard]
  rubric:
    stakes: {rating: high, why: "the model answers customers' billing questions"}
    domain: {rating: low, why: same domain}
`
	sp, ps := parse(t, src)
	if ps != nil {
		t.Fatal(ps)
	}
	d := sp.Difficulty
	if d == nil || d.Tag != "tier" || !slices.Equal(d.Levels, []string{"easy", "medium", "hard"}) ||
		d.Rubric.Stakes.Rating != "high" || d.Rubric.Stakes.Why != "the model answers customers' billing questions" || d.Rubric.Domain.Rating != "low" {
		t.Errorf("decoded %+v", d)
	}
	// A numeric tag needs no levels; a spec without the section has none.
	if sp, ps := parse(t, base+"difficulty: {tag: steps}\n"); ps != nil || sp.Difficulty.Tag != "steps" || sp.Difficulty.Levels != nil {
		t.Errorf("tag only: %+v %v", sp.Difficulty, ps)
	}
	if sp, ps := parse(t, base); ps != nil || sp.Difficulty != nil {
		t.Errorf("no section: %+v %v", sp.Difficulty, ps)
	}
}

func TestDifficultyProblems(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"empty tag", "difficulty:\n  tag: ' '\n", []string{
			"s.yaml:10:8: difficulty.tag is empty (the name of a case tag (a key of dataset.tags) or of a dataset field, such as tier)",
		}},
		{"control in tag", "difficulty:\n  tag: \"a\\tb\"\n", []string{
			`s.yaml:10:8: difficulty.tag "a\tb" is not a valid name (the name of a case tag (a key of dataset.tags) or of a dataset field, such as tier)`,
		}},
		{"levels without tag", "difficulty:\n  levels: [easy, hard]\n", []string{
			"s.yaml:10:3: difficulty.levels is given without difficulty.tag (give difficulty.tag, the tag whose values these levels order)",
		}},
		{"bad levels", "difficulty:\n  tag: tier\n  levels: [easy, '', hard, easy]\n", []string{
			"s.yaml:11:18: difficulty.levels[1] is empty (a value of the tag, such as hard; levels are listed easiest first)",
			`s.yaml:11:28: level "easy" is listed twice (first at difficulty.levels[0]) (list each level once, easiest first)`,
		}},
		{"levels not a list", "difficulty:\n  tag: tier\n  levels: easy\n", []string{
			`s.yaml:11:11: difficulty.levels must be a list, got the string "easy"`,
		}},
		{"rubric", "difficulty:\n  rubric:\n    stakes: {rating: medium, why: x}\n    domain: {rating: low}\n", []string{
			`s.yaml:11:22: difficulty.rubric.stakes.rating must be low or high, got "medium" (low or high)`,
			"s.yaml:12:5: difficulty.rubric.domain.why is missing: a rating needs its reason (a sentence saying why, shown in the report beside the rating)",
		}},
		{"rubric no rating", "difficulty:\n  rubric:\n    stakes: {why: lives depend on it}\n", []string{
			"s.yaml:11:5: difficulty.rubric.stakes.rating is missing (low or high)",
		}},
		{"unknown key", "difficulty:\n  rubric: {stake: {rating: high, why: x}}\n", []string{
			`s.yaml:10:12: unknown key "stake" in difficulty.rubric (did you mean "stakes"? valid keys are: domain, stakes)`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ps := parse(t, base+tc.src)
			got := ps.Error()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("problems lack %q:\n%s", w, got)
				}
			}
			if len(ps) != len(tc.want) {
				t.Errorf("%d problems, want %d:\n%s", len(ps), len(tc.want), got)
			}
		})
	}
}

// FuzzDifficultySection loads specs whose difficulty: values are arbitrary
// text: the loader never panics, every problem is located, and a spec
// that loads has a usable section (levels distinct and non-empty, ratings
// low or high with a reason).
func FuzzDifficultySection(f *testing.F) {
	f.Add("tier", "[easy, hard]", "high", "why")
	f.Add("''", "[a, a]", "medium", "")
	f.Add("[1]", "x", "{a: 1}", "null")
	f.Add("\"\\u0000\"", "['', ' ']", "low", "'a\\nb'")
	f.Fuzz(func(t *testing.T, tag, levels, rating, why string) {
		src := base + "difficulty:\n  tag: " + tag + "\n  levels: " + levels + "\n  rubric:\n    stakes: {rating: " + rating + ", why: " + why + "}\n"
		sp, err := Parse("f.yaml", []byte(src))
		var ps Problems
		if err != nil && !errors.As(err, &ps) {
			t.Fatalf("error %v is not Problems", err)
		}
		for _, p := range ps {
			if p.Line < 1 || p.Col < 1 || p.Msg == "" {
				t.Fatalf("bad problem %#v", p)
			}
		}
		if err != nil || sp.Difficulty == nil {
			return
		}
		d := sp.Difficulty
		seen := map[string]bool{}
		for _, l := range d.Levels {
			if strings.TrimSpace(l) == "" || seen[l] {
				t.Fatalf("a spec that loads has levels %q", d.Levels)
			}
			seen[l] = true
		}
		if len(d.Levels) > 0 && d.Tag == "" {
			t.Fatalf("a spec that loads has levels %q without a tag", d.Levels)
		}
		if s := d.Rubric.Stakes; s != nil && (s.Rating != "low" && s.Rating != "high" || strings.TrimSpace(s.Why) == "") {
			t.Fatalf("a spec that loads has stakes %+v", *s)
		}
	})
}
