package spec

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// decoder fills typed values from a YAML AST, recording the position of
// every path it visits and every problem it meets (it never stops at the
// first one). It is driven by the `yaml` struct tags of the spec types, so a
// field added to a type is accepted without touching the decoder.
type decoder struct {
	file    string
	probs   Problems
	pos     map[string]position
	bad     map[string]bool // paths whose value could not be decoded
	anchors map[string]ast.Node
	// budget bounds the nodes visited, so aliases that fan out (a "billion
	// laughs" document) cannot make loading take unbounded time or memory.
	budget int
	// hooks run on a value just allocated for a path pattern (sequence
	// elements get "[]"), so per-element defaults apply before decoding.
	newElem func(pattern string, v reflect.Value)
	// extraKeys are keys a struct accepts beyond its tagged fields (fields
	// tagged yaml:"-" that still have a written form, like dataset.tags).
	extraKeys map[reflect.Type]map[string]func(d *decoder, n ast.Node, path string, v reflect.Value)

	// getenv resolves ${VAR} (nil: no interpolation); srcs are the spec's
	// and each overlay's bytes, to locate a ${ in its line.
	getenv func(string) string
	srcs   [][]byte
	// vars are the variables interpolated outside headers, with their
	// values (hashed into the spec's hash); hdrVars those in header
	// values (secrets: names only); refs where each non-header one was
	// used, for the key check.
	vars    map[string]string
	hdrVars map[string]bool
	refs    []refAt
	// hdrPaths holds each header value's path and the variables in it.
	hdrPaths map[string][]string
}

// position is where a path is written: Key is the key (or the sequence entry)
// naming it, Val is its value. Block means the value is a mapping or sequence.
type position struct {
	Key, Val loc
	Block    bool
}

type loc struct{ Line, Col int }

const maxNodes = 100000

var durationType = reflect.TypeOf(Duration(0))

func nodeLoc(n ast.Node) loc {
	if n == nil {
		return loc{1, 1}
	}
	switch m := n.(type) {
	case *ast.MappingNode:
		if len(m.Values) > 0 && !m.IsFlowStyle {
			return nodeLoc(m.Values[0].Key)
		}
	case *ast.MappingValueNode:
		return nodeLoc(m.Key)
	case *ast.LiteralNode:
		if m.Start != nil {
			return tokLoc(m.Start.Position.Line, m.Start.Position.Column)
		}
	case *ast.DocumentNode:
		if m.Body != nil {
			return nodeLoc(m.Body)
		}
	}
	tk := n.GetToken()
	if tk == nil || tk.Position == nil {
		return loc{1, 1}
	}
	return tokLoc(tk.Position.Line, tk.Position.Column)
}

func tokLoc(line, col int) loc {
	if line < 1 {
		line = 1
	}
	if col < 1 {
		col = 1
	}
	return loc{line, col}
}

// fail records a problem with the value at path itself, so later checks of
// that path (a required value, a range) do not report it a second time.
func (d *decoder) fail(path string, at loc, hint, format string, args ...any) {
	d.bad[path] = true
	d.problem(at, hint, format, args...)
}

