package traces

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// Detectors are the named detectors a spec's traces.redact.detectors may
// list, in the order they are applied (after the user's patterns).
var Detectors = spec.RedactDetectors

// span is one match: s[start:end].
type span struct{ start, end int }

// finder returns the matches of one detector in s, in order and not
// overlapping; secretField says s is the whole value of a field whose name
// says it holds a secret (an attribute "api_key", an argument "token").
type finder func(s string, secretField bool) []span

type rule struct {
	name        string
	replacement string
	find        finder
	// need is what a text must hold for the rule to find anything (0: a
	// user's pattern, always run).
	need feature
}

// feature is what one cheap pass over a text found: it decides which
// detectors can match there, so a text without '@', long tokens or long
// digit groups costs one loop over its bytes.
type feature uint8

const (
	hasAt        feature = 1 << iota // an '@': email
	hasLongToken                     // 16 or more token characters in a row: key
	hasDigits8                       // 8 or more digits with only separators between: phone
	hasDigits13                      // 13 or more: card
)

// The pre-check's byte classes, one table each so its loop has no
// branches: a token character (letters, digits, _ - + /: all ones, a
// mask), a digit (1), what keeps a run of digits going (digits and the
// separators a phone or card number is written with: a mask), and '@' (1).
var tokenByte, digitByte, keepsDigits, atByte = func() (tok, dig, keep, at [256]uint32) {
	at['@'] = 1
	for c := 0; c < 256; c++ {
		b := byte(c)
		if isTokenChar(b) {
			tok[c] = ^uint32(0)
		}
		if isDigit(b) {
			dig[c] = 1
		}
		if isDigit(b) || b == ' ' || b == '-' || b == '.' || b == '(' || b == ')' || b == '+' {
			keep[c] = ^uint32(0)
		}
	}
	return tok, dig, keep, at
}()

// features scans s once (a string, or a JSON document's raw bytes).
func features[T string | []byte](s T) feature {
	var run, digits, long, d8, d13, at uint32
	for i := 0; i < len(s); i++ {
		c := s[i]
		at |= atByte[c]
		run = (run + 1) & tokenByte[c]
		long |= run >> 4 // 16 or more
		digits = (digits + digitByte[c]) & keepsDigits[c]
		d8 |= digits >> 3        // 8 or more
		d13 |= (digits + 3) >> 4 // 13 or more
	}
	var f feature
	if at != 0 {
		f |= hasAt
	}
	if long != 0 {
		f |= hasLongToken
	}
	if d8 != 0 {
		f |= hasDigits8
	}
	if d13 != 0 {
		f |= hasDigits13
	}
	return f
}

// Redactor replaces private values in a trace before it is stored: the
// user's patterns first, then the named detectors (email, key, card,
// phone), each match replaced by "[REDACTED:<name>]" and counted. It holds
// no state between calls and is safe for concurrent use.
type Redactor struct {
	rules []rule
	// alwaysRun counts the rules that need no feature (the user's
	// patterns).
	alwaysRun int
}

// mayMatch reports whether a text with features f may hold a match.
func (r *Redactor) mayMatch(f feature) bool {
	for _, ru := range r.rules {
		if ru.need&f == ru.need {
			return true
		}
	}
	return false
}

// NewRedactor builds the redaction a spec's traces.redact asks for (nil:
// every named detector). An unknown detector or a pattern that does not
// compile is an error (the spec's checks report them first, at their
// lines).
func NewRedactor(r *spec.Redact) (*Redactor, error) {
	names := Detectors
	var patterns []spec.RedactPattern
	if r != nil {
		if r.Detectors != nil {
			names = r.Detectors
		}
		patterns = r.Patterns
	}
	red := &Redactor{}
	for _, p := range patterns {
		re, err := regexp.Compile(p.Regex)
		if err != nil {
			return nil, fmt.Errorf("redact pattern %q: %w", p.Name, err)
		}
		if p.Name == "" {
			return nil, fmt.Errorf("redact pattern %q has no name", p.Regex)
		}
		red.rules = append(red.rules, rule{name: p.Name, find: regexFinder(re)})
	}
	want := map[string]bool{}
	for _, n := range names {
		if detectorFinder(n) == nil {
			return nil, fmt.Errorf("unknown redact detector %q (known: %s)", n, strings.Join(Detectors, ", "))
		}
		want[n] = true
	}
	for _, n := range Detectors { // always in the detectors' own order
		if want[n] {
			red.rules = append(red.rules, rule{name: n, find: detectorFinder(n), need: detectorNeeds[n]})
		}
	}
	for i := range red.rules {
		red.rules[i].replacement = "[REDACTED:" + red.rules[i].name + "]"
		if red.rules[i].need == 0 {
			red.alwaysRun++
		}
	}
	return red, nil
}

