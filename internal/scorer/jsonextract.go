package scorer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// maxJSONCandidates bounds how many opening brackets ExtractJSON tries before
// giving up, so hostile text full of brackets costs O(maxJSONCandidates × n).
const maxJSONCandidates = 64

// ExtractJSON finds the JSON value in a model's reply. It accepts, in order:
// the whole reply (trimmed) when it is valid JSON; the body of the first
// ``` or ```json fence that holds valid JSON; and otherwise the first
// object or array, in reading order, that parses, with any prose before or
// after it ignored. Numbers are kept exactly as json.Number. When nothing
// parses, the error says what was tried and the first decoding error seen.
func ExtractJSON(text string) (any, error) {
	t := strings.TrimSpace(text)
	if t == "" {
		return nil, errors.New("no JSON: the output is empty")
	}
	if v, err := decodeWhole(t); err == nil {
		return v, nil
	}
	var firstErr error
	for _, body := range fenceBodies(t) {
		v, err := decodeWhole(strings.TrimSpace(body))
		if err == nil {
			return v, nil
		}
		if firstErr == nil {
			firstErr = fmt.Errorf("in the ``` fence: %w", err)
		}
	}
	tried := 0
	for i := 0; i < len(t) && tried < maxJSONCandidates; i++ {
		if t[i] != '{' && t[i] != '[' {
			continue
		}
		tried++
		v, err := decodePrefix(t[i:])
		if err == nil {
			return v, nil
		}
		if firstErr == nil {
			firstErr = fmt.Errorf("at byte %d: %w", i, err)
		}
	}
	if firstErr == nil {
		return nil, errors.New("no JSON object or array found in the output")
	}
	return nil, fmt.Errorf("no valid JSON object or array found in the output (first error %v)", firstErr)
}

// decodeWhole decodes s, which must hold exactly one JSON value.
func decodeWhole(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if rest := strings.TrimSpace(s[dec.InputOffset():]); rest != "" {
		return nil, fmt.Errorf("text after the JSON value: %q", clip(rest, 40))
	}
	return v, nil
}

// decodePrefix decodes the first JSON value at the start of s and ignores
// what follows it.
func decodePrefix(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// fenceBodies returns the bodies of the ``` fences in s, in order. The info
// string after the opening fence (json, JSON, jsonc …) is skipped; an
// unclosed fence runs to the end of the text.
func fenceBodies(s string) []string {
	var out []string
	for len(out) < maxJSONCandidates {
		i := strings.Index(s, "```")
		if i < 0 {
			break
		}
		s = s[i+3:]
		// Skip the info string up to the end of the line.
		if nl := strings.IndexByte(s, '\n'); nl >= 0 && !bytes.ContainsAny([]byte(s[:nl]), "{[") {
			s = s[nl+1:]
		} else if nl < 0 {
			s = strings.TrimLeft(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
		}
		j := strings.Index(s, "```")
		if j < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:j])
		s = s[j+3:]
	}
	return out
}