func (d *decoder) problem(at loc, hint, format string, args ...any) {
	d.probs = append(d.probs, Problem{File: d.file, Line: at.Line, Col: at.Col, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

// resolve strips tags and anchors and follows aliases, returning the node
// that holds the value (nil for an alias to an unknown anchor).
func (d *decoder) resolve(n ast.Node) ast.Node {
	for i := 0; i < 64 && n != nil; i++ {
		switch m := n.(type) {
		case *ast.TagNode:
			n = m.Value
		case *ast.AnchorNode:
			if name := anchorName(m.Name); name != "" {
				d.anchors[name] = m.Value
			}
			n = m.Value
		case *ast.AliasNode:
			name := anchorName(m.Value)
			target, ok := d.anchors[name]
			if !ok {
				d.problem(nodeLoc(m), "", "alias *%s refers to no anchor defined before it", name)
				return nil
			}
			n = target
		case *ast.DocumentNode:
			n = m.Body
		case *ast.MappingValueNode:
			return singleMapping(m)
		default:
			return n
		}
	}
	return n
}

// singleMapping wraps a lone key: value pair, which the YAML library may
// return in place of a mapping, as a mapping.
func singleMapping(mv *ast.MappingValueNode) *ast.MappingNode {
	return ast.Mapping(mv.GetToken(), false, mv)
}

func anchorName(n ast.Node) string {
	if n == nil {
		return ""
	}
	if s, ok := n.(*ast.StringNode); ok {
		return s.Value
	}
	return strings.TrimLeft(n.String(), "&*")
}

// keyText is the text of a mapping key, or false when the key is not a scalar.
func (d *decoder) keyText(k ast.Node) (string, bool) {
	k = d.resolve(k)
	if mk, ok := k.(*ast.MappingKeyNode); ok {
		k = d.resolve(mk.Value)
	}
	switch s := k.(type) {
	case *ast.StringNode:
		return s.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.NullNode:
		return s.GetToken().Value, true
	}
	return "", false
}

func isNull(n ast.Node) bool {
	if n == nil {
		return true
	}
	_, ok := n.(*ast.NullNode)
	return ok
}

// kindName names a YAML node's kind for messages.
func kindName(n ast.Node) string {
	switch s := n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.StringNode:
		return "the string " + shortQuote(s.Value)
	case *ast.LiteralNode:
		return "a block of text"
	case *ast.IntegerNode, *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "the number " + s.GetToken().Value
	case *ast.BoolNode:
		return "the boolean " + s.GetToken().Value
	case *ast.NullNode:
		return "nothing"
	}
	return "a " + n.Type().String()
}

// shortQuote quotes s when it is short; longer values are not repeated in
// messages (they may be pasted secrets or whole prompts), and a short one
// that looks like a secret is masked.
func shortQuote(s string) string {
	if LooksLikeSecret(s) {
		return MaskSecret(s)
	}
	if len(s) <= 24 && !strings.ContainsAny(s, "\n\r") {
		return strconv.Quote(s)
	}
	return "(" + strconv.Itoa(len(s)) + " characters)"
}

func (d *decoder) record(path string, key ast.Node, val ast.Node) {
	p := position{Val: nodeLoc(val)}
	if key != nil {
		p.Key = nodeLoc(key)
	} else {
		p.Key = p.Val
	}
	switch val.(type) {
	case *ast.MappingNode, *ast.SequenceNode, *ast.MappingValueNode:
		p.Block = true
	}
	if val == nil || isNull(val) {
		p.Val = p.Key
	}
	if _, seen := d.pos[path]; !seen {
		d.pos[path] = p
	}
}

// pattern turns a concrete path into the pattern hooks are keyed by:
// "targets[3].limits" → "targets[].limits".
func pattern(path string) string {
	var b strings.Builder
	in := false
	for _, r := range path {
		switch {
		case r == '[':
			in = true
			b.WriteString("[]")
		case r == ']':
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// decode fills v (addressable) from n at path.
func (d *decoder) decode(n ast.Node, path string, v reflect.Value) {
	d.budget--
	if d.budget < 0 {
		if d.budget == -1 {
			d.problem(nodeLoc(n), "", "the spec is too large or expands aliases too far (over %d values)", maxNodes)
		}
		return
	}
	orig := n
	n = d.resolve(n)
	if n == nil || isNull(n) {
		return // an empty value leaves the default in place
	}
	at := nodeLoc(n)
	if orig != nil {
		at = nodeLoc(orig)
	}
	t := v.Type()
	if d.getenv != nil && interpolates(path) {
		if text, ok := d.interpolated(n, path); ok {
			d.setText(path, at, v, text)
			return
		} else if d.bad[path] {
			return
		}
	}
	if t == durationType {
		s, ok := scalarString(n)
		if !ok {
			d.fail(path, at, "write a duration like 30s, 1m30s or 250ms", "%s must be a duration, got %s", path, kindName(n))
			return
		}
		if _, isInt := n.(*ast.IntegerNode); isInt {
			d.fail(path, at, "durations need a unit: write e.g. "+s+"s", "%s must be a duration, got the number %s", path, s)
			return
		}
		dur, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			d.fail(path, at, "write a duration like 30s, 1m30s or 250ms", "%s must be a duration, got %s", path, shortQuote(s))
			return
		}
		if dur < 0 {
			d.fail(path, at, "", "%s must not be negative, got %s", path, s)
			return
		}
		v.Set(reflect.ValueOf(Duration(dur)))
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(t.Elem()))
		}
		d.decode(orig, path, v.Elem())
	case reflect.Struct:
		d.decodeStruct(n, path, v)
	case reflect.Slice:
		seq, ok := n.(*ast.SequenceNode)
		if !ok {
			d.fail(path, at, listHint(t), "%s must be a list, got %s", path, kindName(n))
			return
		}
		out := reflect.MakeSlice(t, 0, len(seq.Values))
		for i, item := range seq.Values {
			ip := fmt.Sprintf("%s[%d]", path, i)
			d.record(ip, nil, d.resolveQuiet(item))
			ev := reflect.New(t.Elem()).Elem()
			if d.newElem != nil {
				d.newElem(pattern(ip), ev)
			}
			d.decode(item, ip, ev)
			out = reflect.Append(out, ev)
		}
		v.Set(out)
	case reflect.Map:
		m, ok := n.(*ast.MappingNode)
		if !ok {
			d.fail(path, at, "", "%s must be a mapping, got %s", path, kindName(n))
			return
		}
		if t.Key().Kind() != reflect.String {
			d.fail(path, at, "", "%s cannot be decoded (unsupported map type)", path)
			return
		}
		out := reflect.MakeMapWithSize(t, len(m.Values))
		d.eachKey(m, path, func(key string, kv *ast.MappingValueNode, kp string) {
			ev := reflect.New(t.Elem()).Elem()
			d.decode(kv.Value, kp, ev)
			out.SetMapIndex(reflect.ValueOf(key).Convert(t.Key()), ev)
		})
		v.Set(out)
	case reflect.Interface:
		v.Set(reflect.ValueOf(d.generic(n, path)))
	case reflect.String:
		s, ok := scalarString(n)
		if !ok {
			d.fail(path, at, "", "%s must be a string, got %s", path, kindName(n))
			return
		}
		v.SetString(s)
	case reflect.Bool:
		b, ok := n.(*ast.BoolNode)
		if !ok {
			d.fail(path, at, "write true or false", "%s must be true or false, got %s", path, kindName(n))
			return
		}
		v.SetBool(b.Value)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, ok := n.(*ast.IntegerNode)
		if !ok {
			hint := ""
			if s, isStr := n.(*ast.StringNode); isStr {
				if _, err := strconv.ParseInt(strings.TrimSpace(s.Value), 10, 64); err == nil {
					hint = "write the number without quotes"
				}
			}
			d.fail(path, at, hint, "%s must be a whole number, got %s", path, kindName(n))
			return
		}
		var x int64
		switch iv := i.Value.(type) {
		case int64:
			x = iv
		case uint64:
			if iv > math.MaxInt64 {
				d.fail(path, at, "", "%s is too large", path)
				return
			}
			x = int64(iv)
		}
		if v.OverflowInt(x) {
			d.fail(path, at, "", "%s is too large", path)
			return
		}
		v.SetInt(x)
	case reflect.Float32, reflect.Float64:
		var f float64
		switch num := n.(type) {
		case *ast.FloatNode:
			f = num.Value
		case *ast.IntegerNode:
			switch iv := num.Value.(type) {
			case int64:
				f = float64(iv)
			case uint64:
				f = float64(iv)
			}
		case *ast.InfinityNode, *ast.NanNode:
			d.fail(path, at, "", "%s must be a finite number, got %s", path, num.GetToken().Value)
			return
		default:
			hint := ""
			if s, isStr := n.(*ast.StringNode); isStr {
				if _, err := strconv.ParseFloat(strings.TrimSpace(s.Value), 64); err == nil {
					hint = "write the number without quotes"
				}
			}
			d.fail(path, at, hint, "%s must be a number, got %s", path, kindName(n))
			return
		}
		v.SetFloat(f)
	default:
		d.fail(path, at, "", "%s cannot be decoded (unsupported type %s)", path, t)
	}
}

func listHint(t reflect.Type) string {
	if t.Elem().Kind() == reflect.String {
		return `write a list, e.g. ["a", "b"]`
	}
	return ""
}

// resolveQuiet resolves without registering problems twice (aliases are
// reported when decoded).
func (d *decoder) resolveQuiet(n ast.Node) ast.Node {
	for i := 0; i < 64 && n != nil; i++ {
		switch m := n.(type) {
		case *ast.TagNode:
			n = m.Value
		case *ast.AnchorNode:
			n = m.Value
		case *ast.AliasNode:
			if t, ok := d.anchors[anchorName(m.Value)]; ok {
				n = t
			} else {
				return m
			}
		case *ast.MappingValueNode:
			return singleMapping(m)
		default:
			return n
		}
	}
	return n
}

// scalarString returns a scalar's text: strings as written, numbers and
// booleans as their literal text (so `model: 7` is the string "7").
func scalarString(n ast.Node) (string, bool) {
	switch s := n.(type) {
	case *ast.StringNode:
		return s.Value, true
	case *ast.LiteralNode:
		if s.Value == nil {
			return "", true
		}
		return s.Value.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return s.GetToken().Value, true
	}
	return "", false
}

// eachKey walks a mapping's entries in written order, reporting duplicate
// and non-scalar keys, and expanding merge keys (<<: *anchor): a merged key
// fills in only what the mapping does not write itself.
func (d *decoder) eachKey(m *ast.MappingNode, path string, fn func(key string, kv *ast.MappingValueNode, keyPath string)) {
	explicit := map[string]bool{}
	for _, kv := range m.Values {
		if kv == nil || kv.Key == nil {
			continue
		}
		if _, merge := kv.Key.(*ast.MergeKeyNode); merge {
			continue
		}
		if key, ok := d.keyText(kv.Key); ok {
			explicit[key] = true
		}
	}
	seen := map[string]loc{}
	var walk func(m *ast.MappingNode, depth int)
	walk = func(m *ast.MappingNode, depth int) {
		for _, kv := range m.Values {
			if kv == nil || kv.Key == nil {
				continue
			}
			if _, ok := kv.Key.(*ast.MergeKeyNode); ok {
				src := d.resolve(kv.Value)
				if mm, ok := src.(*ast.MappingNode); ok && depth < 8 {
					walk(mm, depth+1)
				} else {
					d.problem(nodeLoc(kv.Key), "", "a merge key (<<) must refer to a mapping")
				}
				continue
			}
			key, ok := d.keyText(kv.Key)
			if !ok {
				d.problem(nodeLoc(kv.Key), "", "keys in %s must be plain text", orTop(path))
				continue
			}
			at := nodeLoc(kv.Key)
			if depth > 0 && explicit[key] {
				continue // the mapping's own value wins over a merged one
			}
			if first, dup := seen[key]; dup {
				if depth == 0 {
					d.problem(at, "", "duplicate key %s in %s (first at line %d)", quoteName(key), orTop(path), first.Line%lineBase)
				}
				continue
			}
			seen[key] = at
			kp := join(path, key)
			d.record(kp, kv.Key, d.resolveQuiet(kv.Value))
			fn(key, kv, kp)
		}
	}
	walk(m, 0)
}

func orTop(path string) string {
	if path == "" {
		return "the spec"
	}
	return path
}

type fieldInfo struct {
	name  string
	index int
}

func structFields(t reflect.Type) []fieldInfo {
	var out []fieldInfo
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" || name == "" {
			continue
		}
		out = append(out, fieldInfo{name, i})
	}
	return out
}