var detectorNeeds = map[string]feature{"email": hasAt, "key": hasLongToken, "card": hasDigits13, "phone": hasDigits8}

func detectorFinder(name string) finder {
	switch name {
	case "email":
		return findEmails
	case "key":
		return findKeys
	case "card":
		return findCards
	case "phone":
		return findPhones
	}
	return nil
}

// regexFinder matches a user's pattern, skipping the regex when its
// literal prefix is absent.
func regexFinder(re *regexp.Regexp) finder {
	prefix, _ := re.LiteralPrefix()
	return func(s string, _ bool) []span {
		if prefix != "" && !strings.Contains(s, prefix) {
			return nil
		}
		var out []span
		for _, m := range re.FindAllStringIndex(s, -1) {
			if m[1] > m[0] {
				out = append(out, span{m[0], m[1]})
			}
		}
		return out
	}
}

// Trace redacts every text of t in place — system instructions, messages'
// contents and names, tool calls' arguments, string values of the
// attributes and the resource — and adds what it replaced to
// t.Redactions. Arguments, the
// attributes and the resource stay valid JSON when they were: the
// redaction happens inside their strings.
func (r *Redactor) Trace(t *record.Trace) {
	if r == nil || len(r.rules) == 0 {
		return
	}
	n := 0
	t.System = r.text(t.System, false, &n)
	for _, ms := range [][]record.Message{t.Input, t.Output} {
		for i := range ms {
			m := &ms[i]
			m.Content = r.text(m.Content, false, &n)
			m.Name = r.text(m.Name, false, &n) // a participant's name may be an email
			for j := range m.ToolCalls {
				m.ToolCalls[j].Arguments = r.jsonText(m.ToolCalls[j].Arguments, &n)
			}
		}
	}
	if len(t.Attributes) > 0 {
		t.Attributes = r.jsonBytes(t.Attributes, &n, false)
	}
	if len(t.Resource) > 0 {
		t.Resource = r.jsonBytes(t.Resource, &n, false)
	}
	t.Redactions += n
}

// Text redacts one text, returning it and how many values it replaced.
func (r *Redactor) Text(s string) (string, int) {
	n := 0
	s = r.text(s, false, &n)
	return s, n
}

// text applies every rule to s in turn, adding the matches to *n.
func (r *Redactor) text(s string, secretField bool, n *int) string {
	if s == "" {
		return s
	}
	f := features(s)
	for _, ru := range r.rules {
		if ru.need&f != ru.need {
			continue
		}
		spans := ru.find(s, secretField)
		if len(spans) == 0 {
			continue
		}
		*n += len(spans)
		var b strings.Builder
		b.Grow(len(s))
		last := 0
		for _, sp := range spans {
			b.WriteString(s[last:sp.start])
			b.WriteString(ru.replacement)
			last = sp.end
		}
		b.WriteString(s[last:])
		s = b.String()
	}
	return s
}

// jsonText redacts a tool call's arguments: inside its strings when it is
// JSON, as text otherwise.
func (r *Redactor) jsonText(s string, n *int) string {
	if s == "" {
		return s
	}
	before := *n
	b := r.jsonBytes([]byte(s), n, true)
	if *n == before {
		return s
	}
	return string(b)
}

