package scorer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// maxJudgeReply bounds the judge reply the strict parser reads: a verdict is
// a few hundred bytes; anything much longer is not one.
const maxJudgeReply = 64 << 10

// judgeVerdict is a judge's parsed single-mode verdict.
type judgeVerdict struct {
	pass     bool
	value    float64 // the score, or 1/0 for pass/fail
	hasScore bool
	reason   string
}

// parseJudgeVerdict parses a single-mode judge reply STRICTLY. The whole
// reply must be exactly one JSON object — surrounding whitespace and a
// single ```json (or bare ```) fence allowed, nothing else — with only these
// keys:
//
//   - "verdict": "pass" or "fail" (exactly, lower case), and/or
//   - "score": a number in [0, 1], which passes when >= threshold;
//   - "reason": a non-blank string (required).
//
// When both verdict and score are given they must agree. Everything else —
// prose around the object, two objects, duplicate or unknown keys, a wrong
// type, a score out of range — is an error that says what was wrong.
func parseJudgeVerdict(reply string, threshold float64) (judgeVerdict, error) {
	members, err := strictObject(reply)
	if err != nil {
		return judgeVerdict{}, err
	}
	if err := onlyKeys(members, "verdict", "score", "reason"); err != nil {
		return judgeVerdict{}, err
	}
	reason, err := requiredReason(members)
	if err != nil {
		return judgeVerdict{}, err
	}
	v := judgeVerdict{reason: reason}
	raw, hasVerdict := members["verdict"]
	if hasVerdict {
		s, err := jsonString(raw)
		if err != nil || (s != "pass" && s != "fail") {
			return judgeVerdict{}, fmt.Errorf(`"verdict" is %s; it must be "pass" or "fail"`, clip(string(raw), 40))
		}
		v.pass = s == "pass"
		v.value = 0
		if v.pass {
			v.value = 1
		}
	}
	if raw, ok := members["score"]; ok {
		f, err := jsonNumber(raw)
		if err != nil || f < 0 || f > 1 {
			return judgeVerdict{}, fmt.Errorf(`"score" is %s; it must be a number from 0 to 1`, clip(string(raw), 40))
		}
		passes := f >= threshold
		if hasVerdict && passes != v.pass {
			return judgeVerdict{}, fmt.Errorf(`"verdict" %q contradicts "score" %v (a score passes at %v or above)`, verdictWord(v.pass), f, threshold)
		}
		v.pass, v.value, v.hasScore = passes, f, true
	} else if !hasVerdict {
		return judgeVerdict{}, errors.New(`the object has neither "verdict" nor "score"`)
	}
	return v, nil
}

func verdictWord(pass bool) string {
	if pass {
		return "pass"
	}
	return "fail"
}

// Pairwise winners as the judge names them.
const (
	winnerA   = "A"
	winnerB   = "B"
	winnerTie = "tie"
)

// parsePairVerdict parses a pairwise judge reply as strictly as
// parseJudgeVerdict: exactly one object with "winner" ("A", "B" or "tie")
// and a non-blank "reason", and no other key.
func parsePairVerdict(reply string) (winner, reason string, err error) {
	members, err := strictObject(reply)
	if err != nil {
		return "", "", err
	}
	if err := onlyKeys(members, "winner", "reason"); err != nil {
		return "", "", err
	}
	if reason, err = requiredReason(members); err != nil {
		return "", "", err
	}
	raw, ok := members["winner"]
	if !ok {
		return "", "", errors.New(`the object has no "winner"`)
	}
	w, err := jsonString(raw)
	if err != nil || (w != winnerA && w != winnerB && w != winnerTie) {
		return "", "", fmt.Errorf(`"winner" is %s; it must be "A", "B" or "tie"`, clip(string(raw), 40))
	}
	return w, reason, nil
}

// strictObject returns the members of the one JSON object that is the whole
// of reply (after trimming white space and unwrapping one code fence).
func strictObject(reply string) (map[string]json.RawMessage, error) {
	if len(reply) > maxJudgeReply {
		return nil, fmt.Errorf("the reply is %d bytes; a verdict is one short JSON object", len(reply))
	}
	s := strings.TrimSpace(reply)
	if s == "" {
		return nil, errors.New("the reply is empty")
	}
	if strings.HasPrefix(s, "```") {
		body, err := unfence(s)
		if err != nil {
			return nil, err
		}
		s = body
	}
	if !strings.HasPrefix(s, "{") {
		return nil, fmt.Errorf("the reply does not start with a JSON object: %q", clip(s, 60))
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("the reply is not a JSON object: %v", err)
	}
	members := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("the reply is not valid JSON: %v", err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("the reply is not valid JSON: unexpected %v", tok)
		}
		if _, dup := members[key]; dup {
			return nil, fmt.Errorf("key %q appears twice", clip(key, 40))
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("the reply is not valid JSON: %v", err)
		}
		members[key] = raw
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, fmt.Errorf("the reply is not valid JSON: the object is not closed (%v)", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		rest := strings.TrimSpace(s[dec.InputOffset():])
		return nil, fmt.Errorf("the reply has more after the JSON object (%q): it must be exactly one object", clip(rest, 60))
	}
	return members, nil
}

// unfence returns the body of a reply that is one code fence: ``` or
// ```json, a newline, the body, and a closing ``` that ends the reply.
func unfence(s string) (string, error) {
	rest := s[3:]
	nl := strings.IndexByte(rest, '\n')
	if nl < 0 {
		return "", errors.New("the reply opens a code fence but has no body")
	}
	if lang := strings.TrimSpace(rest[:nl]); lang != "" && !strings.EqualFold(lang, "json") {
		return "", fmt.Errorf("the reply is a %q code fence; only a json fence is accepted", clip(lang, 20))
	}
	body, ok := strings.CutSuffix(rest[nl+1:], "```")
	if !ok {
		return "", errors.New("the reply's code fence is not closed at the end of the reply")
	}
	if strings.Contains(body, "```") {
		return "", errors.New("the reply has more than one code fence")
	}
	return strings.TrimSpace(body), nil
}

// onlyKeys rejects a member that is not one of keys.
func onlyKeys(members map[string]json.RawMessage, keys ...string) error {
	for k := range members {
		known := false
		for _, want := range keys {
			known = known || k == want
		}
		if !known {
			return fmt.Errorf("unexpected key %q; the verdict has only %s", clip(k, 40), strings.Join(keys, ", "))
		}
	}
	return nil
}

func requiredReason(members map[string]json.RawMessage) (string, error) {
	raw, ok := members["reason"]
	if !ok {
		return "", errors.New(`the object has no "reason"`)
	}
	r, err := jsonString(raw)
	if err != nil || strings.TrimSpace(r) == "" {
		return "", fmt.Errorf(`"reason" is %s; it must be a non-empty string`, clip(string(raw), 40))
	}
	return r, nil
}

// jsonString decodes raw when it is a JSON string (and nothing else).
func jsonString(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", errors.New("not a string")
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// jsonNumber decodes raw when it is a finite JSON number.
func jsonNumber(raw json.RawMessage) (float64, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, errors.New("not a number")
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, errors.New("not a finite number")
	}
	return f, nil
}