func (d *decoder) decodeStruct(n ast.Node, path string, v reflect.Value) {
	m, ok := n.(*ast.MappingNode)
	if !ok {
		d.fail(path, nodeLoc(n), "", "%s must be a mapping of keys to values, got %s", orTop(path), kindName(n))
		return
	}
	t := v.Type()
	fields := structFields(t)
	extra := d.extraKeys[t]
	byName := map[string]int{}
	var allowed []string
	for _, f := range fields {
		byName[f.name] = f.index
		allowed = append(allowed, f.name)
	}
	for k := range extra {
		allowed = append(allowed, k)
	}
	sort.Strings(allowed)
	d.eachKey(m, path, func(key string, kv *ast.MappingValueNode, kp string) {
		if idx, ok := byName[key]; ok {
			d.decode(kv.Value, kp, v.Field(idx))
			return
		}
		if fn, ok := extra[key]; ok {
			fn(d, kv.Value, kp, v)
			return
		}
		hint := "valid keys are: " + strings.Join(allowed, ", ")
		if near := nearest(key, allowed); near != "" {
			hint = fmt.Sprintf("did you mean %q? %s", near, hint)
		}
		where := ""
		if path != "" {
			where = " in " + path
		}
		d.problem(nodeLoc(kv.Key), hint, "unknown key %s%s", quoteName(key), where)
	})
}

