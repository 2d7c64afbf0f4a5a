package scorer

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/assay-eval/assay/internal/spec"
)

// DefaultRefusalPhrases are matched, case-insensitively and with curly
// apostrophes read as straight ones, anywhere in the reply when the spec has
// no `refusal:` section. They are refusal-specific on purpose: a phrase that
// also occurs in ordinary answers would turn right answers into refusals.
func DefaultRefusalPhrases() []string {
	return []string{
		"i can't help with",
		"i cannot help with",
		"i can't assist",
		"i cannot assist",
		"i'm sorry, but i can't",
		"i'm sorry, but i cannot",
		"i am sorry, but i cannot",
		"i'm sorry, i can't",
		"i'm unable to help",
		"i am unable to help",
		"i'm not able to help",
		"i won't be able to help",
		"i can't comply",
		"i cannot comply",
		"i must decline",
		"as an ai language model",
		"as an ai, i",
	}
}

// refusalDetector decides whether a reply is a refusal.
type refusalDetector struct {
	phrases []string // lower case, straight apostrophes
	pattern *regexp.Regexp
	index   phraseIndex // built from phrases on first use
	once    sync.Once
}

// phraseIndex finds, in one pass over a text, the first of a list of
// phrases (in list order) that occurs in it: every reply of a run is
// checked, and a Contains per phrase read each reply once per phrase.
// Phrases are grouped by their first two bytes (a bitmap of the pairs in
// use spares the lookup at most positions); a one-byte phrase is checked
// on its own. When every phrase is ASCII the text need not be lowered
// first: firstMatchFold compares ASCII letters case-insensitively.
type phraseIndex struct {
	first  [256]bool
	pairs  [1024]uint64     // bit p set: some phrase starts with pair p
	byPair map[uint16][]int // phrase indices, ascending
	single []int            // one-byte phrases
	ascii  bool             // every phrase is ASCII
}

func newPhraseIndex(phrases []string) phraseIndex {
	x := phraseIndex{byPair: map[uint16][]int{}, ascii: true}
	for i, p := range phrases {
		for j := 0; j < len(p); j++ {
			if p[j] >= 0x80 {
				x.ascii = false
			}
		}
		if len(p) == 1 {
			x.single = append(x.single, i)
			continue
		}
		x.first[p[0]] = true
		k := uint16(p[0])<<8 | uint16(p[1])
		x.pairs[k>>6] |= 1 << (k & 63)
		x.byPair[k] = append(x.byPair[k], i)
	}
	return x
}

// firstMatch returns the lowest index of a phrase occurring in s, or -1.
func (x *phraseIndex) firstMatch(s string, phrases []string) int {
	return x.scan(s, phrases, func(b byte) byte { return b }, strings.HasPrefix)
}

// firstMatchFold is firstMatch of foldRefusal(s), for phrases that are
// all ASCII (x.ascii) and a text without the apostrophes foldRefusal
// straightens: ASCII letters compare case-insensitively, and no lowered
// copy of the text is made. Only an ASCII byte can begin a match, so a
// non-ASCII letter whose lower case is ASCII (the Kelvin sign) is the one
// difference from lowering the text, and it matches no phrase's letter
// there either way but "k" — accepted.
func (x *phraseIndex) firstMatchFold(s string, phrases []string) int {
	return x.scan(s, phrases, lowerASCII, hasPrefixFold)
}

func (x *phraseIndex) scan(s string, phrases []string, low func(byte) byte, hasPrefix func(s, p string) bool) int {
	best := len(phrases)
	for _, i := range x.single {
		if i < best && containsWith(s, phrases[i], hasPrefix) {
			best = i
		}
	}
	for i := 0; i+1 < len(s); i++ {
		b := low(s[i])
		if !x.first[b] {
			continue
		}
		k := uint16(b)<<8 | uint16(low(s[i+1]))
		if x.pairs[k>>6]&(1<<(k&63)) == 0 {
			continue
		}
		for _, p := range x.byPair[k] {
			if p >= best {
				break // ascending: no better phrase here
			}
			if hasPrefix(s[i:], phrases[p]) {
				best = p
				break
			}
		}
		if best == 0 {
			break
		}
	}
	if best == len(phrases) {
		return -1
	}
	return best
}

