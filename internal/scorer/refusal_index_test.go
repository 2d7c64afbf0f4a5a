package scorer

import (
	"strings"
	"testing"
)

// naiveFirst is the definition firstMatch must keep: the first phrase, in
// list order, that the text contains.
func naiveFirst(s string, phrases []string) int {
	for i, p := range phrases {
		if strings.Contains(s, p) {
			return i
		}
	}
	return -1
}

func TestPhraseIndexFindsTheFirstPhraseInListOrder(t *testing.T) {
	phrases := append(DefaultRefusalPhrases(), "x", "sorry", "i can't")
	idx := newPhraseIndex(phrases)
	for _, s := range []string{
		"",
		"i",
		"sure, here it is.",
		"i'm sorry, but i can't do that", // two phrases: the first listed wins
		"as an ai, i think i can't help with this", // "i can't help with" (0) before "as an ai, i"
		"x marks the spot",
		"ends with i can't help with",
		"i can't help wit",
		strings.Repeat("i i i ", 1000) + "i must decline",
		"sorry",
		"i cannot comply" + strings.Repeat(" ", 5),
	} {
		if got, want := idx.firstMatch(s, phrases), naiveFirst(s, phrases); got != want {
			t.Errorf("%q: firstMatch %d, want %d", s, got, want)
		}
	}
}

func FuzzPhraseIndex(f *testing.F) {
	f.Add("i'm sorry, but i cannot", "i cannot|sorry|i'm")
	f.Add("aaaa", "a|aa|aaa")
	f.Add("", "x")
	f.Fuzz(func(t *testing.T, s, list string) {
		var phrases []string
		for _, p := range strings.Split(list, "|") {
			if p != "" {
				phrases = append(phrases, p)
			}
		}
		idx := newPhraseIndex(phrases)
		if got, want := idx.firstMatch(s, phrases), naiveFirst(s, phrases); got != want {
			t.Fatalf("%q in %q: firstMatch %d, want %d", phrases, s, got, want)
		}
	})
}

// A reply of ~2 KB of ordinary prose with no refusal in it, the common case.
func BenchmarkRefusalDetect(b *testing.B) {
	text := strings.Repeat("I think it is likely that the invoice total is 42.50 and I can check it again if it is needed. ", 20)
	d := &refusalDetector{phrases: DefaultRefusalPhrases()}
	b.Run("index", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			if _, ok := d.detect(text, "stop", true); ok {
				b.Fatal("refusal found in prose")
			}
		}
	})
	b.Run("contains-per-phrase", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			low := strings.ToLower(text)
			low = apostrophes.Replace(low)
			if naiveFirst(low, d.phrases) >= 0 {
				b.Fatal("refusal found in prose")
			}
		}
	})
}

// The case-folding scan over the raw text finds what the scan over the
// lowered text finds, for ASCII phrases and a text without the folded
// apostrophes.
func FuzzPhraseIndexFold(f *testing.F) {
	f.Add("I'M SORRY, BUT I CANNOT", "i cannot|sorry|i'm")
	f.Add("As An AI, I", "as an ai, i")
	f.Add("aAaA", "a|aa|aaa")
	f.Fuzz(func(t *testing.T, s, list string) {
		var phrases []string
		for _, p := range strings.Split(strings.ToLower(list), "|") {
			if p == "" {
				continue
			}
			for i := 0; i < len(p); i++ {
				if p[i] >= 0x80 {
					return // the fold scan is for ASCII phrases only
				}
			}
			phrases = append(phrases, p)
		}
		for i := 0; i < len(s); i++ {
			if s[i] >= 0x80 {
				return // non-ASCII text: ToLower may change its length
			}
		}
		idx := newPhraseIndex(phrases)
		if got, want := idx.firstMatchFold(s, phrases), naiveFirst(strings.ToLower(s), phrases); got != want {
			t.Fatalf("%q in %q: firstMatchFold %d, want %d", phrases, s, got, want)
		}
	})
}