// generic converts a node to plain Go values (map[string]any, []any, string,
// int64, float64, bool, nil), for free-form fields such as a JSON schema.
func (d *decoder) generic(n ast.Node, path string) any {
	d.budget--
	if d.budget < 0 {
		if d.budget == -1 {
			d.problem(nodeLoc(n), "", "the spec is too large or expands aliases too far (over %d values)", maxNodes)
		}
		return nil
	}
	n = d.resolve(n)
	switch s := n.(type) {
	case nil, *ast.NullNode:
		return nil
	case *ast.MappingNode:
		out := map[string]any{}
		d.eachKey(s, path, func(key string, kv *ast.MappingValueNode, kp string) {
			out[key] = d.generic(kv.Value, kp)
		})
		return out
	case *ast.SequenceNode:
		out := make([]any, 0, len(s.Values))
		for i, item := range s.Values {
			ip := fmt.Sprintf("%s[%d]", path, i)
			d.record(ip, nil, d.resolveQuiet(item))
			out = append(out, d.generic(item, ip))
		}
		return out
	case *ast.StringNode:
		return s.Value
	case *ast.LiteralNode:
		if s.Value == nil {
			return ""
		}
		return s.Value.Value
	case *ast.IntegerNode:
		return s.Value
	case *ast.FloatNode:
		return s.Value
	case *ast.BoolNode:
		return s.Value
	case *ast.InfinityNode:
		return s.Value
	case *ast.NanNode:
		return math.NaN()
	}
	d.problem(nodeLoc(n), "", "%s holds a value of an unsupported kind (%s)", path, n.Type())
	return nil
}

