package provider

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// MinSecretLen is the shortest value a Redactor hides. A shorter value (a
// variable set to "1" or "dev") would match all over ordinary outputs and
// destroy them, so it is left alone.
const MinSecretLen = 8

// Secret is a value that must never be stored or printed, and the name of
// the environment variable it came from (shown in its place).
type Secret struct {
	Name, Value string
}

// Redactor replaces secrets, and the common encodings of each, with
// [REDACTED:NAME]. For a value v of at least MinSecretLen bytes it finds:
//
//   - v itself (and so "Bearer v", "x-api-key: v", v inside JSON);
//
//   - url.QueryEscape(v) and url.PathEscape(v);
//
//   - v base64-encoded (standard or URL alphabet, padded or not) at any of
//     the three byte alignments, so base64(v) and base64(anything+v): HTTP
//     basic auth base64("user:"+v) for any user. At an alignment other than
//     0 the characters that also encode a neighbouring byte (at most the
//     first and last two bytes of v) are left, as they cannot be told apart
//     from other data; the rest of the run is replaced.
//
//   - v escaped as Go's strconv.Quote and JSON escape it (with or without
//     "/" written "\/"), as an exec program's quoted stderr tail or an
//     error body carries it;
//
//   - any run of at least FragmentLen consecutive bytes of v, so that a key
//     cut by a truncation (the 2 KiB stderr tail, a capped error body)
//     leaves at most FragmentLen-1 bytes of it at the cut.
//
// It does not find other encodings (hex, HTML entities, v split across
// lines, a changed letter case). A Redactor with no secrets changes nothing.
type Redactor struct {
	pats  []pattern
	frags []fragments
}

// FragmentLen is the shortest run of a secret's bytes that is replaced on
// its own (see Redactor).
const FragmentLen = 12

// fragments finds runs of one secret's bytes: grams maps each FragmentLen
// substring of value to where it starts.
type fragments struct {
	value, repl string
	grams       map[string]int
	// in marks the bytes value holds: a window with any other byte cannot
	// be a run of it, which lets the scan skip most of ordinary text.
	in [256]bool
}

type pattern struct{ find, repl string }

// NewRedactor builds a Redactor for the secrets whose values are at least
// MinSecretLen bytes long; others are ignored.
func NewRedactor(secrets []Secret) *Redactor {
	r := &Redactor{}
	seen := map[string]bool{}
	add := func(find, repl string) {
		if len(find) < MinSecretLen || seen[find] {
			return
		}
		seen[find] = true
		r.pats = append(r.pats, pattern{find, repl})
	}
	for _, s := range secrets {
		if len(s.Value) < MinSecretLen {
			continue
		}
		repl := "[REDACTED:" + s.Name + "]"
		add(s.Value, repl)
		add(url.QueryEscape(s.Value), repl)
		add(url.PathEscape(s.Value), repl)
		q := strconv.Quote(s.Value)
		add(q[1:len(q)-1], repl)
		if j, err := json.Marshal(s.Value); err == nil {
			add(string(j[1:len(j)-1]), repl)
			add(strings.ReplaceAll(string(j[1:len(j)-1]), "/", `\/`), repl)
		}
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			for k := 0; k < 3; k++ {
				add(base64Core(enc, s.Value, k), repl)
			}
		}
	}
	// Longest first, so that a value is not half-replaced by a shorter one
	// that it contains.
	slices.SortStableFunc(r.pats, func(a, b pattern) int { return cmp.Compare(len(b.find), len(a.find)) })
	for _, s := range secrets {
		if len(s.Value) < FragmentLen {
			continue
		}
		f := fragments{value: s.Value, repl: "[REDACTED:" + s.Name + "]", grams: map[string]int{}}
		for i := 0; i < len(s.Value); i++ {
			f.in[s.Value[i]] = true
		}
		for i := 0; i+FragmentLen <= len(s.Value); i++ {
			if _, ok := f.grams[s.Value[i:i+FragmentLen]]; !ok {
				f.grams[s.Value[i:i+FragmentLen]] = i
			}
		}
		r.frags = append(r.frags, f)
	}
	return r
}

// redact replaces each run of at least FragmentLen bytes of f's value in s,
// leftmost first and each as long as it goes.
func (f *fragments) redact(s string) (string, int) {
	var b strings.Builder
	n, last := 0, 0
	for i := 0; i+FragmentLen <= len(s); {
		// A byte the value lacks rules out every window that holds it:
		// look for the last one in this window and start after it.
		skip := -1
		for k := i + FragmentLen - 1; k >= i; k-- {
			if !f.in[s[k]] {
				skip = k
				break
			}
		}
		if skip >= 0 {
			i = skip + 1
			continue
		}
		j, ok := f.grams[s[i:i+FragmentLen]]
		if !ok {
			i++
			continue
		}
		l := FragmentLen
		for i+l < len(s) && j+l < len(f.value) && s[i+l] == f.value[j+l] {
			l++
		}
		b.WriteString(s[last:i])
		b.WriteString(f.repl)
		n++
		i += l
		last = i
	}
	if n == 0 {
		return s, 0
	}
	b.WriteString(s[last:])
	return b.String(), n
}

