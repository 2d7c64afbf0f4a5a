package probe

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/scorer"
	"github.com/assay-eval/assay/internal/spec"
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

// RewriteMessages is the request that asks for a paraphrase of fields.
func RewriteMessages(fields map[string]string) ([]provider.Message, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(fields); err != nil {
		return nil, err
	}
	return []provider.Message{
		{Role: "system", Content: RewriteSystem},
		{Role: "user", Content: RewriteInstruction + "\n\n" + strings.TrimSpace(buf.String())},
	}, nil
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

// Rewrite asks the rewriter p (target t, already wrapped with its limits,
// retries and cache) for a paraphrase of c's fields and returns the twin,
// or the reason there is none. The twin keeps c's other fields and its
// expected value.
func Rewrite(ctx context.Context, p provider.Provider, t *spec.Target, c *dataset.Case, fields []string) (*Twin, *Failure) {
	orig, err := TextFields(c, fields)
	if err != nil {
		return nil, &Failure{CaseID: c.ID, Kind: FailUnparseable, Reason: err.Error()}
	}
	msgs, err := RewriteMessages(orig)
	if err != nil {
		return nil, &Failure{CaseID: c.ID, Kind: FailCall, Reason: err.Error()}
	}
	resp, err := p.Complete(ctx, &provider.Request{Model: t.Model, Messages: msgs, Params: provider.Params(t.Params), CaseID: c.ID, Vars: c.Vars, Epoch: 1})
	if err != nil {
		return nil, &Failure{CaseID: c.ID, Kind: FailCall, Reason: err.Error()}
	}
	rewritten, fail := ParseRewrite(resp.Text, orig)
	if fail != nil {
		fail.CaseID = c.ID
		return nil, fail
	}
	vars := make(map[string]any, len(c.Vars))
	for k, v := range c.Vars {
		vars[k] = v
	}
	for k, v := range rewritten {
		vars[k] = v
	}
	return &Twin{CaseID: c.ID, Line: c.Line, Vars: vars}, nil
}

// ParseRewrite reads a rewriter's reply: a JSON object (alone, in a ```
// fence, or amid prose) holding, for every field of orig, non-empty text
// that differs from the original beyond white space and case. Other keys
// are ignored. The failure's CaseID is left for the caller.
func ParseRewrite(reply string, orig map[string]string) (map[string]string, *Failure) {
	v, err := scorer.ExtractJSON(reply)
	if err != nil {
		if strings.TrimSpace(reply) == "" {
			return nil, &Failure{Kind: FailEmpty, Reason: "the reply is empty"}
		}
		return nil, &Failure{Kind: FailUnparseable, Reason: fmt.Sprintf("%v; reply %s", err, preview(reply))}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, &Failure{Kind: FailUnparseable, Reason: "the reply's JSON is not an object; reply " + preview(reply)}
	}
	out := make(map[string]string, len(orig))
	for _, f := range sortedKeys(orig) {
		x, ok := obj[f]
		if !ok {
			return nil, &Failure{Kind: FailUnparseable, Reason: fmt.Sprintf("the reply has no field %q; reply %s", f, preview(reply))}
		}
		s, ok := x.(string)
		if !ok {
			return nil, &Failure{Kind: FailUnparseable, Reason: fmt.Sprintf("field %q of the reply is not text; reply %s", f, preview(reply))}
		}
		s = strings.TrimSpace(s)
		if s == "" {
			return nil, &Failure{Kind: FailEmpty, Reason: fmt.Sprintf("field %q came back empty", f)}
		}
		if sameText(s, orig[f]) {
			return nil, &Failure{Kind: FailUnchanged, Reason: fmt.Sprintf("field %q came back unchanged", f)}
		}
		out[f] = s
	}
	return out, nil
}

// sameText compares two texts ignoring case and runs of white space.
func sameText(a, b string) bool {
	return strings.EqualFold(strings.Join(strings.Fields(a), " "), strings.Join(strings.Fields(b), " "))
}

// preview quotes the start of a reply for a message (model output is shown
// as a Go-quoted string, so it cannot forge lines or control the terminal).
func preview(s string) string {
	const max = 80
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + "…"
	}
	return strconv.Quote(s)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
