package replay

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/assay-eval/assay/internal/provider"
)

// recordConfig says where the join value and the output are in a record.
type recordConfig struct {
	join       []string
	joinName   string
	output     []string
	outputName string
}

// record is what one line holds, as far as replay cares.
type record struct {
	join    json.RawMessage
	output  json.RawMessage // nil when missing
	missing string          // why the output is missing ("" when present)

	usage        provider.Usage
	latency      time.Duration
	model        string
	finishReason string
	toolCalls    []provider.ToolCall
}

// parseRecord decodes one line. A line that is not a JSON object, lacks the
// join value or has malformed optional fields is an error; a missing output
// is not (record.missing says why).
func parseRecord(line []byte, cfg recordConfig) (*record, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(line, &top); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("record is a JSON %s; want one JSON object per line", provider.JSONType(line))
		}
		return nil, fmt.Errorf("not valid JSON (%v); want one JSON object per line", err)
	}
	if top == nil {
		return nil, errors.New("record is null; want one JSON object per line")
	}
	rec := &record{}
	join, _, why := lookupPath(top, cfg.join)
	if why != "" {
		return nil, fmt.Errorf("record has no join value: %s (its fields: %s)", why, fieldList(top))
	}
	if _, err := recordKey(join); err != nil {
		return nil, fmt.Errorf("%s %v", cfg.joinName, err)
	}
	rec.join = join

	out, parent, why := lookupPath(top, cfg.output)
	switch {
	case why != "":
		rec.missing = why
	case isJSONNull(out):
		rec.missing = fmt.Sprintf("%s is null", cfg.outputName)
	default:
		rec.output = out
	}
	if parent == nil {
		parent = top
	}
	if err := rec.readMeta(parent, top); err != nil {
		return nil, err
	}
	if rec.missing != "" && len(rec.toolCalls) == 0 && len(cfg.output) > 1 {
		// Calls without an output are looked up where the output would be.
		if holder, _, why := lookupPath(top, cfg.output[:len(cfg.output)-1]); why == "" && firstByte(holder) == '{' {
			var near map[string]json.RawMessage
			if json.Unmarshal(holder, &near) == nil && near["tool_calls"] != nil && !isJSONNull(near["tool_calls"]) {
				calls, err := provider.DecodeToolCalls(near["tool_calls"])
				if err != nil {
					return nil, err
				}
				rec.toolCalls = calls
			}
		}
	}
	if rec.missing != "" && len(rec.toolCalls) > 0 {
		// Calls alone are a whole recorded reply.
		rec.missing, rec.output = "", json.RawMessage(`""`)
	}
	return rec, nil
}

// readMeta reads the optional fields, each from next to the output first and
// then from the top level.
func (r *record) readMeta(near, top map[string]json.RawMessage) error {
	field := func(name string) json.RawMessage {
		if v, ok := near[name]; ok && !isJSONNull(v) {
			return v
		}
		if v, ok := top[name]; ok && !isJSONNull(v) {
			return v
		}
		return nil
	}
	if raw := field("usage"); raw != nil {
		u, err := decodeUsage(raw)
		if err != nil {
			return err
		}
		r.usage = u
	}
	if raw := field("latency_ms"); raw != nil {
		var ms float64
		if err := json.Unmarshal(raw, &ms); err != nil || ms < 0 || math.IsInf(ms, 0) || ms > float64(math.MaxInt64/int64(time.Millisecond)) {
			return fmt.Errorf("latency_ms is %s; want a non-negative number of milliseconds", clip(raw))
		}
		r.latency = time.Duration(ms * float64(time.Millisecond))
	}
	if raw := field("tool_calls"); raw != nil {
		calls, err := provider.DecodeToolCalls(raw)
		if err != nil {
			return err
		}
		r.toolCalls = calls
	}
	for _, s := range []struct {
		name string
		dst  *string
	}{{"model", &r.model}, {"finish_reason", &r.finishReason}} {
		if raw := field(s.name); raw != nil {
			if err := json.Unmarshal(raw, s.dst); err != nil {
				return fmt.Errorf("%s is %s; want a string", s.name, clip(raw))
			}
		}
	}
	return nil
}

// decodeUsage reads recorded token counts under assay's names or the
// OpenAI/Anthropic ones.
func decodeUsage(raw json.RawMessage) (provider.Usage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return provider.Usage{}, fmt.Errorf("usage is %s; want an object such as {\"input\": 812, \"output\": 64}", clip(raw))
	}
	count := func(names ...string) (int, error) {
		for _, n := range names {
			v, ok := m[n]
			if !ok || isJSONNull(v) {
				continue
			}
			var f float64
			if err := json.Unmarshal(v, &f); err != nil || f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
				return 0, fmt.Errorf("usage.%s is %s; want a non-negative whole number", n, clip(v))
			}
			return int(f), nil
		}
		return 0, nil
	}
	var u provider.Usage
	var err error
	if u.Input, err = count("input", "prompt_tokens", "input_tokens"); err != nil {
		return u, err
	}
	if u.Output, err = count("output", "completion_tokens", "output_tokens"); err != nil {
		return u, err
	}
	if u.Cached, err = count("cached", "cached_tokens"); err != nil {
		return u, err
	}
	if u.Cached > u.Input {
		return u, fmt.Errorf("usage counts %d cached of %d input tokens; cached tokens are part of the input", u.Cached, u.Input)
	}
	return u, nil
}