// base64Core is the part of the base64 encoding of v that is the same
// wherever v is found with k bytes before it (mod 3) and anything after it:
// the 4-character groups made of v's bytes only.
func base64Core(enc *base64.Encoding, v string, k int) string {
	b := make([]byte, k, k+len(v))
	b = append(b, v...)
	s := enc.EncodeToString(b)
	start := 0
	if k > 0 {
		start = 4 // the first group holds the k unknown bytes
	}
	end := (len(b) / 3) * 4 // groups of three bytes that are all known
	if end <= start {
		return ""
	}
	return s[start:end]
}

// Empty reports that r has nothing to redact.
func (r *Redactor) Empty() bool { return r == nil || len(r.pats) == 0 && len(r.frags) == 0 }

// Redact returns s with every secret replaced, and how many were.
func (r *Redactor) Redact(s string) (string, int) {
	if r.Empty() {
		return s, 0
	}
	n := 0
	for _, p := range r.pats {
		if c := strings.Count(s, p.find); c > 0 {
			n += c
			s = strings.ReplaceAll(s, p.find, p.repl)
		}
	}
	for i := range r.frags {
		var c int
		s, c = r.frags[i].redact(s)
		n += c
	}
	return s, n
}

// WithRedaction returns a Provider whose replies and errors have r's secrets
// replaced before anything else sees them: the text, the tool calls, the model names the
// reply reports, and each error's message. The number replaced is
// Response.Redactions, or Redactions(err) for a failure. A nil or empty r
// returns p itself.
func WithRedaction(p Provider, r *Redactor) Provider {
	if r.Empty() {
		return p
	}
	return &redacting{p: p, r: r}
}

// withCachedRedaction is WithRedaction for replies served from the cache
// only (Response.Cached): put around the cache, it redacts what an older
// assay cached unredacted, without a second pass over the fresh replies the
// inner WithRedaction already redacted.
func withCachedRedaction(p Provider, r *Redactor) Provider {
	if r.Empty() {
		return p
	}
	return &redacting{p: p, r: r, cachedOnly: true}
}

type redacting struct {
	p          Provider
	r          *Redactor
	cachedOnly bool
}

func (w *redacting) Complete(ctx context.Context, req *Request) (*Response, error) {
	resp, err := w.p.Complete(ctx, req)
	if w.cachedOnly && (resp == nil || !resp.Cached) {
		return resp, err // a fresh reply or error: redacted inside the cache
	}
	if err != nil {
		err = w.r.redactError(err)
	}
	if resp == nil {
		return nil, err
	}
	out := *resp
	var n, c int
	out.Text, c = w.r.Redact(out.Text)
	n += c
	out.FinishReason, c = w.r.Redact(out.FinishReason)
	n += c
	out.Model, c = w.r.Redact(out.Model)
	n += c
	out.SystemFingerprint, c = w.r.Redact(out.SystemFingerprint)
	n += c
	if len(out.ToolCalls) > 0 {
		// A model may echo a secret into a call's arguments as well.
		out.ToolCalls = slices.Clone(out.ToolCalls)
		for i := range out.ToolCalls {
			tc := &out.ToolCalls[i]
			for _, f := range []*string{&tc.ID, &tc.Name, &tc.Arguments} {
				*f, c = w.r.Redact(*f)
				n += c
			}
		}
	}
	out.Redactions += n
	return &out, err
}

// redactError returns err itself when its message holds no secret, and
// otherwise an error with the redacted message that keeps err's kind,
// status and Retry-After, and unwraps to err's cause for errors.Is.
func (r *Redactor) redactError(err error) error {
	msg, n := r.Redact(err.Error())
	if n == 0 {
		return err
	}
	var pe *Error
	if e, ok := err.(*Error); ok {
		pe = e
	}
	if pe == nil {
		return &redactedError{msg: msg, n: n, err: err}
	}
	out := *pe
	out.Msg, _ = r.Redact(pe.Msg)
	if pe.Err != nil {
		m, _ := r.Redact(pe.Err.Error())
		out.Err = &redactedError{msg: m, err: pe.Err}
	}
	out.redactions = n
	return &out
}

// redactedError is an error whose message had secrets replaced. It unwraps
// to the original, so errors.Is and the kind still work; only its message
// (what is stored and printed) differs.
type redactedError struct {
	msg string
	n   int
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// Redactions is the number of secrets replaced in err's message (0 for nil).
func Redactions(err error) int {
	var pe *Error
	if errors.As(err, &pe) && pe.redactions > 0 {
		return pe.redactions
	}
	var re *redactedError
	if errors.As(err, &re) {
		return re.n
	}
	return 0
}
