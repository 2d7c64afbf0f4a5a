package scorer

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Normalisers are the names `normalize:` accepts, in the order they are
// documented. They are applied in the order the spec lists them, to both the
// output and the expected value.
func Normalisers() []string {
	return []string{"trim", "lower", "collapse_spaces", "no_commas", "nfc"}
}

// normaliser rewrites a string. Every normaliser is total (defined on any
// input, valid UTF-8 or not) and idempotent.
type normaliser func(string) string

func lookupNormaliser(name string) (normaliser, bool) {
	switch name {
	case "trim":
		return strings.TrimSpace, true
	case "lower":
		return strings.ToLower, true
	case "collapse_spaces":
		return collapseSpaces, true
	case "no_commas":
		return noCommas, true
	case "nfc":
		return norm.NFC.String, true
	}
	return nil, false
}

// collapseSpaces replaces every run of Unicode white space with one ASCII
// space. It does not trim: combine it with trim for that.
func collapseSpaces(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	inSpace := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			if !inSpace {
				b.WriteByte(' ')
			}
			inSpace = true
			continue
		}
		inSpace = false
		b.WriteRune(r)
	}
	return b.String()
}

// noCommas removes ASCII commas, so "1,234" equals "1234".
func noCommas(s string) string { return strings.ReplaceAll(s, ",", "") }

// normChain is a compiled `normalize:` list.
type normChain []normaliser

func (c normChain) apply(s string) string {
	for _, f := range c {
		s = f(s)
	}
	return s
}

// Normalize applies the named normalisers in order, as a scorer with that
// `normalize:` list does (unknown names are skipped: the spec check refuses
// them). analysis mirrors it to read labels without importing scorer.
func Normalize(names []string, s string) string {
	for _, name := range names {
		if f, ok := lookupNormaliser(name); ok {
			s = f(s)
		}
	}
	return s
}