// lookupPath follows path through objects (and arrays, for whole-number
// elements). It returns the value, the object holding its last element (nil
// when that is an array), or why the path is not there.
func lookupPath(top map[string]json.RawMessage, path []string) (json.RawMessage, map[string]json.RawMessage, string) {
	obj := top
	var cur json.RawMessage
	for i, el := range path {
		at := strings.Join(path[:i+1], ".")
		if obj != nil {
			v, ok := obj[el]
			if !ok {
				if i == 0 {
					return nil, nil, fmt.Sprintf("no field %q", el)
				}
				return nil, nil, fmt.Sprintf("no %q in %s (its fields: %s)", el, strings.Join(path[:i], "."), fieldList(obj))
			}
			cur = v
		} else {
			var arr []json.RawMessage
			_ = json.Unmarshal(cur, &arr)
			n, err := strconv.Atoi(el)
			if err != nil || n < 0 {
				return nil, nil, fmt.Sprintf("%s is an array, indexed by whole numbers, not %q", strings.Join(path[:i], "."), el)
			}
			if n >= len(arr) {
				return nil, nil, fmt.Sprintf("%s has %d elements; %s is out of range", strings.Join(path[:i], "."), len(arr), at)
			}
			cur = arr[n]
		}
		if i == len(path)-1 {
			return cur, obj, ""
		}
		switch firstByte(cur) {
		case '{':
			var next map[string]json.RawMessage
			if err := json.Unmarshal(cur, &next); err != nil {
				return nil, nil, fmt.Sprintf("%s is malformed (%v)", at, err)
			}
			obj = next
		case '[':
			obj = nil
		default:
			return nil, nil, fmt.Sprintf("%s is a JSON %s, not an object", at, provider.JSONType(cur))
		}
	}
	return nil, nil, "empty path"
}

// fieldList names an object's fields for a hint, sorted and bounded.
func fieldList(m map[string]json.RawMessage) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	const most = 12
	var more string
	if len(keys) > most {
		more = fmt.Sprintf(" and %d more", len(keys)-most)
		keys = keys[:most]
	}
	for i, k := range keys {
		keys[i] = strconv.Quote(clipString(k, 40))
	}
	return strings.Join(keys, ", ") + more
}

// recordKey is the join text of a record's value (see the package comment).
func recordKey(raw json.RawMessage) (string, error) {
	switch firstByte(raw) {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	case 't':
		return "true", nil
	case 'f':
		return "false", nil
	case 'n':
		return "", errors.New("is null; want a string or a number")
	case '{', '[':
		return "", fmt.Errorf("is a JSON %s; want a string or a number", provider.JSONType(raw))
	}
	return canonicalNumber(string(bytes.TrimSpace(raw))), nil
}

// caseKey is the join text of a case's value, matching recordKey.
func caseKey(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case json.Number:
		return canonicalNumber(x.String()), nil
	case float64:
		return canonicalFloat(x), nil
	case float32:
		return canonicalFloat(float64(x)), nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case int32:
		return strconv.FormatInt(int64(x), 10), nil
	case uint64:
		return strconv.FormatUint(x, 10), nil
	case uint:
		return strconv.FormatUint(uint64(x), 10), nil
	case nil:
		return "", errors.New("is null; want a string or a number")
	}
	return "", fmt.Errorf("is a %T; want a string or a number", v)
}

// canonicalNumber gives one text for every spelling of a number: integer
// literals as written (so large IDs stay exact), others through float64.
func canonicalNumber(s string) string {
	if isIntLiteral(s) {
		if s == "-0" {
			return "0"
		}
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	return canonicalFloat(f)
}

// canonicalFloat writes a whole number as its exact decimal integer (as an
// integer literal would be written) and any other number in its shortest form.
func canonicalFloat(f float64) string {
	if f == 0 {
		return "0" // and not "-0"
	}
	if f == math.Trunc(f) {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func isIntLiteral(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// key is a 128-bit hash of a join text.
type key [16]byte

func hashKey(s string) key {
	sum := sha256.Sum256([]byte(s))
	var k key
	copy(k[:], sum[:])
	return k
}

func firstByte(raw []byte) byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

func isJSONNull(raw []byte) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// clip quotes a raw value for a message, bounded.
func clip(raw []byte) string { return clipString(string(bytes.TrimSpace(raw)), 60) }

func clipString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n] + "…"
}
