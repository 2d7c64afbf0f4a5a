package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/toolrun"
)

// KindMaxTurns is a result's error kind when the model still called tools
// after the agent's max_turns model calls: a loud failure of the model.
const KindMaxTurns = "max_turns"

// Kinds lists every error kind a result's failed call can carry: the
// provider's (provider.Kinds) and, for an agent loop, a tool handler's
// failures (toolrun.Kinds). run --retry-errors and run health read them.
// KindMaxTurns is not one: it is the model's failure, not the call's.
func Kinds() []string {
	var out []string
	for _, k := range provider.Kinds() {
		out = append(out, string(k))
	}
	return append(out, toolrun.Kinds()...)
}

// Agent makes each unit a tool-calling loop (spec agent:): the model is
// called with the messages so far and the tools; each call it makes is
// answered by its tool's handler, in order, and the model called again
// with the results, until it answers without a call (the result: its
// text) or MaxTurns model calls were made (KindMaxTurns, loud). A
// handler's *toolrun.Error ends the loop with its kind (loud). The whole
// trajectory is the result's Turns; the result is handed to the writer
// only when the conversation ends, so an interrupted conversation is not
// stored and a resume starts it again from its start.
type Agent struct {
	MaxTurns int
	// Handlers answer the calls of each tool, by the tool's name.
	Handlers map[string]toolrun.Handler
	// Withhold names case fields a handler is not given in Call.Vars (the
	// expected answer).
	Withhold []string
	// Redact hides the secrets the spec names (a handler's env: among
	// them) in what a handler answers, before it is sent to the model or
	// stored; nil hides nothing.
	Redact *provider.Redactor
}

// loop runs one unit's conversation, filling r. ok is false when it was
// aborted by cancellation or not made because the target is unavailable
// (then unavailable is told): such a result is not stored.
func (o *Options) loop(ctx context.Context, t *Target, j job, r *record.Result, unavailable func(*provider.UnavailableError)) bool {
	a := o.Agent
	msgs := slices.Clip(j.msgs) // appends copy: the rendered messages are shared by the epochs
	vars := handlerVars(j.c, a.Withhold)
	r.Attempts = 1
	cachedAll := true
	for turn := 1; ; turn++ {
		req := o.request(t, j, msgs)
		start := o.Now()
		resp, err := t.Provider.Complete(ctx, req)
		if err != nil {
			kind, stored := failed(ctx, err, unavailable)
			if !stored {
				return false
			}
			r.ErrorKind = string(kind)
			r.Error = err.Error()
			if turn > 1 {
				r.Error = fmt.Sprintf("model call %d: %s", turn, r.Error)
			}
			r.Attempts += max(provider.Attempts(err), 1) - 1
			r.Redactions += provider.Redactions(err)
			r.LatencyMS += ms(o.Now().Sub(start))
			r.FromCache = false
			return true
		}
		tr := record.Turn{
			Text:         resp.Text,
			ToolCalls:    ToolCalls(resp.ToolCalls),
			FinishReason: resp.FinishReason,
			InputTokens:  resp.Usage.Input,
			OutputTokens: resp.Usage.Output,
			LatencyMS:    ms(resp.Latency),
			FirstTokenMS: ms(resp.FirstToken),
			FromCache:    resp.Cached,
		}
		// Each turn is priced; one served from the cache is not billed
		// again (its price is saved spend), like a single call.
		price := t.Spec.Price.Cost(resp.Usage.Input, resp.Usage.Output, resp.Usage.Cached)
		if resp.Cached {
			r.SavedUSD += price
		} else {
			tr.CostUSD = price
			r.CostUSD += price
		}
		cachedAll = cachedAll && resp.Cached
		r.Raw = resp.Text
		r.FinishReason = resp.FinishReason
		r.ToolCalls = append(r.ToolCalls, tr.ToolCalls...)
		r.InputTokens += resp.Usage.Input
		r.OutputTokens += resp.Usage.Output
		r.CachedTokens += resp.Usage.Cached
		r.LatencyMS += tr.LatencyMS
		if turn == 1 {
			r.FirstTokenMS = tr.FirstTokenMS
		}
		r.Attempts += max(resp.Attempts, 1) - 1
		r.Model = resp.Model
		r.Fingerprint = resp.SystemFingerprint
		r.Redactions += resp.Redactions
		r.FromCache = cachedAll
		r.Turns = append(r.Turns, tr)
		if len(resp.ToolCalls) == 0 {
			return true // the model answered
		}
		if turn >= a.MaxTurns {
			r.ErrorKind = KindMaxTurns
			r.Error = fmt.Sprintf("the model still called tools (%s) after %d model calls: agent.max_turns is %d",
				callNames(resp.ToolCalls), turn, a.MaxTurns)
			return true
		}
		// Answer every call in order; the assistant's message carries the
		// calls (each with an ID, made up when the provider gave none, so
		// every tool message names the call it answers).
		calls := slices.Clone(resp.ToolCalls)
		results := make([]record.ToolResult, 0, len(calls))
		tool := make([]provider.Message, 0, len(calls))
		for i := range calls {
			c := &calls[i]
			if c.ID == "" {
				c.ID = fmt.Sprintf("call_%d_%d", turn, i+1)
			}
			res, ended, hidden := o.answer(ctx, a, c, j.c.ID, vars, turn)
			r.Redactions += hidden
			if ctx.Err() != nil {
				return false // a handler cut short by cancellation: not stored
			}
			results = append(results, res)
			if ended != nil {
				r.Turns[len(r.Turns)-1].Results = results
				r.ErrorKind = ended.Kind
				r.Error = fmt.Sprintf("model call %d: %s", turn, ended.Error())
				return true
			}
			tool = append(tool, provider.Message{Role: "tool", Content: res.Content, ToolCallID: c.ID})
		}
		r.Turns[len(r.Turns)-1].Results = results
		msgs = append(msgs, provider.Message{Role: "assistant", Content: resp.Text, ToolCalls: calls})
		msgs = append(msgs, tool...)
	}
}

