package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// Options say how LoadWith reads a spec beyond its own file.
type Options struct {
	// Getenv looks up the variables ${VAR} names and the base-URL
	// variables (OPENAI_BASE_URL, ANTHROPIC_BASE_URL); nil means
	// os.Getenv.
	Getenv func(string) string
	// Overlays are files merged over the spec in order (assay run -f).
	Overlays []string
	// Providers describe the providers a target may name (the CLI passes
	// its provider registry's); nil means DefaultProviders.
	Providers []ProviderInfo
}

// InterpolatedSections are the top-level keys whose values take ${VAR}
// interpolation: what differs between environments (endpoints, models,
// headers, key files, paths, limits, time-outs). The prompt, the scorers
// and the gate define the evaluation itself and are read as written.
var InterpolatedSections = []string{"dataset", "run", "targets"}

// varRef is one ${NAME} met in a value.
type varRef struct {
	Name  string
	Value string
}

// interpError is malformed interpolation syntax or an unset variable at a
// byte offset of the value.
type interpError struct {
	Offset int
	Msg    string
	Hint   string
}

// interpolate expands ${NAME} and ${NAME:-default} in s; $$ is one literal
// $, and any other $ is kept as written. An unset (or empty) variable with
// no default, and malformed syntax, are errors. The default is literal
// text (no nesting).
func interpolate(s string, getenv func(string) string) (string, []varRef, *interpError) {
	if !strings.Contains(s, "$") {
		return s, nil, nil
	}
	var b strings.Builder
	var refs []varRef
	for i := 0; i < len(s); {
		c := s[i]
		if c != '$' || i+1 >= len(s) {
			b.WriteByte(c)
			i++
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i += 2
			continue
		case '{':
		default:
			b.WriteByte(c)
			i++
			continue
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", nil, &interpError{i, "${ is not closed with }", "write ${NAME} or ${NAME:-default}; write $$ for a literal $"}
		}
		body := s[i+2 : i+end]
		name, def, hasDef := strings.Cut(body, ":-")
		if !envName.MatchString(name) {
			what := "an empty name"
			if name != "" {
				what = "the name " + shortQuote(name)
			}
			hint := "write ${NAME} or ${NAME:-default}: a NAME is letters, digits and _, not starting with a digit; write $$ for a literal $"
			if strings.ContainsAny(name, "-:?=+") && !hasDef {
				hint = "only ${NAME} and ${NAME:-default} are supported; write $$ for a literal $"
			}
			return "", nil, &interpError{i, fmt.Sprintf("${...} holds %s", what), hint}
		}
		val := getenv(name)
		if val == "" {
			if !hasDef {
				return "", nil, &interpError{i, fmt.Sprintf("environment variable %s is not set", name), fmt.Sprintf("export %s, or give a default: ${%s:-value}", name, name)}
			}
			val = def
		}
		refs = append(refs, varRef{Name: name, Value: val})
		b.WriteString(val)
		i += end + 1
	}
	return b.String(), refs, nil
}

// interpolates reports whether path lies in a section that takes ${VAR}.
func interpolates(path string) bool {
	for _, s := range InterpolatedSections {
		if path == s || strings.HasPrefix(path, s+".") || strings.HasPrefix(path, s+"[") {
			return true
		}
	}
	return false
}

// isHeaderPath reports whether path is a header value: targets[i].headers.NAME.
func isHeaderPath(path string) bool {
	return strings.HasPrefix(path, "targets[") && strings.Contains(pattern(path), "targets[].headers.")
}

func getenvOr(f func(string) string) func(string) string {
	if f == nil {
		return os.Getenv
	}
	return f
}