// jsonBytes redacts inside the strings of the JSON document b (object
// keys too: a key can be an email), leaving the rest byte for byte. A
// string that is the value of a key naming a secret (api_key, token,
// password...) is redacted whole when it looks like one. It returns b
// itself when nothing changed; b that is not valid JSON is redacted as
// text.
//
// Each string is pre-checked on its raw bytes, which show everything its
// decoded text holds unless an escape hides it (\u0040 is '@'; \/ joins a
// token), and a string without a backslash is its own text. So b is
// validated (json.Valid) only when a string must be decoded or changes, or
// when the bytes between the strings could match (b may then not be JSON
// and be redacted as text); most strings are neither decoded nor copied.
//
// A document that may well not be JSON (a model's tool-call arguments) is
// validated first, so that text between broken strings is redacted as
// text too (`{"password" "…"}` has no key for the walk to read).
func (r *Redactor) jsonBytes(b []byte, n *int, validateFirst bool) []byte {
	valid := 0 // 0 not checked, 1 valid, -1 not
	isValid := func() bool {
		if valid == 0 {
			valid = -1
			if json.Valid(b) {
				valid = 1
			}
		}
		return valid == 1
	}
	asText := func() []byte { return []byte(r.text(string(b), false, n)) }
	if validateFirst && !isValid() {
		return asText()
	}
	var (
		out        []byte  // nil until a string changes
		last       int     // b[:last] is in out
		found      int     // what the strings' redaction replaced
		outside    feature // of the bytes between the strings
		secretNext bool    // the next string is the value of a secret's field
	)
	for pos := 0; pos <= len(b); {
		k := bytes.IndexByte(b[pos:], '"')
		if k < 0 {
			outside |= features(b[pos:])
			break
		}
		seg := b[pos : pos+k]
		outside |= features(seg)
		if bytes.ContainsAny(seg, "{[") {
			secretNext = false
		}
		i := pos + k
		end := stringEnd(b, i)
		if end <= i || b[end] != '"' {
			return asText() // an unterminated string: not JSON
		}
		pos = end + 1
		isKey := nextNonSpace(b, end+1) == ':'
		secretField := !isKey && secretNext
		raw := b[i+1 : end]
		if isKey {
			secretNext = secretKeyName(raw)
		} else {
			secretNext = false
		}
		escaped := bytes.IndexByte(raw, '\\') >= 0
		if r.alwaysRun == 0 && !(escaped && hidingEscape(raw)) && !r.mayMatch(features(raw)) {
			continue // nothing to find: not even decoded
		}
		var val string
		if escaped {
			if !isValid() {
				return asText()
			}
			val = unquote(b[i : end+1])
		} else {
			val = string(raw)
		}
		red := r.text(val, secretField, &found)
		if red == val {
			continue
		}
		if !isValid() {
			return asText()
		}
		if out == nil {
			out = make([]byte, 0, len(b)+32)
		}
		out = append(out, b[last:i]...)
		out = appendJSONString(out, red)
		last = end + 1
	}
	if out != nil {
		*n += found
		return append(out, b[last:]...)
	}
	if (r.alwaysRun > 0 || r.mayMatch(outside)) && !isValid() {
		return asText()
	}
	return b
}

// stringEnd returns the index of the quote closing the JSON string that
// opens at b[i] (b is valid JSON).
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			break
		}
		q := j + k
		// the quote ends the string unless an odd number of backslashes
		// escapes it
		bs := 0
		for q-1-bs > i && b[q-1-bs] == '\\' {
			bs++
		}
		if bs%2 == 0 {
			return q
		}
		j = q + 1
	}
	return len(b) - 1
}

func nextNonSpace(b []byte, i int) byte {
	for ; i < len(b); i++ {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
		default:
			return b[i]
		}
	}
	return 0
}

// hidingEscape reports whether JSON text holds an escape that decodes to
// something its raw bytes do not show to the pre-check: \uXXXX (any
// character) or \/ (a token character).
func hidingEscape(b []byte) bool {
	for k := bytes.IndexByte(b, '\\'); k >= 0 && k+1 < len(b); {
		switch b[k+1] {
		case 'u', '/':
			return true
		}
		next := bytes.IndexByte(b[k+2:], '\\')
		if next < 0 {
			return false
		}
		k += 2 + next
	}
	return false
}

