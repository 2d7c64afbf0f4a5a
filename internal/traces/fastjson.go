package traces

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// A fast path for the current form's messages, the bulk of what collect
// decodes: a hand-written reader of exactly the shape typedMessage and
// typedPart describe. It gives up (ok false) on anything outside that
// shape — a field they have no place for, a key in another case, null, a
// repeated key, a value of another type, invalid UTF-8 or JSON — and the
// caller then decodes with encoding/json as before; when it succeeds, the
// result is what decodeExact gives (FuzzFastMessages checks it).

// fastMessages reads raw as a list of current-form messages.
func fastMessages(raw []byte) ([]typedMessage, bool) {
	r := fastReader{b: raw}
	ms := []typedMessage{}
	ok := r.list(func() bool {
		var m typedMessage
		if !r.object(func(key []byte) (uint8, bool) {
			switch string(key) {
			case "role":
				return 1, r.str(&m.Role)
			case "name":
				return 2, r.str(&m.Name)
			case "finish_reason":
				return 4, r.str(&m.FinishReason)
			case "parts":
				var ok bool
				m.Parts, ok = r.parts()
				return 8, ok
			}
			return 0, false
		}) {
			return false
		}
		ms = append(ms, m)
		return true
	})
	return ms, ok && r.end()
}

// fastParts reads raw as a list of parts (the system instructions).
func fastParts(raw []byte) ([]typedPart, bool) {
	r := fastReader{b: raw}
	ps, ok := r.parts()
	return ps, ok && r.end()
}

type fastReader struct {
	b []byte
	i int
}

func (r *fastReader) ws() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// is skips white space and then c, reporting whether c was there.
func (r *fastReader) is(c byte) bool {
	r.ws()
	if r.i < len(r.b) && r.b[r.i] == c {
		r.i++
		return true
	}
	return false
}

// end reports whether only white space is left.
func (r *fastReader) end() bool {
	r.ws()
	return r.i == len(r.b)
}

// list reads [elem, ...].
func (r *fastReader) list(elem func() bool) bool {
	if !r.is('[') {
		return false
	}
	if r.is(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if r.is(']') {
			return true
		}
		if !r.is(',') {
			return false
		}
	}
}

// object reads {"key": value, ...}, field reading each value and
// returning the key's bit (one per known key) and whether the value read.
// It gives up on an unknown key (ok false), a key seen twice, and a key
// with an escape (not one of ours as it is written).
func (r *fastReader) object(field func(key []byte) (bit uint8, ok bool)) bool {
	var seen uint8
	if !r.is('{') {
		return false
	}
	if r.is('}') {
		return true
	}
	for {
		start, esc, ok := r.skipStr()
		if !ok || esc {
			return false
		}
		key := r.b[start+1 : r.i-1]
		if !r.is(':') {
			return false
		}
		bit, ok := field(key)
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		if r.is('}') {
			return true
		}
		if !r.is(',') {
			return false
		}
	}
}

// str reads a string into s.
func (r *fastReader) str(s *string) bool {
	start, esc, ok := r.skipStr()
	if !ok {
		return false
	}
	tok := r.b[start:r.i]
	if !esc {
		*s = string(tok[1 : len(tok)-1])
		return true
	}
	return json.Unmarshal(tok, s) == nil
}

// skipStr moves past a string, reporting where it started and whether
// encoding/json has to read it (an escape, or bytes that are not valid
// UTF-8, which it replaces).
func (r *fastReader) skipStr() (start int, esc, ok bool) {
	r.ws()
	if r.i >= len(r.b) || r.b[r.i] != '"' {
		return 0, false, false
	}
	start = r.i
	high := false
	for j := r.i + 1; j < len(r.b); j++ {
		switch c := r.b[j]; {
		case c == '"':
			r.i = j + 1
			if high && !esc && !utf8.Valid(r.b[start+1:j]) {
				esc = true
			}
			return start, esc, true
		case c == '\\':
			esc = true
			j++ // the escaped byte is not the closing quote
		case c < 0x20:
			return 0, false, false
		case c >= utf8.RuneSelf:
			high = true
		}
	}
	return 0, false, false
}

// parts reads a list of parts.
func (r *fastReader) parts() ([]typedPart, bool) {
	ps := []typedPart{}
	ok := r.list(func() bool {
		var p typedPart
		if !r.object(func(key []byte) (uint8, bool) {
			switch string(key) {
			case "type":
				return 1, r.str(&p.Type)
			case "content":
				return 2, r.str(&p.Content)
			case "id":
				return 4, r.str(&p.ID)
			case "name":
				return 8, r.str(&p.Name)
			case "arguments":
				return 16, r.raw(&p.Arguments)
			case "response":
				return 32, r.raw(&p.Response)
			case "result":
				return 64, r.raw(&p.Result)
			}
			return 0, false
		}) {
			return false
		}
		ps = append(ps, p)
		return true
	})
	return ps, ok
}

// raw reads any value but null as its bytes (checked to be JSON).
func (r *fastReader) raw(v *json.RawMessage) bool {
	r.ws()
	start, depth := r.i, 0
scan:
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case '"':
			if _, _, ok := r.skipStr(); !ok {
				return false
			}
			if depth == 0 {
				break scan
			}
		case '{', '[':
			depth++
			r.i++
		case '}', ']':
			if depth == 0 {
				break scan
			}
			depth--
			r.i++
			if depth == 0 {
				break scan
			}
		case ',':
			if depth == 0 {
				break scan
			}
			r.i++
		default:
			r.i++
		}
	}
	val := bytes.TrimRight(r.b[start:r.i], " \t\n\r")
	if len(val) == 0 || string(val) == "null" || !json.Valid(val) {
		return false
	}
	*v = val
	return true
}
