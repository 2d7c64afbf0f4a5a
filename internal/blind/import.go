package blind

import (
	"bytes"
	"crypto/hmac"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/assay-eval/assay/internal/lines"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// MaxLineBytes bounds one line of a responses file.
const MaxLineBytes = 16 << 20

// maxProblems bounds the problems listed for one file; the last one says
// how many more there were.
const maxProblems = 20

// ErrSeal is ReadKey's answer for a key whose seal does not match.
var ErrSeal = errors.New("the key's seal does not match its contents")

// ReadKey reads a key file and checks its seal.
func ReadKey(path string) (*Key, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the key: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var k Key
	if err := dec.Decode(&k); err != nil {
		return nil, fmt.Errorf("%s: not a key written by assay export --blind: %v", path, err)
	}
	if k.Format != KeyFormat {
		return nil, fmt.Errorf("%s: format %q: want %q (a key written by assay export --blind)", path, k.Format, KeyFormat)
	}
	want, err := k.seal()
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", path, ErrSeal, err)
	}
	if !hmac.Equal([]byte(want), []byte(k.Seal)) {
		return nil, fmt.Errorf("%s: %w: the file was edited or damaged after export wrote it, so its IDs may no longer map to the cases they were sent for; use the key export wrote", path, ErrSeal)
	}
	if len(k.Items) == 0 {
		return nil, fmt.Errorf("%s: the key maps no IDs", path)
	}
	return &k, nil
}

// Answer is the vendor's answer to one line of the sample, mapped back to
// its case.
type Answer struct {
	ID        string            `json:"id"`
	Case      string            `json:"case"`
	Output    string            `json:"output"`
	ToolCalls []record.ToolCall `json:"tool_calls,omitempty"`
	// Line is the answer's line in the responses file.
	Line int `json:"line"`
}

// response is one line of a responses file as written.
type response struct {
	ID        *string           `json:"id"`
	Output    *string           `json:"output"`
	ToolCalls []json.RawMessage `json:"tool_calls"`
}

// responseFields are the fields a responses line may have.
var responseFields = []string{"id", "output", "tool_calls"}