// secretKeyNames are words in a field's name that say its value is a
// credential.
var secretKeyNames = []string{"key", "token", "secret", "password", "passwd", "authorization", "credential", "bearer", "cookie"}

// secretKeyName reports whether a field's name (its raw JSON text) says
// its value is a credential. An escaped name is decoded first.
func secretKeyName(raw []byte) bool {
	if len(raw) < 3 || len(raw) > 128 {
		return false
	}
	if bytes.IndexByte(raw, '\\') >= 0 {
		raw = []byte(unquote(append(append([]byte{'"'}, raw...), '"')))
	}
	return hasSecretWord(raw)
}

// hasSecretWord reports whether b contains one of secretKeyNames, in any
// case, in one pass: only a byte that starts a word is compared further
// (a field's key is read for every value of every trace).
func hasSecretWord(b []byte) bool {
	for i := range b {
		c := b[i] | 0x20
		if c < 'a' || c > 't' || secretStarts[c-'a'] == nil {
			continue
		}
		for _, w := range secretStarts[c-'a'] {
			if len(b)-i >= len(w) && hasFoldAt(b[i:], w) {
				return true
			}
		}
	}
	return false
}

// secretStarts are secretKeyNames by their first letter ('a' to 't').
var secretStarts = func() (t [20][]string) {
	for _, w := range secretKeyNames {
		t[w[0]-'a'] = append(t[w[0]-'a'], w)
	}
	return t
}()

// hasFoldAt reports whether b starts with w (lower case) in any case.
func hasFoldAt(b []byte, w string) bool {
	for k := 0; k < len(w); k++ {
		if b[k]|0x20 != w[k] {
			return false
		}
	}
	return true
}

// ---- email ----

func isLocalChar(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-'
}

func isDomainChar(c byte) bool { return isAlnum(c) || c == '.' || c == '-' }

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// findEmails finds local@domain.tld: a local part of letters, digits and
// ._%+-, a domain of at least two labels ending in a top-level domain of
// two or more letters.
func findEmails(s string, _ bool) []span {
	var out []span
	from := 0
	for {
		k := strings.IndexByte(s[from:], '@')
		if k < 0 {
			return out
		}
		at := from + k
		start := at
		for start > from && isLocalChar(s[start-1]) {
			start--
		}
		for start < at && s[start] == '.' {
			start++
		}
		end := at + 1
		for end < len(s) && isDomainChar(s[end]) {
			end++
		}
		for end > at+1 && (s[end-1] == '.' || s[end-1] == '-') {
			end--
		}
		if start < at && validDomain(s[at+1:end]) {
			out = append(out, span{start, end})
			from = end
		} else {
			from = at + 1
		}
	}
}

func validDomain(d string) bool {
	dot := strings.LastIndexByte(d, '.')
	if dot <= 0 || len(d)-dot-1 < 2 {
		return false
	}
	for i := dot + 1; i < len(d); i++ {
		if !isAlpha(d[i]) {
			return false
		}
	}
	return !strings.Contains(d, "..") && d[0] != '.' && d[0] != '-'
}

// ---- keys ----

// keyPrefixes start the keys of common services (OpenAI sk-/sk-proj-,
// Anthropic sk-ant-, Stripe, GitHub, GitLab, Slack, Google, Hugging Face,
// Groq, Replicate, Perplexity). A token that starts with one, is long
// enough and holds a digit is a key wherever it appears.
var keyPrefixes = []string{
	"sk-", "sk_live_", "sk_test_", "rk_live_", "rk_test_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
	"glpat-", "xoxb-", "xoxp-", "xoxa-", "xoxs-", "xoxe-", "xapp-", "AIza", "hf_", "gsk_", "r8_", "pplx-",
}

// keyWords introduce a secret in prose: "api key: …", "token=…",
// "Authorization: Bearer …" (or Basic).
var keyWords = []string{"key", "apikey", "token", "secret", "password", "passwd", "bearer", "basic", "credential", "credentials"}

func isTokenChar(c byte) bool { return isAlnum(c) || c == '_' || c == '-' || c == '+' || c == '/' }