// envVars lists the names interpolated anywhere in the spec, sorted.
func envVarNames(m map[string]string, secret map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	for k := range secret {
		if _, dup := m[k]; !dup {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// refAt is a variable interpolated outside a header, where it was used.
type refAt struct {
	varRef
	Path string
	At   loc
}

// interpolated expands ${VAR} in a scalar written as text at path; ok is
// false when there is nothing to expand (or on an error, then reported and
// the path marked bad).
func (d *decoder) interpolated(n ast.Node, path string) (string, bool) {
	var value string
	switch s := n.(type) {
	case *ast.StringNode:
		value = s.Value
	case *ast.LiteralNode:
		if s.Value == nil {
			return "", false
		}
		value = s.Value.Value
	default:
		return "", false
	}
	if !strings.Contains(value, "$") {
		return "", false
	}
	out, refs, ierr := interpolate(value, d.getenv)
	if ierr != nil {
		d.fail(path, d.locate(n, value, ierr.Offset), ierr.Hint, "%s: %s", path, ierr.Msg)
		return "", false
	}
	header := isHeaderPath(path)
	if header {
		if d.hdrPaths == nil {
			d.hdrPaths = map[string][]string{}
		}
		d.hdrPaths[path] = nil
	}
	for _, r := range refs {
		if header {
			d.hdrVars[r.Name] = true
			d.hdrPaths[path] = append(d.hdrPaths[path], r.Name)
			continue
		}
		d.vars[r.Name] = r.Value
		d.refs = append(d.refs, refAt{r, path, d.locate(n, value, strings.Index(value, "${"+r.Name))})
	}
	if out == value && len(refs) == 0 {
		return "", false
	}
	return out, true
}

// locate finds the ${ at byte offset off of value in the source line of n,
// when the value is on one line; otherwise the value's own position.
func (d *decoder) locate(n ast.Node, value string, off int) loc {
	at := nodeLoc(n)
	if off < 0 || off > len(value) || strings.Contains(value, "\n") {
		return at
	}
	k := at.Line / lineBase
	if k >= len(d.srcs) {
		return at
	}
	lines := strings.Split(string(d.srcs[k]), "\n")
	ln := at.Line - k*lineBase
	if ln < 1 || ln > len(lines) {
		return at
	}
	line := lines[ln-1]
	nth := strings.Count(value[:off], "${")
	from := at.Col - 1
	if from < 0 || from > len(line) {
		return at
	}
	pos := from
	for i := 0; ; i++ {
		j := strings.Index(line[pos:], "${")
		if j < 0 {
			return at
		}
		if i == nth {
			return loc{at.Line, pos + j + 1}
		}
		pos += j + 2
	}
}

// setText stores interpolated text in v, read as v's type.
func (d *decoder) setText(path string, at loc, v reflect.Value, text string) {
	t := v.Type()
	got := shortQuote(text) + " (after ${...})"
	if t == durationType {
		dur, err := time.ParseDuration(strings.TrimSpace(text))
		if err != nil || dur < 0 {
			d.fail(path, at, "write a duration like 30s, 1m30s or 250ms", "%s must be a duration, got %s", path, got)
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
		d.setText(path, at, v.Elem(), text)
	case reflect.String:
		v.SetString(text)
	case reflect.Bool:
		b, err := strconv.ParseBool(strings.TrimSpace(text))
		if err != nil {
			d.fail(path, at, "write true or false", "%s must be true or false, got %s", path, got)
			return
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
		if err != nil || v.OverflowInt(x) {
			d.fail(path, at, "", "%s must be a whole number, got %s", path, got)
			return
		}
		v.SetInt(x)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			d.fail(path, at, "", "%s must be a finite number, got %s", path, got)
			return
		}
		v.SetFloat(f)
	default:
		d.fail(path, at, "", "%s cannot take text, got %s", path, got)
	}
}

// applyOverlays merges each overlay root into root and returns the result.
func (d *decoder) applyOverlays(root ast.Node, ovs []ast.Node) ast.Node {
	base := asMapping(root)
	if mv, ok := root.(*ast.MappingValueNode); ok {
		base = singleMapping(mv)
	}
	if base == nil {
		return root // the decoder reports that the spec is not a mapping
	}
	mg := &merger{d: d}
	for _, ov := range ovs {
		om := asMapping(ov)
		if mv, ok := ov.(*ast.MappingValueNode); ok {
			om = singleMapping(mv)
		}
		if om == nil {
			d.problem(nodeLoc(ov), "an overlay is a mapping of the spec's keys, e.g. targets: [{name: gpt, base_url: ...}]", "an overlay must be a mapping, got %s", kindName(ov))
			continue
		}
		mg.merge(base, om, "")
	}
	return base
}

// httpToken is what an HTTP header name may hold (RFC 9110 token).
var httpToken = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// reservedHeaders are set by the HTTP client or the SDK; a spec cannot
// replace them.
var reservedHeaders = []string{"authorization", "x-api-key", "host", "content-length", "content-type", "transfer-encoding", "connection"}

// resolveEnv finishes what the environment decides once the spec is
// decoded: the key check on interpolated variables, headers, api_key_file,
// the base-URL variables, and the names the run records.
func (d *decoder) resolveEnv(s *Spec) {
	// The variables a hosted target reads its key from when it names none
	// never reach a spec value by interpolation either.
	keyVars := map[string]bool{}
	for _, info := range s.infos() {
		if info.KeyEnv != "" {
			keyVars[info.KeyEnv] = true
		}
	}
	for _, t := range s.Targets {
		if t.APIKeyEnv != "" {
			keyVars[t.APIKeyEnv] = true
		}
	}
	for _, r := range d.refs {
		switch {
		case keyVars[r.Name]:
			d.fail(r.Path, r.At, "the key is read from the variable api_key_env names (or api_key_file), never written into the spec",
				"%s: ${%s} holds an API key; it cannot be interpolated into a spec value", r.Path, r.Name)
		case LooksLikeSecret(r.Value):
			d.fail(r.Path, r.At, "keys come only through api_key_env or api_key_file; a secret header value goes in headers:, whose values are never stored",
				"%s: the value of ${%s} looks like a secret (%s); it would be stored with the run", r.Path, r.Name, MaskSecret(r.Value))
		}
	}
	for i := range s.Targets {
		t := &s.Targets[i]
		p := fmt.Sprintf("targets[%d]", i)
		info, known := s.ProviderInfo(t.Provider)
		if len(t.Headers) > 0 {
			if known && !info.Reads("headers") {
				d.problemAt(s, p+".headers", "headers apply to "+s.readers("headers"), "%s.headers is set but the provider is %s", p, t.Provider)
			}
			vars := map[string]bool{}
			for _, name := range sortedKeys(t.Headers) {
				hp := p + ".headers." + name
				val := t.Headers[name]
				names, interp := d.hdrPaths[hp]
				for _, n := range names {
					vars[n] = true
				}
				switch {
				case !httpToken.MatchString(name):
					d.problemAtKey(s, hp, "a header name is letters, digits and -", "%s: %s is not a valid HTTP header name", p+".headers", quoteName(name))
				case contains(reservedHeaders, strings.ToLower(name)):
					d.problemAtKey(s, hp, "the key goes in api_key_env or api_key_file; the client sets the others", "%s: header %s is set by assay or the SDK and cannot be replaced", p+".headers", name)
				case strings.ContainsFunc(val, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }):
					d.problemAt(s, hp, "a header value is one line of text; check the variable for a trailing newline", "%s: the value of header %s holds a line break or control character", p+".headers", name)
				case !interp && LooksLikeSecret(val):
					d.problemAt(s, hp, "write the value as ${VAR} and export it: header values from the environment are never stored and are redacted from outputs",
						"%s: header %s holds what looks like a secret (%s) written into the spec", p+".headers", name, MaskSecret(val))
				}
				t.HeaderNames = append(t.HeaderNames, name)
			}
			t.HeaderVars = sortedKeys(vars)
		}
		if t.APIKeyFile != "" {
			switch {
			case known && !info.Reads("api_key_file"):
				d.problemAt(s, p+".api_key_file", "api_key_file applies to "+s.readers("api_key_file"), "%s.api_key_file is set but the provider is %s", p, t.Provider)
			case t.APIKeyEnv != "":
				d.problemAt(s, p+".api_key_file", "keep one of api_key_env and api_key_file", "%s sets both api_key_env and api_key_file", p)
			}
		}
		if name := info.BaseURLEnv; known && name != "" && t.BaseURL == "" {
			if val := d.getenv(name); val != "" {
				if msg := checkURL(val); msg != "" {
					d.problemAt(s, p, "fix or unset "+name+", or set base_url on the target", "%s (provider %s, no base_url): %s from the environment %s", p, t.Provider, name, msg)
				} else {
					t.BaseURL, t.BaseURLEnv = val, name
				}
			}
		}
	}
	s.EnvVars = envVarNames(d.vars, d.hdrVars)
	s.Overlays = append([]string(nil), s.overlays...)
}

// problemAt records a problem at a written path (its nearest written
// ancestor otherwise), as Problemf locates it.
func (d *decoder) problemAt(s *Spec, path, hint, format string, args ...any) {
	line, col, _ := s.Pos(path)
	d.problem(loc{line, col}, hint, format, args...)
}

// problemAtKey records a problem at the key naming a written path (a
// header's name rather than its value).
func (d *decoder) problemAtKey(s *Spec, path, hint, format string, args ...any) {
	if p, ok := s.pos[path]; ok {
		d.problem(p.Key, hint, format, args...)
		return
	}
	d.problemAt(s, path, hint, format, args...)
}

// hashExtra lists what, beyond the spec's bytes and files, decides the
// spec: each overlay's bytes, each interpolated variable's value (outside
// headers: header values are secrets, and a rotated token is the same
// spec) and each base URL taken from the environment. Empty for a spec
// that uses none of them, whose hash is then what it always was.
func (d *decoder) hashExtra(s *Spec, ovs []overlaySource) [][2]string {
	var out [][2]string
	for i, ov := range ovs {
		out = append(out, [2]string{"overlay " + strconv.Itoa(i), string(ov.Src)})
	}
	for _, name := range sortedKeys(d.vars) {
		out = append(out, [2]string{"env " + name, d.vars[name]})
	}
	for _, t := range s.Targets {
		if t.BaseURLEnv != "" {
			out = append(out, [2]string{"base_url " + t.Name, t.BaseURL})
		}
	}
	return out
}

func rehash(h string, extra [][2]string) string {
	x := sha256.New()
	writeField(x, "hash", []byte(h))
	for _, f := range extra {
		writeField(x, f[0], []byte(f[1]))
	}
	return "sha256:" + hex.EncodeToString(x.Sum(nil))
}