// ReadResponses reads a vendor's responses file (name is its path, for
// messages) against the key: one JSON object a line, {"id", "output",
// "tool_calls"?}, one line for every line of the sample and in the
// sample's order. Every problem is returned at once as spec.Problems
// (FILE:LINE:COL): a line that is not such an object, an ID the sample does
// not have, an ID answered twice, lines out of the sample's order (a
// shuffled or wrongly merged file: the order is checked so that no answer
// can land on another case), and the IDs no line answers (a truncated
// file). The answers come back in the sample's order.
func ReadResponses(r io.Reader, name string, k *Key) ([]Answer, error) {
	pos := make(map[string]int, len(k.Items))
	for i, it := range k.Items {
		pos[it.ID] = i
	}
	var probs spec.Problems
	add := func(line, col int, format string, args ...any) {
		probs = append(probs, spec.Problem{File: name, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)})
	}
	answered := make(map[string]int, len(k.Items)) // ID → line
	answers := make([]Answer, len(k.Items))
	last, lastLine := -1, 0 // the sample position of the previous answer
	outOfOrder, firstOut := 0, spec.Problem{}
	lineCount := 0
	err := lines.Each(r, name, MaxLineBytes, func(l lines.Line) error {
		lineCount = l.No
		if l.TooLong {
			add(l.No, 1, "the line is longer than %d MiB", MaxLineBytes>>20)
			return nil
		}
		body := bytes.TrimSpace(l.Body)
		if len(body) == 0 {
			return nil
		}
		a, col, msg := parseResponse(l.Body)
		if msg != "" {
			add(l.No, col, "%s", msg)
			return nil
		}
		p, ok := pos[a.ID]
		switch {
		case !ok:
			add(l.No, 1, "id %s is not in the sample this key was made for (%s, %d lines); answer the sample's IDs as sent", quote(a.ID), k.Sample, len(k.Items))
			return nil
		case answered[a.ID] > 0:
			add(l.No, 1, "id %s is answered twice: line %d answered it first; keep one answer per id", quote(a.ID), answered[a.ID])
			return nil
		}
		answered[a.ID] = l.No
		if p < last {
			outOfOrder++
			if outOfOrder == 1 {
				firstOut = spec.Problem{File: name, Line: l.No, Col: 1}
				firstOut.Msg = fmt.Sprintf("id %s is the sample's line %d but comes after the sample's line %d (line %d here)", quote(a.ID), p+1, last+1, lastLine)
			}
		}
		last, lastLine = p, l.No
		a.Case, a.Line = k.Items[p].Case, l.No
		answers[p] = a
		return nil
	})
	if err != nil {
		return nil, err
	}
	if outOfOrder > 0 {
		firstOut.Msg = fmt.Sprintf("the answers are not in the sample's order (%d line(s) out of order): %s; import refuses a shuffled file so that no answer can land on another case: write one answer per sample line, in the sample's order", outOfOrder, firstOut.Msg)
		probs = append(probs, firstOut)
	}
	var missing []int
	for i, it := range k.Items {
		if answered[it.ID] == 0 {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		var first []string
		for _, i := range missing[:min(5, len(missing))] {
			first = append(first, fmt.Sprintf("%s (sample line %d)", quote(k.Items[i].ID), i+1))
		}
		more := ""
		if len(missing) > 5 {
			more = fmt.Sprintf(" and %d more", len(missing)-5)
		}
		what := "the file is truncated or lines were dropped"
		if lineCount == 0 {
			what = "the file is empty"
		}
		add(lineCount+1, 1, "%d of the sample's %d ids have no answer (%s): %s%s; every line of the sample needs its answer",
			len(missing), len(k.Items), what, strings.Join(first, ", "), more)
	}
	if len(probs) > 0 {
		slices.SortStableFunc(probs, func(a, b spec.Problem) int { return a.Line - b.Line })
		if len(probs) > maxProblems {
			n := len(probs) - maxProblems + 1
			probs = append(probs[:maxProblems-1], spec.Problem{File: name, Line: probs[maxProblems-1].Line, Col: 1, Msg: fmt.Sprintf("and %d more problem(s)", n)})
		}
		return nil, probs
	}
	return answers, nil
}

