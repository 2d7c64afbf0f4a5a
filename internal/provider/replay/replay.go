// Package replay owns the replay provider: recorded outputs (a JSONL file,
// one record per line) joined to cases by a field, so an evaluation re-runs
// offline, in CI, for free. It imports only the provider and spec packages
// and the standard library; it must not import the runner, scorer or store.
//
// # Joining
//
// A target's replay section names the file, the case field to join on
// (join), the record field that must equal it (record_join, default join)
// and the dotted path of the output inside the record:
//
//	replay: {path: recorded.jsonl, join: question, output: 175b_verification.solution}
//
// Join values are compared as text: a string as is, a number in a canonical
// form (42, 42.0 and 4.2e1 are the same key, and match the string "42"), a
// boolean as true/false. A join value that is null, an object or an array
// cannot be joined. Integers beyond 2^53 match only when both sides keep them
// exact (as text, or integer literals on both sides).
//
// Path elements are object keys; an element that is a whole number indexes
// an array ("choices.0.text"). An output that is a string is the reply as is;
// any other JSON value (an object, an array, a number) becomes its compact
// JSON text.
//
// # Records
//
// New reads the file once and keeps, per record, a 128-bit hash of its join
// value, its byte offset and its line number — not the record — so memory
// grows with the number of records, not their size; each call reads its
// record back with ReadAt. New fails, listing every problem with its line
// number, when a line is not a JSON object, a record lacks the join field, two
// records share a join value, optional fields have the wrong type, or no
// record at all has the output path (a typo in the spec). A record that lacks
// only the output (the recorded model failed on that case) is kept: its call
// fails with kind no_record and the reason, as does a case with no record.
//
// Optional fields make a replay realistic. Each of usage ({"input", "output",
// "cached"}, or the OpenAI names prompt_tokens/completion_tokens, or
// input_tokens/output_tokens), latency_ms, model and finish_reason is looked
// up first next to the output (in the object holding the output path's last
// element) and then at the top level of the record. Without usage the token
// counts are zero; without latency_ms the latency is the (tiny) measured time
// of the lookup. So is tool_calls, the calls the recorded model made: a list
// of {"name", "arguments", "id"} in the exec protocol's form (arguments a
// string kept as written, or a JSON value kept as its compact text); a record
// with calls and no output replays the calls with an empty text.
package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/spec"
)

// Provider answers requests from a recorded JSONL file. It is safe for
// concurrent use.
type Provider struct {
	name     string
	display  string // the path as written in the spec, for messages
	file     *os.File
	join     string   // the case field
	joinPath []string // the case field as a dotted path
	cfg      recordConfig
	model    string
	idx      *index
	now      func() time.Time // the clock latency is read from (registry.Env.Now)
}

// New indexes the target's replay file (relative to dir, the spec's directory).
// The returned provider keeps the file open; Close releases it.
func New(t *spec.Target, dir string) (*Provider, error) {
	if t == nil {
		return nil, errors.New("replay provider: nil target")
	}
	r := t.Replay
	if r == nil {
		return nil, fmt.Errorf("replay target %q: no replay section; want replay: {path: recorded.jsonl, join: <case field>, output: <path in the record>}", t.Name)
	}
	var errs []error
	if r.Path == "" {
		errs = append(errs, fmt.Errorf("replay target %q: replay.path is empty; want the JSONL file of recorded outputs", t.Name))
	}
	joinPath, err := splitPath("replay.join", r.Join)
	if err != nil {
		errs = append(errs, fmt.Errorf("replay target %q: %w; want the case field to join on, e.g. join: question", t.Name, err))
	}
	recordJoin := r.RecordJoin
	if recordJoin == "" {
		recordJoin = r.Join
	}
	recJoinPath, err := splitPath("replay.record_join", recordJoin)
	if err != nil && r.RecordJoin != "" {
		errs = append(errs, fmt.Errorf("replay target %q: %w", t.Name, err))
	}
	outPath, err := splitPath("replay.output", r.Output)
	if err != nil {
		errs = append(errs, fmt.Errorf("replay target %q: %w; want the dotted path of the output in each record, e.g. output: answers.model_b", t.Name, err))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}

	path := r.Path
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("replay target %q: opening recorded outputs: %w (replay.path is relative to the spec's directory)", t.Name, err)
	}
	cfg := recordConfig{join: recJoinPath, joinName: recordJoin, output: outPath, outputName: r.Output}
	idx, err := buildIndex(f, r.Path, cfg, maxRecordBytes)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("replay target %q: %w", t.Name, err)
	}
	return &Provider{
		name:     t.Name,
		display:  r.Path,
		file:     f,
		join:     r.Join,
		joinPath: joinPath,
		cfg:      cfg,
		model:    t.Model,
		idx:      idx,
		now:      time.Now,
	}, nil
}

