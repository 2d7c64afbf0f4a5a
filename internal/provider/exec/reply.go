package exec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/assay-eval/assay/internal/provider"
)

// invalidQuote is how much of a bad reply an error message quotes.
const invalidQuote = 200

// reply is a decoded, checked reply.
type reply struct {
	output            string
	usage             provider.Usage
	finishReason      string
	model             string
	systemFingerprint string
	toolCalls         []provider.ToolCall
}

// Reply field names match exactly (encoding/json alone would also accept
// "Output" or "OUTPUT").
const (
	fieldOutput      = "output"
	fieldUsage       = "usage"
	fieldFinish      = "finish_reason"
	fieldModel       = "model"
	fieldFingerprint = "system_fingerprint"
	fieldError       = "error"
	fieldToolCalls   = "tool_calls"
)

// decodeReply checks and decodes what a program printed on stdout. A reply
// that breaks the protocol is an invalid_reply error quoting the start of
// stdout; a reply whose "error" is set is an exec_error.
func decodeReply(stdout []byte) (*reply, *provider.Error) {
	invalid := func(format string, args ...any) *provider.Error {
		return &provider.Error{Kind: provider.KindInvalid,
			Msg: fmt.Sprintf(format, args...) + "; want one JSON object such as {\"output\": \"...\"}; stdout began with " + quoteHead(stdout, invalidQuote)}
	}
	body := bytes.TrimSpace(bytes.TrimPrefix(stdout, []byte("\xef\xbb\xbf")))
	if len(body) == 0 {
		return nil, &provider.Error{Kind: provider.KindInvalid,
			Msg: "printed nothing on stdout; want one JSON object such as {\"output\": \"...\"}"}
	}
	if body[0] != '{' {
		return nil, invalid("reply is not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var m map[string]json.RawMessage
	if err := dec.Decode(&m); err != nil {
		return nil, invalid("reply is not valid JSON (%v)", err)
	}
	if rest := bytes.TrimSpace(body[dec.InputOffset():]); len(rest) > 0 {
		return nil, invalid("unexpected data after the reply object (%d more bytes)", len(rest))
	}
	if msg, ok := errorText(m[fieldError]); ok {
		return nil, &provider.Error{Kind: provider.KindExec,
			Msg: "the program reported an error: " + quoteHead([]byte(msg), 500)}
	}
	calls, err := provider.DecodeToolCalls(m[fieldToolCalls])
	if err != nil {
		return nil, invalid("reply's %v", err)
	}
	raw, ok := m[fieldOutput]
	var out string
	switch {
	case !ok && len(calls) > 0:
		// Tool calls alone are a whole reply.
	case !ok:
		for k := range m {
			if strings.EqualFold(k, fieldOutput) {
				return nil, invalid("reply has no \"output\" field (it has %s; field names are lower case)", strconv.Quote(k))
			}
		}
		return nil, invalid("reply has no \"output\" field")
	default:
		if out, err = outputText(raw); err != nil && !(len(calls) > 0 && isNull(raw)) {
			return nil, invalid("reply's \"output\" %v", err)
		}
	}
	r := &reply{output: out, toolCalls: calls}
	for _, f := range []struct {
		name string
		dst  *string
	}{{fieldFinish, &r.finishReason}, {fieldModel, &r.model}, {fieldFingerprint, &r.systemFingerprint}} {
		if raw, ok := m[f.name]; ok && !isNull(raw) {
			if json.Unmarshal(raw, f.dst) != nil {
				return nil, invalid("reply field %q is a JSON %s; want a string", f.name, provider.JSONType(raw))
			}
		}
	}
	if raw, ok := m[fieldUsage]; ok && !isNull(raw) {
		var um map[string]json.RawMessage
		if json.Unmarshal(raw, &um) != nil {
			return nil, invalid("reply field \"usage\" is a JSON %s; want an object such as {\"input\": 812, \"output\": 64}", provider.JSONType(raw))
		}
		for _, f := range []struct {
			name string
			dst  *int
		}{{"input", &r.usage.Input}, {"output", &r.usage.Output}, {"cached", &r.usage.Cached}} {
			if raw, ok := um[f.name]; ok && !isNull(raw) {
				if json.Unmarshal(raw, f.dst) != nil || *f.dst < 0 {
					return nil, invalid("reply field \"usage.%s\" is %s; want a non-negative whole number", f.name, quoteHead(bytes.TrimSpace(raw), 40))
				}
			}
		}
		if u := r.usage; u.Cached > u.Input {
			return nil, invalid("reply's usage counts %d cached tokens of %d input tokens; cached tokens are part of the input", u.Cached, u.Input)
		}
	}
	return r, nil
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// outputText turns the "output" value into the reply text: a string as is,
// any other JSON value as its compact JSON text; null is no output.
func outputText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case bytes.Equal(raw, []byte("null")):
		return "", fmt.Errorf("is null")
	case raw[0] == '"':
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

// errorText reports the program's "error" field when it is set: a non-empty
// string, or any other non-null value (as JSON text).
func errorText(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) || bytes.Equal(raw, []byte(`""`)) || bytes.Equal(raw, []byte("false")) {
		return "", false
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s, s != ""
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw), true
	}
	return buf.String(), true
}

// quoteHead quotes at most n bytes of b as a Go string literal (so control
// characters and terminal escapes in hostile output are shown, not obeyed),
// noting how much was left out.
func quoteHead(b []byte, n int) string {
	if len(b) <= n {
		return strconv.Quote(string(b))
	}
	cut := n
	for cut > 0 && cut > n-utf8.UTFMax && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return fmt.Sprintf("%s (first %d of %d bytes)", strconv.Quote(string(b[:cut])), cut, len(b))
}