// answer answers one call: arguments that are not one JSON object and a
// tool no handler answers get an error message the model reads (the loop
// goes on); a handler's failure ends the loop (ended set). hidden counts
// the secrets redacted from the handler's answer.
func (o *Options) answer(ctx context.Context, a *Agent, c *provider.ToolCall, caseID string, vars map[string]any, turn int) (res record.ToolResult, ended *toolrun.Error, hidden int) {
	res = record.ToolResult{CallID: c.ID, Name: c.Name}
	if why := notObject(c.Arguments); why != "" {
		res.Content = "error: the arguments are not a JSON object: " + why
		return res, nil, 0
	}
	h, ok := a.Handlers[c.Name]
	if !ok {
		res.Content = fmt.Sprintf("error: there is no tool named %q; the tools are: %s", c.Name, strings.Join(handlerNames(a), ", "))
		return res, nil, 0
	}
	start := o.Now()
	out, err := h.Call(ctx, toolrun.Call{CaseID: caseID, Vars: vars, Tool: c.Name, CallID: c.ID, Arguments: c.Arguments, Turn: turn})
	res.LatencyMS = ms(o.Now().Sub(start))
	res.Content, hidden = a.Redact.Redact(out)
	if err == nil {
		return res, nil, hidden
	}
	var te *toolrun.Error
	if !errors.As(err, &te) {
		te = &toolrun.Error{Kind: toolrun.KindFailed, Tool: c.Name, Msg: err.Error()}
	}
	msg, n := a.Redact.Redact(te.Msg)
	te = &toolrun.Error{Kind: te.Kind, Tool: te.Tool, Msg: msg}
	res.Error = te.Kind + ": " + te.Msg
	return res, te, hidden + n
}

// notObject says why arguments are not one JSON object ("" when they are).
func notObject(args string) string {
	b := bytes.TrimSpace([]byte(args))
	if len(b) == 0 {
		return "they are empty"
	}
	if b[0] != '{' {
		return "they do not start with {"
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	var m map[string]json.RawMessage
	if err := dec.Decode(&m); err != nil {
		return err.Error()
	}
	if dec.More() {
		return "there is text after the object"
	}
	return ""
}

// handlerVars are the case's fields a handler is given: all but the
// withheld ones (nil when the case has none).
func handlerVars(c *dataset.Case, withhold []string) map[string]any {
	if len(c.Vars) == 0 || len(withhold) == 0 {
		return c.Vars
	}
	out := make(map[string]any, len(c.Vars))
	for k, v := range c.Vars {
		if !slices.Contains(withhold, k) {
			out[k] = v
		}
	}
	return out
}

func handlerNames(a *Agent) []string {
	names := make([]string, 0, len(a.Handlers))
	for n := range a.Handlers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func callNames(calls []provider.ToolCall) string {
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}