// Close releases the recorded file.
func (p *Provider) Close() error { return p.file.Close() }

// Len is the number of records indexed.
func (p *Provider) Len() int { return len(p.idx.entries) }

// Complete returns the recorded output for the request's case.
func (p *Provider) Complete(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, contextError(err)
	}
	start := p.now()
	v, ok := lookupVar(req.Vars, p.join, p.joinPath)
	if !ok || v == nil {
		return nil, noRecord("case %s has no %q to join on", caseName(req), p.join)
	}
	key, err := caseKey(v)
	if err != nil {
		return nil, noRecord("case %s: %s %v", caseName(req), p.join, err)
	}
	e, ok := p.idx.entries[hashKey(key)]
	if !ok {
		return nil, noRecord("no record in %s has %s = %s", p.display, p.cfg.joinName, quoteKey(key))
	}
	line := make([]byte, e.n)
	if n, err := p.file.ReadAt(line, e.off); n < len(line) {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return nil, &provider.Error{Kind: provider.KindNoRecord, Msg: fmt.Sprintf("reading %s:%d (the file changed after it was indexed?)", p.display, e.line), Err: err}
	}
	rec, err := parseRecord(line, p.cfg)
	if err != nil {
		return nil, noRecord("%s:%d: %v (the file changed after it was indexed?)", p.display, e.line, err)
	}
	if recKey, err := recordKey(rec.join); err != nil || recKey != key {
		return nil, noRecord("%s:%d no longer holds %s = %s; the file changed after it was indexed", p.display, e.line, p.cfg.joinName, quoteKey(key))
	}
	if rec.missing != "" {
		return nil, noRecord("%s:%d (%s = %s) has no output: %s", p.display, e.line, p.cfg.joinName, quoteKey(key), rec.missing)
	}
	text, err := outputText(rec.output)
	if err != nil {
		return nil, noRecord("%s:%d: output %s: %v", p.display, e.line, p.cfg.outputName, err)
	}
	resp := &provider.Response{
		Text:         text,
		ToolCalls:    rec.toolCalls,
		FinishReason: rec.finishReason,
		Usage:        rec.usage,
		Model:        rec.model,
		Attempts:     1,
		Latency:      rec.latency,
	}
	if resp.Model == "" {
		resp.Model = p.model
	}
	if resp.Model == "" {
		resp.Model = req.Model
	}
	if resp.Latency <= 0 {
		resp.Latency = max(p.now().Sub(start), time.Nanosecond)
	}
	return resp, nil
}

func noRecord(format string, args ...any) *provider.Error {
	return &provider.Error{Kind: provider.KindNoRecord, Msg: fmt.Sprintf(format, args...)}
}

func contextError(err error) *provider.Error {
	kind := provider.KindCanceled
	if errors.Is(err, context.DeadlineExceeded) {
		kind = provider.KindTimeout
	}
	return &provider.Error{Kind: kind, Err: err}
}

func caseName(req *provider.Request) string {
	if req.CaseID == "" {
		return "(no id)"
	}
	return strconv.Quote(req.CaseID)
}

// quoteKey quotes a join value for a message, shortened when long.
func quoteKey(k string) string {
	const n = 80
	if len(k) <= n {
		return strconv.Quote(k)
	}
	cut := n
	for cut > 0 && (k[cut]&0xC0) == 0x80 {
		cut--
	}
	return strconv.Quote(k[:cut]) + "…"
}

// lookupVar finds a case variable by its exact name, or else by a dotted
// path through nested objects.
func lookupVar(vars map[string]any, name string, path []string) (any, bool) {
	if v, ok := vars[name]; ok {
		return v, true
	}
	if len(path) < 2 {
		return nil, false
	}
	var cur any = vars
	for _, el := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[el]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// splitPath splits a dotted path, rejecting empty ones and empty elements.
func splitPath(what, s string) ([]string, error) {
	if s == "" {
		return nil, fmt.Errorf("%s is empty", what)
	}
	parts := strings.Split(s, ".")
	for _, p := range parts {
		if p == "" {
			return nil, fmt.Errorf("%s %q has an empty element (a leading, trailing or doubled dot)", what, s)
		}
	}
	return parts, nil
}

// outputText turns the recorded output into reply text: a string as is, any
// other JSON value as its compact JSON text.
func outputText(raw json.RawMessage) (string, error) {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return "", err
	}
	return buf.String(), nil
}
