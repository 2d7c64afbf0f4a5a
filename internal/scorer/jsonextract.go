package scorer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/assay-eval/assay/internal/dataset"
)

// maxJSONCandidates bounds how many opening brackets ExtractJSON tries before
// giving up, so hostile text full of brackets costs O(maxJSONCandidates × n).
const maxJSONCandidates = 64

// Parse notes: how much a JSON parse had to tolerate (record.Score's
// ParseNote). "" means the whole output was one JSON value.
const (
	NoteFenced = "fenced" // the value was the body of a ``` fence
	NoteProse  = "prose"  // the value was found among other text
)

// ExtractJSON finds the JSON value in a model's reply. It accepts, in order:
// the whole reply (trimmed) when it is valid JSON; the body of the first
// ``` or ```json fence that holds valid JSON; and otherwise the first
// object or array, in reading order, that parses, with any prose before or
// after it ignored. Numbers are kept exactly as json.Number. When nothing
// parses, the error says what was tried and the first decoding error seen.
//
// A value whose object repeats a key ({"total": 1, "total": 2}) is an
// error naming the key, and the search stops there: which of the values the
// model meant would be a guess, and a nested object of the same text must
// not be taken instead.
func ExtractJSON(text string) (any, error) {
	v, _, err := extractJSON(text, false)
	return v, err
}

// extractJSON is ExtractJSON that also says how much it tolerated (a Note
// constant, or "" for a reply that is one JSON value). strict tolerates
// nothing: the reply must be one JSON value, and the error says what the
// tolerant search would have found around it.
func extractJSON(text string, strict bool) (any, string, error) {
	t := strings.TrimSpace(text)
	if t == "" {
		return nil, "", errors.New("no JSON: the output is empty")
	}
	v, err := decodeWhole(t)
	if err == nil {
		return v, "", nil
	}
	var dup *duplicateKeyError
	if errors.As(err, &dup) {
		return nil, "", err
	}
	if strict {
		if _, note, lerr := extractJSON(t, false); lerr == nil {
			where := "text before or after it"
			if note == NoteFenced {
				where = "a ``` fence around it"
			}
			return nil, "", fmt.Errorf("the output holds a JSON value with %s; output.strict requires the whole output to be one JSON value", where)
		}
		return nil, "", fmt.Errorf("the output is not one JSON value (output.strict): %w", err)
	}
	var firstErr error
	for _, body := range fenceBodies(t) {
		v, err := decodeWhole(strings.TrimSpace(body))
		if err == nil {
			return v, NoteFenced, nil
		}
		if errors.As(err, &dup) {
			return nil, "", fmt.Errorf("in the ``` fence: %w", err)
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
			return v, NoteProse, nil
		}
		if errors.As(err, &dup) {
			return nil, "", fmt.Errorf("at byte %d: %w", i, err)
		}
		if firstErr == nil {
			firstErr = fmt.Errorf("at byte %d: %w", i, err)
		}
	}
	if firstErr == nil {
		return nil, "", errors.New("no JSON object or array found in the output")
	}
	return nil, "", fmt.Errorf("no valid JSON object or array found in the output (first error %v)", firstErr)
}

// duplicateKeyError is a JSON value whose object repeats a key.
type duplicateKeyError struct{ key, path string }

func (e *duplicateKeyError) Error() string {
	return strings.Replace(dataset.DuplicateKeyMessage(clip(e.key, 60), clip(e.path, 80)), "duplicate key", "the JSON repeats the key", 1) +
		" (each key may appear once per object; which value was meant would be a guess)"
}

// checkKeys reports a repeated key in b, which holds valid JSON.
func checkKeys(b string) error {
	if key, _, path, dup := dataset.DuplicateKey([]byte(b)); dup {
		return &duplicateKeyError{key: key, path: path}
	}
	return nil
}

// decodeWhole decodes s, which must hold exactly one JSON value whose
// objects repeat no key.
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
	if err := checkKeys(s); err != nil {
		return nil, err
	}
	return v, nil
}

// decodePrefix decodes the first JSON value at the start of s and ignores
// what follows it; its objects must repeat no key.
func decodePrefix(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if err := checkKeys(s[:dec.InputOffset()]); err != nil {
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