// findKeys finds API keys: a token with a service's prefix, an AWS access
// key ID (AKIA/ASIA and 16 more), a JSON Web Token, and a long token that
// mixes letters and digits (or long hexadecimal) right after a word like
// key, token, secret, password or Bearer — or anywhere in a field named
// like one.
func findKeys(s string, secretField bool) []span {
	var out []span
	for i := 0; i < len(s); {
		c := s[i]
		if !isTokenChar(c) {
			i++
			continue
		}
		j := i
		for j < len(s) && isTokenChar(s[j]) {
			j++
		}
		// a token shorter than any key is skipped at once
		if j-i < 16 {
			i = j
			continue
		}
		end := j
		for end < len(s) && s[end] == '=' { // base64 padding
			end++
		}
		if isKey(s, i, j, &end, secretField) {
			out = append(out, span{i, end})
			i = end
			continue
		}
		i = j
	}
	return out
}

// isKey decides whether the token s[i:j] is a key; for a JSON Web Token it
// moves *end over the token's other parts.
func isKey(s string, i, j int, end *int, secretField bool) bool {
	tok := s[i:j]
	switch {
	case (strings.HasPrefix(tok, "AKIA") || strings.HasPrefix(tok, "ASIA")) && len(tok) == 20 && upperDigits(tok[4:]):
		return true
	case strings.HasPrefix(tok, "eyJ"):
		// header.payload.signature
		k := j
		parts := 1
		for parts < 3 && k < len(s) && s[k] == '.' {
			m := k + 1
			for m < len(s) && isTokenChar(s[m]) {
				m++
			}
			if m == k+1 {
				break
			}
			k, parts = m, parts+1
		}
		if parts == 3 {
			*end = k
			return true
		}
	}
	for _, p := range keyPrefixes {
		if strings.HasPrefix(tok, p) && len(tok) >= len(p)+16 && strings.ContainsAny(tok[len(p):], "0123456789") {
			return true
		}
	}
	// base64 padding counts: the 20 characters of "user:password" in
	// base64 (Basic authorization) end in "=="
	if !secretShape(s[i:*end]) {
		return false
	}
	return secretField || afterKeyWord(s, i)
}

func upperDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !(s[i] >= 'A' && s[i] <= 'Z' || isDigit(s[i])) {
			return false
		}
	}
	return true
}

// secretShape: 20 or more characters mixing upper and lower case letters
// and digits, or 32 or more hexadecimal digits with letters and digits.
func secretShape(tok string) bool {
	var upper, lower, digit, hexLetter, other int
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		switch {
		case c >= 'A' && c <= 'Z':
			upper++
			if c <= 'F' {
				hexLetter++
			}
		case c >= 'a' && c <= 'z':
			lower++
			if c <= 'f' {
				hexLetter++
			}
		case isDigit(c):
			digit++
		default:
			other++
		}
	}
	if len(tok) >= 32 && digit > 0 && hexLetter > 0 && hexLetter+digit == len(tok) {
		return true
	}
	return len(tok) >= 20 && upper > 0 && lower > 0 && digit > 0
}

// afterKeyWord reports whether s[:i] ends with a key word and at most 12
// bytes of spaces, quotes, ':' and '=' (or "is", "was") between it and the
// token.
func afterKeyWord(s string, i int) bool {
	k := i
	for k > 0 && i-k < 12 && strings.IndexByte(" \t:=\"'`", s[k-1]) >= 0 {
		k--
	}
	if k == i && i > 0 {
		return false // the token must be set apart from the word
	}
	head := s[:k]
	// "the token is …", "my password was …"
	for _, v := range []string{" is", " was"} {
		if len(head) > len(v) && strings.EqualFold(head[len(head)-len(v):], v) {
			head = strings.TrimRight(head[:len(head)-len(v)], " \t:=\"'`")
			break
		}
	}
	for _, w := range keyWords {
		if len(head) < len(w) || !strings.EqualFold(head[len(head)-len(w):], w) {
			continue
		}
		b := len(head) - len(w)
		if b == 0 || !isAlpha(head[b-1]) || (head[b] >= 'A' && head[b] <= 'Z' && head[b-1] >= 'a' && head[b-1] <= 'z') {
			return true
		}
	}
	return false
}

