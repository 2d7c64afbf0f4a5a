// Package rewriter asks a model for a contamination probe's twins: the
// fixed rewrite prompt sent to the rewriter target (Messages), its reply
// read as a JSON object of paraphrased fields (Parse), and the twin that
// results (Rewrite). It is the part of the probe that calls a provider;
// internal/probe itself decides, stores and reports without one, so the
// report that renders a probe does not reach the provider interface.
package rewriter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/probe"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/scorer"
	"github.com/assay-eval/assay/internal/spec"
)

// Messages is the request that asks for a paraphrase of fields: the
// fixed prompt (probe.RewriteSystem, probe.RewriteInstruction), the
// fields as JSON data.
func Messages(fields map[string]string) ([]provider.Message, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(fields); err != nil {
		return nil, err
	}
	return []provider.Message{
		{Role: "system", Content: probe.RewriteSystem},
		{Role: "user", Content: probe.RewriteInstruction + "\n\n" + strings.TrimSpace(buf.String())},
	}, nil
}

// Rewrite asks the rewriter p (target t, already wrapped with its limits,
// retries and cache) for a paraphrase of c's fields and returns the twin,
// or the reason there is none. The twin keeps c's other fields and its
// expected value.
func Rewrite(ctx context.Context, p provider.Provider, t *spec.Target, c *dataset.Case, fields []string) (*probe.Twin, *probe.Failure) {
	orig, err := probe.TextFields(c, fields)
	if err != nil {
		return nil, &probe.Failure{CaseID: c.ID, Kind: probe.FailUnparseable, Reason: err.Error()}
	}
	msgs, err := Messages(orig)
	if err != nil {
		return nil, &probe.Failure{CaseID: c.ID, Kind: probe.FailCall, Reason: err.Error()}
	}
	resp, err := p.Complete(ctx, &provider.Request{Model: t.Model, Messages: msgs, Params: provider.Params(t.Params), CaseID: c.ID, Vars: c.Vars, Epoch: 1})
	if err != nil {
		return nil, &probe.Failure{CaseID: c.ID, Kind: probe.FailCall, Reason: err.Error()}
	}
	rewritten, fail := Parse(resp.Text, orig)
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
	return &probe.Twin{CaseID: c.ID, Line: c.Line, Vars: vars}, nil
}

// Parse reads a rewriter's reply: a JSON object (alone, in a ```
// fence, or amid prose) holding, for every field of orig, non-empty text
// that differs from the original beyond white space and case. Other keys
// are ignored. The failure's CaseID is left for the caller.
func Parse(reply string, orig map[string]string) (map[string]string, *probe.Failure) {
	v, err := scorer.ExtractJSON(reply)
	if err != nil {
		if strings.TrimSpace(reply) == "" {
			return nil, &probe.Failure{Kind: probe.FailEmpty, Reason: "the reply is empty"}
		}
		return nil, &probe.Failure{Kind: probe.FailUnparseable, Reason: fmt.Sprintf("%v; reply %s", err, preview(reply))}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, &probe.Failure{Kind: probe.FailUnparseable, Reason: "the reply's JSON is not an object; reply " + preview(reply)}
	}
	out := make(map[string]string, len(orig))
	for _, f := range sortedKeys(orig) {
		x, ok := obj[f]
		if !ok {
			return nil, &probe.Failure{Kind: probe.FailUnparseable, Reason: fmt.Sprintf("the reply has no field %q; reply %s", f, preview(reply))}
		}
		s, ok := x.(string)
		if !ok {
			return nil, &probe.Failure{Kind: probe.FailUnparseable, Reason: fmt.Sprintf("field %q of the reply is not text; reply %s", f, preview(reply))}
		}
		s = strings.TrimSpace(s)
		if s == "" {
			return nil, &probe.Failure{Kind: probe.FailEmpty, Reason: fmt.Sprintf("field %q came back empty", f)}
		}
		if sameText(s, orig[f]) {
			return nil, &probe.Failure{Kind: probe.FailUnchanged, Reason: fmt.Sprintf("field %q came back unchanged", f)}
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