// parseResponse decodes one line; msg (with the column it is at) says
// what is wrong with it.
func parseResponse(body []byte) (a Answer, col int, msg string) {
	if !utf8.Valid(body) {
		return a, 1, "the line is not UTF-8 text"
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		col = 1
		var se *json.SyntaxError
		if errors.As(err, &se) {
			col = int(se.Offset) // the byte it stopped at, or past the end
			if int(se.Offset) >= len(body) {
				col = len(body) + 1
			}
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return a, 1, "the line is not a JSON object: want {\"id\": \"…\", \"output\": \"…\"}"
		}
		return a, max(col, 1), "the line is not JSON: " + err.Error()
	}
	if fields == nil {
		return a, 1, "the line is null: want {\"id\": \"…\", \"output\": \"…\"}"
	}
	var unknown []string
	for f := range fields {
		if !slices.Contains(responseFields, f) {
			unknown = append(unknown, quote(f))
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return a, 1, fmt.Sprintf("unknown field(s) %s: a line has %s", strings.Join(unknown, ", "), strings.Join(responseFields, ", "))
	}
	var resp response
	if err := json.Unmarshal(body, &resp); err != nil {
		return a, 1, "a field has the wrong type: id and output are strings, tool_calls a list of {\"name\", \"arguments\", \"id\"?}: " + err.Error()
	}
	if resp.ID == nil || *resp.ID == "" {
		return a, 1, "the line has no id: each answer carries the id of the sample line it answers"
	}
	a.ID = *resp.ID
	for i, raw := range resp.ToolCalls {
		c, err := toolCall(raw)
		if err != nil {
			return a, 1, fmt.Sprintf("id %s: tool_calls[%d]: %v", quote(a.ID), i, err)
		}
		a.ToolCalls = append(a.ToolCalls, c)
	}
	if resp.Output == nil && len(a.ToolCalls) == 0 {
		return a, 1, fmt.Sprintf("id %s has no output: give \"output\" (a string, \"\" for an empty answer) or \"tool_calls\"", quote(a.ID))
	}
	if resp.Output != nil {
		a.Output = *resp.Output
	}
	return a, 0, ""
}

// toolCall reads one tool call: {"name", "arguments", "id"?}, arguments a
// string kept as written or a JSON value kept as its compact text.
func toolCall(raw json.RawMessage) (record.ToolCall, error) {
	var c struct {
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return record.ToolCall{}, fmt.Errorf("want {\"name\", \"arguments\", \"id\"?}: %v", err)
	}
	if c.Name == "" {
		return record.ToolCall{}, errors.New("the call has no name")
	}
	args := ""
	switch t := bytes.TrimSpace(c.Arguments); {
	case len(t) == 0 || string(t) == "null":
	case t[0] == '"':
		if err := json.Unmarshal(t, &args); err != nil {
			return record.ToolCall{}, err
		}
	default:
		var b bytes.Buffer
		if err := json.Compact(&b, t); err != nil {
			return record.ToolCall{}, err
		}
		args = b.String()
	}
	return record.ToolCall{ID: c.ID, Name: c.Name, Arguments: args}, nil
}

// quote quotes a value from the file for a message, cut when long.
func quote(s string) string {
	const n = 60
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + "…"
	}
	return strconv.Quote(s)
}

// ImportResult is what `assay import` did.
type ImportResult struct {
	RunID  string `json:"run_id"`
	Target string `json:"target"`
	Cases  int    `json:"cases"`
	// Status is the run's status (complete unless scoring was stopped).
	Status      string `json:"status"`
	Spec        string `json:"spec"`
	DatasetHash string `json:"dataset_hash"`
	Key         string `json:"key"`
	Responses   string `json:"responses"`
	// Into: the answers joined the existing run RunID (import --into) as
	// one more of its Targets, scored in Scorings; RunCases is how many
	// cases the run measured (Cases of them answered).
	Into     bool     `json:"into,omitempty"`
	Targets  []string `json:"targets,omitempty"`
	RunCases int      `json:"run_cases,omitempty"`
	Scorings []int    `json:"scorings,omitempty"`
}

// CheckSpec compares the spec and dataset import scores with against what
// the key says the sample was made from: the dataset's and the prompt's
// hashes must be the same (the answers answer those prompts on those
// cases). A spec changed elsewhere (another target, a scorer) is allowed:
// changed reports it.
func (k *Key) CheckSpec(keyPath, specHash, datasetHash, promptHash string) (changed bool, err error) {
	var errs []string
	if datasetHash != k.DatasetHash {
		errs = append(errs, fmt.Sprintf("the dataset changed since the sample was made (hash %s, the key's %s)", short(datasetHash), short(k.DatasetHash)))
	}
	if promptHash != k.PromptHash {
		errs = append(errs, fmt.Sprintf("the prompt changed since the sample was made (hash %s, the key's %s)", short(promptHash), short(k.PromptHash)))
	}
	if len(errs) > 0 {
		return false, fmt.Errorf("%s: %s: the vendor's answers answer the prompts that were sent; restore the dataset and prompt of the sample (spec %s), or send a new sample", keyPath, strings.Join(errs, "; "), k.SpecPath)
	}
	return specHash != k.SpecHash, nil
}

func short(h string) string {
	h = strings.TrimPrefix(h, "sha256:")
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