func containsWith(s, p string, hasPrefix func(s, p string) bool) bool {
	for i := 0; i+len(p) <= len(s); i++ {
		if hasPrefix(s[i:], p) {
			return true
		}
	}
	return false
}

func lowerASCII(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

// hasPrefixFold reports whether s begins with p (lower-case ASCII),
// ASCII letters of s compared case-insensitively.
func hasPrefixFold(s, p string) bool {
	if len(s) < len(p) {
		return false
	}
	for i := 0; i < len(p); i++ {
		if lowerASCII(s[i]) != p[i] {
			return false
		}
	}
	return true
}

// newRefusalDetector builds the detector from the spec's `refusal:` section:
// nil means DefaultRefusalPhrases(); otherwise exactly its phrases and pattern
// (so `refusal: {}` turns phrase detection off). A finish reason of refusal
// or content_filter is always a refusal.
func newRefusalDetector(sp *spec.Spec) (*refusalDetector, []spec.Problem) {
	d := &refusalDetector{}
	if sp.Refusal == nil {
		d.phrases = DefaultRefusalPhrases()
		return d, nil
	}
	var probs []spec.Problem
	for i, p := range sp.Refusal.Phrases {
		p = foldRefusal(p)
		if strings.TrimSpace(p) == "" {
			probs = append(probs, sp.Problemf(fmt.Sprintf("refusal.phrases[%d]", i), "", "refusal phrase is empty; it would match every reply"))
			continue
		}
		d.phrases = append(d.phrases, p)
	}
	if sp.Refusal.Pattern != "" {
		re, err := regexp.Compile(sp.Refusal.Pattern)
		switch {
		case err != nil:
			probs = append(probs, sp.Problemf("refusal.pattern", "Go RE2 syntax; see https://pkg.go.dev/regexp/syntax", "refusal pattern is not a valid regular expression: %v", err))
		case re.MatchString(""):
			probs = append(probs, sp.Problemf("refusal.pattern", "", "refusal pattern %q matches the empty string, so it would match every reply", sp.Refusal.Pattern))
		default:
			d.pattern = re
		}
	}
	return d, probs
}

// foldRefusal lowers s and straightens apostrophes.
func foldRefusal(s string) string {
	s = strings.ToLower(s)
	if !hasFoldedApostrophe(s) {
		return s
	}
	return apostrophes.Replace(s)
}

// hasFoldedApostrophe reports whether s may hold an apostrophe that
// foldRefusal straightens: each begins with byte 0xE2 (U+2018, U+2019) or
// 0xCA (U+02BC).
func hasFoldedApostrophe(s string) bool {
	return strings.IndexByte(s, 0xE2) >= 0 || strings.IndexByte(s, 0xCA) >= 0
}

// apostrophes folds typographic apostrophes to ASCII. A Replacer is safe
// for concurrent use and never changes after it is built.
var apostrophes = strings.NewReplacer("\u2019", "'", "\u2018", "'", "\u02bc", "'")

// detect returns the matched phrase (or a description) when raw is a
// refusal. The finish reason always counts; phrases and the pattern only
// when byText.
func (d *refusalDetector) detect(raw, finishReason string, byText bool) (string, bool) {
	// Finish reasons by which a provider says the model refused or was filtered.
	for _, fr := range []string{"refusal", "content_filter"} {
		if strings.EqualFold(finishReason, fr) {
			return "finish reason " + fr, true
		}
	}
	if !byText {
		return "", false
	}
	if len(d.phrases) > 0 {
		d.once.Do(func() { d.index = newPhraseIndex(d.phrases) })
		var i int
		if d.index.ascii && !hasFoldedApostrophe(raw) {
			i = d.index.firstMatchFold(raw, d.phrases)
		} else {
			i = d.index.firstMatch(foldRefusal(raw), d.phrases)
		}
		if i >= 0 {
			return fmt.Sprintf("phrase %q", d.phrases[i]), true
		}
	}
	if d.pattern != nil {
		if loc := d.pattern.FindStringIndex(raw); loc != nil {
			return fmt.Sprintf("pattern matched %q", clip(raw[loc[0]:loc[1]], 40)), true
		}
	}
	return "", false
}