// nearest returns the candidate closest to s by edit distance when it is
// close enough to be a likely typo, else "".
func nearest(s string, candidates []string) string {
	best, bestD := "", 1<<30
	for _, c := range candidates {
		if dd := editDistance(strings.ToLower(s), strings.ToLower(c)); dd < bestD {
			best, bestD = c, dd
		}
	}
	limit := 2
	if l := len([]rune(s)) / 3; l > limit {
		limit = l
	}
	if bestD <= limit && bestD < len([]rune(s)) {
		return best
	}
	return ""
}

// Nearest returns the candidate closest to s by edit distance when it is
// close enough to be a likely typo, else "". Other packages use it for
// "did you mean" hints.
func Nearest(s string, candidates []string) string { return nearest(s, candidates) }

// editDistance is the optimal-string-alignment distance (Levenshtein plus
// transpositions of adjacent characters).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 64 || len(rb) > 64 {
		if a == b {
			return 0
		}
		return 1 << 20
	}
	dp := make([][]int, len(ra)+1)
	for i := range dp {
		dp[i] = make([]int, len(rb)+1)
		dp[i][0] = i
	}
	for j := range dp[0] {
		dp[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			dp[i][j] = min(dp[i-1][j]+1, dp[i][j-1]+1, dp[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				dp[i][j] = min(dp[i][j], dp[i-2][j-2]+1)
			}
		}
	}
	return dp[len(ra)][len(rb)]
}
