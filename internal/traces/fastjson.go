package traces

import (
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
		var seen uint8
		if !r.object(func(key []byte) bool {
			var bit uint8
			var ok bool
			switch string(key) {
			case "role":
				bit, ok = 1, r.str(&m.Role)
			case "name":
				bit, ok = 2, r.str(&m.Name)
			case "finish_reason":
				bit, ok = 4, r.str(&m.FinishReason)
			case "parts":
				bit = 8
				m.Parts, ok = r.parts()
			}
			if !ok || seen&bit != 0 {
				return false
			}
			seen |= bit
			return true
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

// object reads {"key": value, ...}, field reading each value. A key
// with an escape is not one of ours as it is written: it gives up.
func (r *fastReader) object(field func(key []byte) bool) bool {
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
		if !r.is(':') || !field(key) {
			return false
		}
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
		var seen uint8
		if !r.object(func(key []byte) bool {
			var bit uint8
			var ok bool
			switch string(key) {
			case "type":
				bit, ok = 1, r.str(&p.Type)
			case "content":
				bit, ok = 2, r.str(&p.Content)
			case "id":
				bit, ok = 4, r.str(&p.ID)
			case "name":
				bit, ok = 8, r.str(&p.Name)
			case "arguments":
				bit, ok = 16, r.raw(&p.Arguments)
			case "response":
				bit, ok = 32, r.raw(&p.Response)
			case "result":
				bit, ok = 64, r.raw(&p.Result)
			}
			if !ok || seen&bit != 0 {
				return false
			}
			seen |= bit
			return true
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
	val := trimSpace(r.b[start:r.i])
	if len(val) == 0 || string(val) == "null" || !json.Valid(val) {
		return false
	}
	*v = val
	return true
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
