package scorer

import (
	"fmt"
	"regexp"
	"strings"

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
	return apostrophes.Replace(strings.ToLower(s))
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
		low := foldRefusal(raw)
		for _, p := range d.phrases {
			if strings.Contains(low, p) {
				return fmt.Sprintf("phrase %q", p), true
			}
		}
	}
	if d.pattern != nil {
		if loc := d.pattern.FindStringIndex(raw); loc != nil {
			return fmt.Sprintf("pattern matched %q", clip(raw[loc[0]:loc[1]], 40)), true
		}
	}
	return "", false
}