// ---- cards ----

// findCards finds payment card numbers: 13 to 19 digits, in groups
// separated by single spaces or dashes, with a card network's leading
// digit (2–6) and a valid Luhn check digit.
func findCards(s string, _ bool) []span {
	var out []span
	for i := 0; i < len(s); {
		if !isDigit(s[i]) || (i > 0 && (isAlnum(s[i-1]) || s[i-1] == '.' || s[i-1] == '_')) {
			i++
			continue
		}
		digits := 0
		j := i
		end := i
		for j < len(s) {
			if isDigit(s[j]) {
				digits++
				j++
				end = j
				continue
			}
			if (s[j] == ' ' || s[j] == '-') && j+1 < len(s) && isDigit(s[j+1]) {
				j++
				continue
			}
			break
		}
		if digits >= 13 && digits <= 19 && !(end < len(s) && (isAlpha(s[end]) || s[end] == '_')) && s[i] >= '2' && s[i] <= '6' && luhn(s[i:end]) {
			out = append(out, span{i, end})
			i = end
			continue
		}
		// skip the digit run (not the whole group chain: a card may
		// follow other numbers in a list)
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	return out
}

func luhn(s string) bool {
	sum, double := 0, false
	for k := len(s) - 1; k >= 0; k-- {
		c := s[k]
		if !isDigit(c) {
			continue
		}
		d := int(c - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

// ---- phones ----

// findPhones finds telephone numbers in international form (+ and a
// country code: 8 to 15 digits, separated or not) and common national
// forms written with separators: (555) 123-4567, 555-123-4567,
// 555.123.4567, 1-800-555-1234, 020 7946 0958, 07700 900123,
// 06 12 34 56 78, 0044 20 7946 0958. Plain numbers — token counts, years,
// timestamps, numbers grouped by thousands, dates, times, IPv4 addresses,
// versions — are not phones.
func findPhones(s string, _ bool) []span {
	var out []span
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isDigit(c) || c == '+' || c == '(') {
			continue
		}
		// A number glued to a word, or after a decimal point, a dash, a
		// slash, a colon (a time) or a currency sign, is not a phone's
		// start; "tel:+1…" and "(+1 …)" are.
		if i > 0 && (isAlnum(s[i-1]) || (isDigit(c) && strings.IndexByte("._-/+$=#:,", s[i-1]) >= 0) || prevIsCurrency(s, i)) {
			continue
		}
		if end, ok := phoneAt(s, i); ok {
			out = append(out, span{i, end})
			i = end - 1
		}
	}
	return out
}

// prevIsCurrency reports whether s[:i] ends with € or £.
func prevIsCurrency(s string, i int) bool {
	return strings.HasSuffix(s[:i], "€") || strings.HasSuffix(s[:i], "£")
}

// phoneAt reads a phone number starting at s[i]: ['+'] group (sep group)*
// where a group is digits or (digits) and a separator one space, dash or
// dot. It returns the end of the number and whether it is one.
func phoneAt(s string, i int) (int, bool) {
	plus := s[i] == '+'
	j := i
	if plus {
		j++
	}
	var groups [16]int
	g, digits, parens := 0, 0, false
	dotted := false
	end := j
	for j < len(s) && g < len(groups) {
		paren := false
		if s[j] == '(' {
			paren = true
			j++
		}
		k := j
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		if k == j || (paren && (k >= len(s) || s[k] != ')')) {
			break
		}
		groups[g] = k - j
		g++
		digits += k - j
		if paren {
			parens = true
			k++
		}
		j, end = k, k
		// a separator, then another group
		if j < len(s) && (s[j] == ' ' || s[j] == '-' || s[j] == '.') && j+1 < len(s) && (isDigit(s[j+1]) || s[j+1] == '(') {
			dotted = dotted || s[j] == '.'
			j++
			continue
		}
		if paren && j < len(s) && (isDigit(s[j]) || s[j] == '(') {
			continue // "(555)123-4567"
		}
		break
	}
	if g == 0 || (end < len(s) && (isAlnum(s[end]) || s[end] == '_' || s[end] == ':' || s[end] == '/')) {
		return 0, false
	}
	// a decimal or a longer dotted number after it: "1.5", "10.0.0.1.2"
	if end+1 < len(s) && (s[end] == '.' || s[end] == ',') && isDigit(s[end+1]) {
		return 0, false
	}
	gs := groups[:g]
	if plus {
		return end, digits >= 8 && digits <= 15 && (g == 1 || gs[0] <= 4)
	}
	first := s[i]
	if first == '(' {
		first = s[i+1]
	}
	international := strings.HasPrefix(s[i:], "00") && g >= 3
	switch {
	case g < 2:
		return 0, false
	case international && (digits < 11 || digits > 15):
		return 0, false
	case !international && (digits < 10 || digits > 12):
		return 0, false
	case g == 2 && !(first == '0' && !parens && gs[0] >= 3 && gs[1] >= 6):
		// two groups only as "07700 900123" or "030 12345678"
		return 0, false
	}
	for k, n := range gs {
		if n > 8 || (g > 2 && n > 4) || (k > 0 && n < 2 && !(k == 1 && gs[0] == 1)) {
			return 0, false
		}
	}
	if dotted && g == 4 && gs[0] <= 3 && gs[1] <= 3 && gs[2] <= 3 && gs[3] <= 3 {
		return 0, false // an IPv4 address
	}
	if !parens && gs[0] <= 3 && allEqual(gs[1:], 3) {
		return 0, false // a number grouped by thousands: 1 234 567 890
	}
	if allEqual(gs, 2) && first != '0' {
		return 0, false // a list of two-digit numbers
	}
	if g >= 3 && (gs[0] == 4 && gs[1] == 2 && gs[2] == 2 || gs[0] == 2 && gs[1] == 2 && gs[2] == 4) {
		if y := yearOf(s, i, gs); y {
			return 0, false // a date: 2024-01-15, 15.01.2024
		}
	}
	return end, true
}

func allEqual(gs []int, n int) bool {
	for _, g := range gs {
		if g != n {
			return false
		}
	}
	return len(gs) > 0
}

// yearOf reports whether the 4-digit group of a YYYY-MM-DD or DD-MM-YYYY
// shaped number starting at s[i] is a year (19xx or 20xx).
func yearOf(s string, i int, gs []int) bool {
	var ds [8]byte
	n := 0
	for k := i; k < len(s) && n < 8; k++ {
		if isDigit(s[k]) {
			ds[n] = s[k]
			n++
		}
	}
	y := ds[:2]
	if gs[0] == 2 {
		y = ds[4:6]
	}
	return string(y) == "19" || string(y) == "20"
}

// ---- JSON strings ----

// unquote decodes a JSON string literal (quotes included).
func unquote(raw []byte) string {
	body := raw[1 : len(raw)-1]
	hasEsc := false
	for _, c := range body {
		if c == '\\' {
			hasEsc = true
			break
		}
	}
	if !hasEsc {
		return string(body)
	}
	var b strings.Builder
	for k := 0; k < len(body); k++ {
		c := body[k]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		k++
		switch body[k] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			r := hex4(body[k+1 : k+5])
			k += 4
			if r >= 0xD800 && r < 0xDC00 && k+6 < len(body) && body[k+1] == '\\' && body[k+2] == 'u' {
				r2 := hex4(body[k+3 : k+7])
				if r2 >= 0xDC00 && r2 < 0xE000 {
					r = (r-0xD800)<<10 | (r2 - 0xDC00) + 0x10000
					k += 6
				} else {
					r = utf8.RuneError
				}
			} else if r >= 0xD800 && r < 0xE000 {
				r = utf8.RuneError
			}
			b.WriteRune(r)
		default: // " \ /
			b.WriteByte(body[k])
		}
	}
	return b.String()
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}

// appendJSONString writes s as a JSON string literal.
func appendJSONString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for k := 0; k < len(s); {
		c := s[k]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			default:
				b = append(b, c)
			}
			k++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[k:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[k:k+size]...)
		}
		k += size
	}
	return append(b, '"')
}
