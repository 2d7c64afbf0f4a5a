package probe

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/assay-eval/assay/internal/dataset"
)

// The rewrite prompt is fixed: it is part of every rewriter twin set's ID
// (RewritePromptHash), so changing a word of it makes new twins rather than
// mixing paraphrases made two ways. The user message is RewriteInstruction,
// a blank line, and the fields to rewrite as a JSON object; the case's text
// is data in that object, never a template.
const (
	RewriteSystem = `You rewrite questions from an evaluation set so that a model that memorised the original wording cannot recognise them. ` +
		`Keep the meaning exactly: every number, quantity, name of a thing asked about, unit and condition, and so the correct answer, must stay the same. ` +
		`Change the wording and the sentence structure. Do not answer the question, do not add hints, do not leave anything out.`
	RewriteInstruction = `Rewrite the value of each field of this JSON object. ` +
		`Reply with only a JSON object that has exactly the same keys, each holding its rewritten text.`
)

// RewritePromptHash is "sha256:<hex>" over the rewrite prompt.
func RewritePromptHash() string {
	h := sha256.New()
	writeField(h, "system", RewriteSystem)
	writeField(h, "instruction", RewriteInstruction)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Failure kinds of a rewrite that made no twin.
const (
	FailCall        = "call_error"  // the rewriter's call failed
	FailUnparseable = "unparseable" // no JSON object with the fields asked for
	FailEmpty       = "empty"       // a field came back empty
	FailUnchanged   = "unchanged"   // a field came back as it was: not a paraphrase
)

// Failure is a case the rewriter made no twin for. Reason may quote the
// rewriter's reply (clipped and quoted): it is model output, shown as data.
type Failure struct {
	CaseID string `json:"case_id"`
	Kind   string `json:"kind"`
	Reason string `json:"reason"`
}

// TextFields returns c's values of fields, which must all be text.
func TextFields(c *dataset.Case, fields []string) (map[string]string, error) {
	out := make(map[string]string, len(fields))
	for _, f := range fields {
		v, ok := c.Vars[f]
		if !ok {
			return nil, fmt.Errorf("case %s (line %d) has no field %q to rewrite", c.ID, c.Line, f)
		}
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("case %s (line %d): field %q is not text; the rewriter rewrites text fields (name them with --field)", c.ID, c.Line, f)
		}
		out[f] = s
	}
	return out, nil
}
