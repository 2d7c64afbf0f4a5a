package spec

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"regexp/syntax"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	yaml "github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// MaxSpecBytes bounds the size of a spec file. The YAML parser's time grows
// faster than linearly on some inputs, so the bound is well above any real
// spec (long prompts belong in file:// references) but keeps parsing short.
const MaxSpecBytes = 256 << 10

// MaxPromptBytes bounds a file read for the prompt or the scorers (a
// file:// prompt or rubric, a JSON schema and each file it $refs).
const MaxPromptBytes = 4 << 20

// maxFlowDepth bounds [ and { nesting, on which the YAML parser is slowest.
const maxFlowDepth = 100

// Defaults applied when the spec does not set a value.
const (
	DefaultID          = "line"
	DefaultEpochs      = 1
	DefaultTimeout     = 60 * time.Second
	DefaultRetries     = 6
	DefaultConcurrency = 8
	// DefaultMaxErrorRate is run.max_error_rate when the spec sets none.
	DefaultMaxErrorRate = 0.2
)

// Upper bounds on the spec's counts: each is far above what a run needs,
// and keeps every product the runner forms (cases × targets × epochs, a
// rate in events per second, a buffer of max_output_bytes) representable
// and runnable.
const (
	MaxEpochs         = 1000
	MaxConcurrency    = 1024
	MaxRPM            = 1_000_000
	MaxTPM            = 1_000_000_000
	MaxRetries        = 100
	MaxOutputBytesCap = 64 << 20
	// MaxCalls bounds cases × targets × epochs, checked once the dataset
	// is read (task.Load).
	MaxCalls = 100_000_000
)

// Formats are the accepted values of dataset.format.
var Formats = []string{"jsonl", "csv"}

// OutputFormats are the accepted values of output.format.
var OutputFormats = []string{"text", "regex", "json", "last_number"}

// FilePrefix marks a value that is read from a file relative to the spec.
const FilePrefix = "file://"

// Load reads, decodes, defaults and validates the spec at path.
//
// When the file cannot be read it returns (nil, err). When the YAML does not
// parse it returns (nil, Problems). Otherwise it returns the spec — even when
// it has problems, so that later checks (dataset, prompt, scorers) can still
// run and every problem is reported at once — and, if there were any, the
// Problems sorted by position as the error. Problem positions name the file
// as path was given.
func Load(path string) (*Spec, error) {
	return LoadWith(path, Options{})
}

// LoadWith is Load with ${VAR} looked up through o.Getenv and o.Overlays
// merged over the spec (see overlay.go); problems in an overlay name the
// overlay's file.
func LoadWith(path string, o Options) (*Spec, error) {
	src, err := readSpecFile(path, "spec")
	if err != nil {
		return nil, err
	}
	var ovs []overlaySource
	for _, f := range o.Overlays {
		b, err := readSpecFile(f, "overlay")
		if err != nil {
			return nil, err
		}
		ovs = append(ovs, overlaySource{File: f, Src: b})
	}
	return parseSpec(path, src, ovs, o)
}

func readSpecFile(path, what string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, MaxSpecBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", what, path, err)
	}
	return src, nil
}

// Parse is Load on bytes already read; file is the name shown in problems
// and its directory is the base of relative paths.
func Parse(file string, src []byte) (*Spec, error) {
	return parseSpec(file, src, nil, Options{})
}

// checkSource bounds one file's size and nesting before it is parsed.
func checkSource(file string, src []byte) Problems {
	if len(src) > MaxSpecBytes {
		return Problems{{File: file, Line: 1, Col: 1, Msg: fmt.Sprintf("the spec is larger than %d KiB", MaxSpecBytes>>10), Hint: "move long prompts to file:// references"}}
	}
	if line, col, deep := tooDeep(src); deep {
		return Problems{{File: file, Line: line, Col: col, Msg: fmt.Sprintf("the spec nests [ or { more than %d deep", maxFlowDepth)}}
	}
	return nil
}

func parseSpec(file string, src []byte, ovs []overlaySource, o Options) (*Spec, error) {
	if probs := checkSource(file, src); probs != nil {
		return nil, probs
	}
	root, probs := parseYAML(file, src)
	if probs != nil {
		return nil, probs
	}
	if probs := checkExpansion(file, root); probs != nil {
		return nil, probs
	}
	var ovFiles []string
	var ovRoots []ast.Node
	for k, ov := range ovs {
		if probs := checkSource(ov.File, ov.Src); probs != nil {
			return nil, probs
		}
		r, probs := parseYAML(ov.File, ov.Src)
		if probs != nil {
			return nil, probs
		}
		if probs := checkExpansion(ov.File, r); probs != nil {
			return nil, probs
		}
		shiftLines(r, (k+1)*lineBase)
		ovFiles = append(ovFiles, ov.File)
		ovRoots = append(ovRoots, r)
	}
	s := &Spec{File: file, Dir: filepath.Dir(file), overlays: ovFiles, providers: o.Providers}
	srcs := [][]byte{src}
	for _, ov := range ovs {
		srcs = append(srcs, ov.Src)
	}
	d := &decoder{
		file:    file,
		getenv:  getenvOr(o.Getenv),
		srcs:    srcs,
		vars:    map[string]string{},
		hdrVars: map[string]bool{},
		pos:     map[string]position{},
		bad:     map[string]bool{},
		anchors: map[string]ast.Node{},
		budget:  maxNodes,
		newElem: func(pat string, v reflect.Value) {
			if pat == "targets[]" {
				// max_output_bytes stays 0 unless set: each provider
				// has its own default (exec 1 MiB of stdout, HTTP 16 MiB
				// of reply).
				v.Set(reflect.ValueOf(Target{
					Limits: Limits{Concurrency: DefaultConcurrency},
				}))
			}
		},
		extraKeys: map[reflect.Type]map[string]func(*decoder, ast.Node, string, reflect.Value){
			reflect.TypeOf(Dataset{}): {"tags": decodeTags},
			reflect.TypeOf(Spec{}):    {"tools": decodeTools, "response_format": decodeResponseFormat},
		},
	}
	// Defaults are set before decoding, so a value written as 0 stays 0
	// (and is then checked) while an absent one keeps its default.
	s.Dataset.ID = DefaultID
	s.Run = RunConfig{Epochs: DefaultEpochs, Timeout: Duration(DefaultTimeout), Retries: DefaultRetries, MaxErrorRate: DefaultMaxErrorRate}
	if len(ovRoots) > 0 {
		root = d.applyOverlays(root, ovRoots)
	}
	d.record("", nil, root)
	d.decode(root, "", reflect.ValueOf(s).Elem())
	s.pos = d.pos
	d.resolveEnv(s)

	v := &validator{s: s, probs: d.probs, bad: d.bad}
	v.check()
	s.Hash = v.hash(src)
	if extra := d.hashExtra(s, ovs); len(extra) > 0 {
		s.Hash = rehash(s.Hash, extra)
	}
	probs = v.probs
	if len(probs) == 0 {
		return s, nil
	}
	relocate(probs, file, ovFiles)
	probs = probs.Sort(file)
	return s, probs
}

// parseYAML parses src into the node holding the spec's top-level mapping.
func parseYAML(file string, src []byte) (_ ast.Node, probs Problems) {
	defer func() {
		// The YAML library is the first reader of outside input; a panic in
		// it must become a problem, not a crash.
		if r := recover(); r != nil {
			probs = Problems{{File: file, Line: 1, Col: 1, Msg: "invalid YAML: the parser failed on this input"}}
		}
	}()
	f, err := parser.ParseBytes(src, 0, parser.AllowDuplicateMapKey())
	if err != nil {
		p := Problem{File: file, Line: 1, Col: 1, Msg: "invalid YAML: " + err.Error()}
		var ye yaml.Error
		if errors.As(err, &ye) {
			p.Msg = "invalid YAML: " + ye.GetMessage()
			p.Hint = yamlHint(ye.GetMessage())
			if tk := ye.GetToken(); tk != nil && tk.Position != nil {
				at := tokLoc(tk.Position.Line, tk.Position.Column)
				p.Line, p.Col = at.Line, at.Col
			}
		}
		return nil, Problems{p}
	}
	var docs []*ast.DocumentNode
	for _, doc := range f.Docs {
		if doc != nil && doc.Body != nil {
			docs = append(docs, doc)
		}
	}
	if len(docs) == 0 {
		return nil, Problems{{File: file, Line: 1, Col: 1, Msg: "the spec is empty", Hint: "it needs at least dataset, prompt and targets"}}
	}
	if len(docs) > 1 {
		at := nodeLoc(docs[1].Body)
		return nil, Problems{{File: file, Line: at.Line, Col: at.Col, Msg: "the spec must be a single YAML document, found a second one", Hint: "remove the '---' separator"}}
	}
	return docs[0].Body, nil
}

// tooDeep reports where flow nesting first exceeds maxFlowDepth. It does
// not parse quotes, so brackets inside strings count; real specs stay far
// below the bound either way.
func tooDeep(src []byte) (line, col int, deep bool) {
	depth := 0
	line, col = 1, 0
	for _, b := range src {
		col++
		switch b {
		case '\n':
			line, col = line+1, 0
		case '[', '{':
			depth++
			if depth > maxFlowDepth {
				return line, col, true
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return 0, 0, false
}

// yamlHint suggests a fix for the YAML library's commonest complaints.
func yamlHint(msg string) string {
	switch {
	case strings.Contains(msg, "double-quoted"):
		return `close the string with a matching "`
	case strings.Contains(msg, "single-quoted"):
		return "close the string with a matching '"
	case strings.Contains(msg, "mapping value is not allowed"):
		return `check the indentation here and on the lines below; quote a value that contains ": "`
	case strings.Contains(msg, "']'"):
		return "a list opened with [ is not closed"
	case strings.Contains(msg, "'}'"):
		return "a mapping opened with { is not closed"
	case strings.Contains(msg, "tab"):
		return "indent with spaces, not tabs"
	}
	return ""
}

func decodeTags(d *decoder, n ast.Node, path string, v reflect.Value) {
	n = d.resolve(n)
	if n == nil || isNull(n) {
		return
	}
	m, ok := n.(*ast.MappingNode)
	if !ok {
		d.fail(path, nodeLoc(n), "write tags as a mapping, e.g. tags: {tier: difficulty}", "%s must be a mapping of tag name to field or CEL expression, got %s", path, kindName(n))
		return
	}
	var tags []Tag
	d.eachKey(m, path, func(key string, kv *ast.MappingValueNode, kp string) {
		val := d.resolve(kv.Value)
		expr, ok := scalarString(val)
		if !ok || isNull(val) {
			what := "nothing"
			if val != nil {
				what = kindName(val)
			}
			d.problem(nodeLoc(kv.Key), "a tag is a field name or a CEL expression over case", "%s must be a field name or a CEL expression, got %s", kp, what)
			return
		}
		if strings.TrimSpace(expr) == "" {
			d.problem(nodeLoc(val), "a tag is a field name or a CEL expression over case", "%s is empty", kp)
			return
		}
		tags = append(tags, Tag{Key: key, Expr: expr})
	})
	ds := v.Addr().Interface().(*Dataset)
	ds.Tags = tags
}

// Resolve returns a path written in the spec (dataset.path, replay.path, a
// file:// reference) as a path usable from the working directory: joined
// to the spec's directory unless it is absolute. Paths in a loaded Spec stay
// as written; callers resolve them with this (or filepath.Join(s.Dir, p)).
func (s *Spec) Resolve(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(s.Dir, p)
}

// PromptHash is "sha256:<hex>" over everything a request carries besides
// the case's data: the system and user templates' text (for a file://
// template, the file's content as read), and, each only when the spec
// sets it, the prompt.messages templates, prompt.messages_field, the
// tools, tool_choice and response_format (their schemas by content) and
// the agent's configuration (its handlers, and the files they read by
// content). A spec that sets none of the latter hashes as it did before
// they existed.
func (s *Spec) PromptHash() string {
	h := sha256.New()
	writeField(h, "system", []byte(s.Prompt.System))
	writeField(h, "user", []byte(s.Prompt.User))
	for i, m := range s.Prompt.Messages {
		n := strconv.Itoa(i)
		writeField(h, "messages["+n+"].role", []byte(m.Role))
		writeField(h, "messages["+n+"].content", []byte(m.Content))
		if m.ToolCallID != "" {
			writeField(h, "messages["+n+"].tool_call_id", []byte(m.ToolCallID))
		}
	}
	if s.Prompt.MessagesField != "" {
		writeField(h, "messages_field", []byte(s.Prompt.MessagesField))
	}
	for i, t := range s.Tools {
		n := strconv.Itoa(i)
		writeField(h, "tools["+n+"].name", []byte(t.Name))
		writeField(h, "tools["+n+"].description", []byte(t.Description))
		writeField(h, "tools["+n+"].parameters", t.Parameters)
	}
	if s.ToolChoice != "" {
		writeField(h, "tool_choice", []byte(s.ToolChoice))
	}
	if f := s.ResponseFormat; f != nil {
		writeField(h, "response_format.name", []byte(f.Name))
		writeField(h, "response_format.schema", f.Schema)
		writeField(h, "response_format.strict", []byte(strconv.FormatBool(f.Strict)))
	}
	s.writeAgent(h)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// ScorersHash is "sha256:<hex>" over the definition of correct: the output
// parser, the scorers, refusal detection, error costs, how primary scorers
// combine, and the content of every file the scorers read (a file://
// rubric, a JSON schema and each file it $refs; those a compiler reads are
// recorded as it reads them, so call this after compiling the scorers, as
// task.Load does). Two runs with the same ScorersHash scored outputs the
// same way. A spec that reads no file and sets no error costs hashes as it
// did before files and error costs were covered. The tools' parameters are
// covered too (the scorers of tool calls check arguments against them); a
// spec without tools hashes as before.
func (s *Spec) ScorersHash() string {
	type toolParams struct {
		Name       string `json:"name"`
		Parameters string `json:"parameters,omitempty"`
	}
	var tools []toolParams
	for _, t := range s.Tools {
		tools = append(tools, toolParams{t.Name, string(t.Parameters)})
	}
	b, err := json.Marshal(struct {
		Output  Output       `json:"output"`
		Scorers []Scorer     `json:"scorers"`
		Refusal *Refusal     `json:"refusal,omitempty"`
		Combine string       `json:"combine,omitempty"`
		Errors  *ErrorCost   `json:"error_costs,omitempty"`
		Files   []FileDigest `json:"files,omitempty"`
		Tools   []toolParams `json:"tool_parameters,omitempty"`
	}{s.Output, s.Scorers, s.Refusal, s.Combine, s.Errors, s.filesFor(FileForScorers), tools})
	if err != nil {
		// Every field is plain data; a failure here is a programming error.
		panic(fmt.Sprintf("spec: hashing the scorers: %v", err))
	}
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}

func writeField(h hash.Hash, name string, b []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(name)))
	h.Write(n[:])
	h.Write([]byte(name))
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	h.Write(n[:])
	h.Write(b)
}

// Sort orders problems by file (the spec file first, then the others by
// name) and position within each file, dropping exact duplicates.
func (ps Problems) Sort(specFile string) Problems {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if a.File != b.File {
			if a.File == specFile || b.File == specFile {
				return a.File == specFile
			}
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	out := ps[:0]
	for i, p := range ps {
		if i > 0 && p == ps[i-1] {
			continue
		}
		out = append(out, p)
	}
	return out
}

// Pos returns where path is written in the spec: the value for a scalar, the
// key for a mapping or list, or the nearest written ancestor's key when the
// path itself was not written. ok is false when the spec was not loaded from
// YAML (positions are then 1:1).
func (s *Spec) Pos(path string) (line, col int, ok bool) {
	if s.pos == nil {
		return 1, 1, false
	}
	if p, found := s.pos[path]; found {
		at := p.Val
		if p.Block {
			at = p.Key
		}
		return at.Line, at.Col, true
	}
	for path != "" {
		path = parent(path)
		if p, found := s.pos[path]; found {
			return p.Key.Line, p.Key.Col, true
		}
	}
	return 1, 1, true
}

// parent strips the last element of a path: "a.b[2].c" → "a.b[2]" → "a.b".
func parent(path string) string {
	i := strings.LastIndexAny(path, ".[")
	if i < 0 {
		return ""
	}
	return path[:i]
}

// Problemf returns a problem located at a path in the spec, such as
// "scorers[2].pattern" or "targets[0].limits.rpm". When the path has no node
// (a key that was never written), the nearest written ancestor is used.
func (s *Spec) Problemf(path, hint, format string, args ...any) Problem {
	line, col, _ := s.Pos(path)
	file, line := fileOf(s.File, s.overlays, line)
	return Problem{File: file, Line: line, Col: col, Msg: fmt.Sprintf(format, args...), Hint: hint}
}

// validator checks what decoding cannot: required fields, ranges, cross
// references and files, after defaults.
type validator struct {
	s     *Spec
	probs Problems
	bad   map[string]bool // paths already reported as undecodable
	files [][2]string     // file:// references read: key, content
	// toolNames are the names of the tools read, in order (tools.go).
	toolNames []string
}

func (v *validator) at(path, hint, format string, args ...any) {
	for p := path; ; p = parent(p) {
		if v.bad[p] {
			return // its value (or a parent's) was reported as undecodable
		}
		if p == "" {
			break
		}
	}
	v.probs = append(v.probs, v.s.Problemf(path, hint, format, args...))
}

func (v *validator) written(path string) bool {
	_, ok := v.s.pos[path]
	return ok
}

func (v *validator) check() {
	s := v.s
	v.checkDataset()
	v.checkPrompt()
	v.checkTools()
	v.checkToolChoice()
	v.checkResponseFormat()
	v.checkAgent()
	v.checkTargets()
	v.checkCandidates()
	v.checkJudgesOnly()
	v.checkOutput()
	v.checkScorers()
	v.checkGate()
	v.checkCalibration()
	v.checkLabels()
	v.checkTraces()
	v.checkDifficulty()
	v.checkLoad()

	if s.Run.Epochs < 1 {
		v.at("run.epochs", "", "run.epochs must be at least 1, got %d", s.Run.Epochs)
	} else if s.Run.Epochs > MaxEpochs {
		v.at("run.epochs", "", "run.epochs must be between 1 and %d, got %d", MaxEpochs, s.Run.Epochs)
	}
	if s.Run.Retries < 0 {
		v.at("run.retries", "use 0 for no retries", "run.retries must not be negative, got %d", s.Run.Retries)
	} else if s.Run.Retries > MaxRetries {
		v.at("run.retries", "", "run.retries must be between 0 and %d, got %d", MaxRetries, s.Run.Retries)
	}
	if s.Run.Schedule != "" && !contains(Schedules, s.Run.Schedule) {
		hint := "run.schedule is " + strings.Join(Schedules, " or ")
		if near := nearest(s.Run.Schedule, Schedules); near != "" {
			hint = fmt.Sprintf("did you mean %q? %s", near, hint)
		}
		v.at("run.schedule", hint, "unknown run.schedule %s", shortQuote(s.Run.Schedule))
	}
	if r := s.Run.MaxErrorRate; !(r >= 0 && r <= 1) {
		v.at("run.max_error_rate", "a share of the results between 0 and 1, e.g. 0.2 for 20%", "run.max_error_rate must be between 0 and 1, got %v", r)
	}
	if s.Run.Timeout <= 0 {
		v.at("run.timeout", "write a duration like 30s, 1m30s or 250ms", "run.timeout must be greater than 0")
	}
	if s.Volume.RequestsPerMonth < 0 {
		v.at("volume.requests_per_month", "", "volume.requests_per_month must not be negative")
	}
	if e := s.Errors; e != nil {
		if e.Silent < 0 {
			v.at("error_costs.silent", "", "error_costs.silent must not be negative")
		}
		if e.Loud < 0 {
			v.at("error_costs.loud", "", "error_costs.loud must not be negative")
		}
		for _, k := range sortedKeys(e.ByKind) {
			if e.ByKind[k] < 0 {
				v.at("error_costs.by_kind."+k, "", "error_costs.by_kind.%s must not be negative", k)
			}
		}
	}
	if s.Name == "" {
		s.Name = strings.TrimSuffix(filepath.Base(s.File), filepath.Ext(s.File))
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (v *validator) checkDataset() {
	ds := &v.s.Dataset
	if ds.Path == "" {
		v.at("dataset.path", "the JSONL or CSV file of cases, relative to the spec", "dataset.path is required")
	}
	switch {
	case ds.Format != "":
		if !contains(Formats, ds.Format) {
			v.at("dataset.format", "supported formats are: "+strings.Join(Formats, ", "), "unknown dataset format %s", shortQuote(ds.Format))
		}
	case ds.Path != "":
		switch strings.ToLower(filepath.Ext(ds.Path)) {
		case ".jsonl", ".ndjson", ".jsonlines":
			ds.Format = "jsonl"
		case ".csv":
			ds.Format = "csv"
		default:
			v.at("dataset.path", "set dataset.format to jsonl or csv", "cannot tell the dataset format from the file name %s", shortQuote(filepath.Base(ds.Path)))
		}
	}
	if strings.TrimSpace(ds.ID) == "" {
		ds.ID = DefaultID
	}
	if ds.ExpectedExtract != "" {
		v.checkRegex("dataset.expected_extract", ds.ExpectedExtract, `'####\s*(.+)$'`)
		if ds.Expected == "" {
			v.at("dataset.expected_extract", "name the field to extract from with dataset.expected", "dataset.expected_extract needs dataset.expected")
		}
	}
	if ds.Limit < 0 {
		v.at("dataset.limit", "use 0 or leave it out to read every case", "dataset.limit must not be negative, got %d", ds.Limit)
	}
}

// checkRegex compiles a regex whose first group is used.
func (v *validator) checkRegex(path, expr, example string) {
	re, err := regexp.Compile(expr)
	if err != nil {
		v.at(path, "the syntax is Go's RE2: https://golang.org/s/re2syntax", "%s does not compile: %s", path, regexErr(err))
		return
	}
	if re.NumSubexp() < 1 {
		v.at(path, "wrap the part to keep in parentheses, e.g. "+example, "%s has no capture group; its first group is the value", path)
	}
}

// regexErr drops the pattern that regexp repeats in its messages (the
// position already points at it).
func regexErr(err error) string {
	var re *syntax.Error
	if errors.As(err, &re) {
		return re.Code.String() + ": " + shortQuote(re.Expr)
	}
	return err.Error()
}

func (v *validator) checkPrompt() {
	p := &v.s.Prompt
	p.System = v.readRef("prompt.system", FileForPrompt, p.System, &p.SystemFile)
	p.User = v.readRef("prompt.user", FileForPrompt, p.User, &p.UserFile)
	if v.written("prompt.messages") {
		v.checkMessages()
		return
	}
	if p.User == "" && p.UserFile == "" && p.MessagesField == "" {
		v.at("prompt.user", `the user message template, e.g. user: "Q: {{.question}}"`, "prompt.user is required")
	}
}

// checkMessages checks prompt.messages: each a known role and a content
// template (inline or file://), and no prompt.system or prompt.user
// beside them.
func (v *validator) checkMessages() {
	p := &v.s.Prompt
	const hint = "write the system and user messages as entries of prompt.messages, e.g. - {role: system, content: ...}"
	for _, k := range []string{"system", "user"} {
		if v.written("prompt." + k) {
			v.at("prompt."+k, hint, "prompt.%s cannot be used with prompt.messages", k)
		}
	}
	if len(p.Messages) == 0 && !v.bad["prompt.messages"] {
		v.at("prompt.messages", `e.g. messages: [{role: user, content: "Q: {{.question}}"}]`, "prompt.messages must list at least one message")
	}
	roles := "roles are " + strings.Join(MessageRoles, ", ")
	for i := range p.Messages {
		m := &p.Messages[i]
		mp := fmt.Sprintf("prompt.messages[%d]", i)
		m.Content = v.readRef(mp+".content", FileForPrompt, m.Content, &m.ContentFile)
		switch {
		case m.Role == "":
			v.at(mp+".role", roles, "%s.role is required", mp)
		case !contains(MessageRoles, m.Role):
			hint := roles
			if near := nearest(m.Role, MessageRoles); near != "" {
				hint = fmt.Sprintf("did you mean %q? %s", near, roles)
			}
			v.at(mp+".role", hint, "unknown role %s", shortQuote(m.Role))
		}
		if m.Content == "" && m.ContentFile == "" && !v.written(mp+".content") {
			v.at(mp+".content", `the message's template, e.g. content: "Q: {{.question}}"`, "%s.content is required", mp)
		}
		switch {
		case m.ToolCallID != "" && m.Role != "tool":
			v.at(mp+".tool_call_id", "only a tool message answers a call", "%s.tool_call_id is set but the role is %s", mp, shortQuote(m.Role))
		case m.Role == "tool" && m.ToolCallID == "":
			v.at(mp+".tool_call_id", "the id of the assistant's call this result answers", "%s is a tool message: tool_call_id is required", mp)
		}
	}
}

// readRef returns the content of a file:// reference (recording it for the
// spec hash and in Files, as read for use), or val itself.
func (v *validator) readRef(path, use, val string, file *string) string {
	if !strings.HasPrefix(val, FilePrefix) {
		return val
	}
	rel := strings.TrimPrefix(val, FilePrefix)
	*file = rel
	if rel == "" {
		v.at(path, "write file://path/relative/to/the/spec.txt", "%s names no file", path)
		return ""
	}
	b, err := readLimited(v.s.Resolve(rel))
	if err != nil {
		v.at(path, "paths are relative to the spec's directory", "%s: cannot read %s: %s", path, shortQuote(rel), FileError(err))
		return ""
	}
	v.files = append(v.files, [2]string{path, string(b)})
	v.s.record(use, rel, b)
	return string(b)
}

func readLimited(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxPromptBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxPromptBytes {
		return nil, fmt.Errorf("file is larger than %d MiB", MaxPromptBytes>>20)
	}
	return b, nil
}

// FileError describes a file error without repeating the machine's path
// (the problem that carries it already names the file as the user wrote it).
func FileError(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	case errors.Is(err, syscall.EISDIR):
		return "it is a directory, not a file"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (v *validator) checkTargets() {
	s := v.s
	if len(s.Targets) == 0 {
		if v.written("targets") {
			v.at("targets", "", "targets must list at least one target")
		} else {
			v.at("targets", "add targets: [{name: ..., provider: ...}]", "targets is required (at least one target)")
		}
		return
	}
	names := map[string]int{}
	for i := range s.Targets {
		t := &s.Targets[i]
		p := fmt.Sprintf("targets[%d]", i)
		switch {
		case t.Name == "":
			v.at(p+".name", "", "%s.name is required", p)
		case strings.ContainsAny(t.Name, ", \t\n"):
			v.at(p+".name", "use letters, digits, '-', '_' or '.'", "target name %s must not contain commas or spaces", shortQuote(t.Name))
		default:
			if first, dup := names[t.Name]; dup {
				l, _, _ := s.Pos(fmt.Sprintf("targets[%d].name", first))
				v.at(p+".name", "target names must be unique", "duplicate target name %q (first at line %d)", t.Name, l)
			} else {
				names[t.Name] = i
			}
		}
		provNames := s.providerNames()
		supported := "supported providers are: " + strings.Join(provNames, ", ")
		info, known := s.ProviderInfo(t.Provider)
		switch {
		case t.Provider == "":
			v.at(p+".provider", supported, "%s.provider is required", p)
		case known:
			v.checkProvider(t, p, info)
		default:
			hint := supported
			if near := nearest(t.Provider, provNames); near != "" {
				hint = fmt.Sprintf("did you mean %q? %s", near, supported)
			}
			v.at(p+".provider", hint, "unknown provider %s", shortQuote(t.Provider))
		}
		if known && !info.Reads("replay") && t.Replay != nil {
			v.at(p+".replay", "replay applies to "+s.readers("replay")+" only", "%s.replay is set but the provider is %s", p, t.Provider)
		}
		if known && !info.Reads("command") && len(t.Command) > 0 {
			v.at(p+".command", "command applies to "+s.readers("command")+" only", "%s.command is set but the provider is %s", p, t.Provider)
		}
		switch {
		case LooksLikeSecret(t.APIKeyEnv):
			v.at(p+".api_key_env", pastedSecretHint("OPENAI_API_KEY"), "%s.api_key_env looks like a secret value (%s) pasted where a variable NAME belongs", p, MaskSecret(t.APIKeyEnv))
		case t.APIKeyEnv != "" && !envName.MatchString(t.APIKeyEnv):
			// Never echo the value: it may be the key itself.
			v.at(p+".api_key_env", "write the variable's name, e.g. OPENAI_API_KEY, and export the key in the environment", "%s.api_key_env must name an environment variable, not hold the key", p)
		}
		v.checkTargetEnv(t, p)
		v.checkTargetNumbers(t, p)
	}
}

// SpecDirVar is the variable assay sets for an exec target's program to the
// spec's directory; a target cannot name it in env:.
const SpecDirVar = "ASSAY_SPEC_DIR"

// checkTargetEnv checks env:, the variables an exec target's program is
// given: names only (an entry is never echoed, it may be a pasted value),
// each once, and only on exec targets.
func (v *validator) checkTargetEnv(t *Target, p string) {
	if len(t.Env) == 0 {
		return
	}
	if info, known := v.s.ProviderInfo(t.Provider); known && !info.Reads("env") {
		v.at(p+".env", "env applies to "+v.s.readers("env")+" only; hosted models read their key from api_key_env", "%s.env is set but the provider is %s", p, t.Provider)
		return
	}
	v.checkEnvNames(p+".env", t.Env)
}

// pastedSecretHint is the advice for a secret written where a variable
// name belongs: the example is a name of the right kind.
func pastedSecretHint(example string) string {
	return "write the variable's name, e.g. " + example + ", export the key in the environment, and rotate the key if this spec was shared or committed"
}

func (v *validator) checkTargetNumbers(t *Target, p string) {
	if t.Limits.Concurrency < 1 {
		v.at(p+".limits.concurrency", "the number of requests in flight, at least 1", "%s.limits.concurrency must be at least 1, got %d", p, t.Limits.Concurrency)
	} else if t.Limits.Concurrency > MaxConcurrency {
		v.at(p+".limits.concurrency", "", "%s.limits.concurrency must be between 1 and %d, got %d", p, MaxConcurrency, t.Limits.Concurrency)
	}
	if t.Limits.RPM < 0 {
		v.at(p+".limits.rpm", "use 0 or leave it out for no limit", "%s.limits.rpm must not be negative, got %d", p, t.Limits.RPM)
	} else if t.Limits.RPM > MaxRPM {
		v.at(p+".limits.rpm", "use 0 or leave it out for no limit", "%s.limits.rpm must be between 0 and %d, got %d", p, MaxRPM, t.Limits.RPM)
	}
	if t.Limits.TPM < 0 {
		v.at(p+".limits.tpm", "use 0 or leave it out for no limit", "%s.limits.tpm must not be negative, got %d", p, t.Limits.TPM)
	} else if t.Limits.TPM > MaxTPM {
		v.at(p+".limits.tpm", "use 0 or leave it out for no limit", "%s.limits.tpm must be between 0 and %d, got %d", p, MaxTPM, t.Limits.TPM)
	}
	if t.MaxOutputBytes < 0 {
		v.at(p+".max_output_bytes", "", "%s.max_output_bytes must not be negative", p)
	} else if t.MaxOutputBytes > MaxOutputBytesCap {
		v.at(p+".max_output_bytes", "", "%s.max_output_bytes must be between 0 and %d (%d MiB), got %d", p, MaxOutputBytesCap, MaxOutputBytesCap>>20, t.MaxOutputBytes)
	}
	if t.Price.InputPerMTok < 0 {
		v.at(p+".price.input_per_mtok", "", "%s.price.input_per_mtok must not be negative", p)
	}
	if t.Price.OutputPerMTok < 0 {
		v.at(p+".price.output_per_mtok", "", "%s.price.output_per_mtok must not be negative", p)
	}
	if t.Price.CachedPerMTok < 0 {
		v.at(p+".price.cached_per_mtok", "", "%s.price.cached_per_mtok must not be negative", p)
	}
	pr := t.Params
	if pr.Temperature != nil && *pr.Temperature < 0 {
		v.at(p+".params.temperature", "", "%s.params.temperature must not be negative", p)
	}
	if pr.TopP != nil && (*pr.TopP < 0 || *pr.TopP > 1) {
		v.at(p+".params.top_p", "", "%s.params.top_p must be between 0 and 1", p)
	}
	if pr.MaxTokens != nil && *pr.MaxTokens < 1 {
		v.at(p+".params.max_tokens", "", "%s.params.max_tokens must be at least 1, got %d", p, *pr.MaxTokens)
	}
}

func checkURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "must be an http:// or https:// URL"
	}
	if u.User != nil {
		// The resolved spec, base URL included, is stored with the run
		// (in a team's shared database too) and shown in its reports.
		return "must not carry a user or password (the URL is stored with the run and shown in its reports): send a key with api_key_env or api_key_file, other credentials with headers"
	}
	return ""
}

func (v *validator) checkReplay(t *Target, p string) {
	r := t.Replay
	if r == nil {
		v.at(p+".replay", "e.g. replay: {path: recorded.jsonl, join: question, output: answers.model_b}", "%s.replay is required for provider %s (path, join, output)", p, t.Provider)
		return
	}
	rp := p + ".replay"
	if r.Path == "" {
		v.at(rp+".path", "the JSONL file of recorded outputs, relative to the spec", "%s.path is required", rp)
	} else {
		st, err := os.Stat(v.s.Resolve(r.Path))
		switch {
		case err != nil:
			v.at(rp+".path", "paths are relative to the spec's directory", "%s.path: cannot read %s: %s", rp, shortQuote(r.Path), FileError(err))
		case st.IsDir():
			v.at(rp+".path", "", "%s.path: %s is a directory, not a file", rp, shortQuote(r.Path))
		}
	}
	if r.Join == "" {
		v.at(rp+".join", "the case field whose value finds the record, e.g. question", "%s.join is required", rp)
	}
	if r.Output == "" {
		v.at(rp+".output", "the dotted path of the output inside each record, e.g. answers.model_b", "%s.output is required", rp)
	}
}

func (v *validator) checkOutput() {
	o := &v.s.Output
	if o.Extract != "" {
		v.checkRegex("output.extract", o.Extract, `'A:\s*(.+)$'`)
	}
	allowed := "supported formats are: " + strings.Join(OutputFormats, ", ")
	switch {
	case o.Format == "":
		if o.Extract != "" {
			o.Format = "regex"
		} else {
			o.Format = "text"
		}
	case !contains(OutputFormats, o.Format):
		hint := allowed
		if near := nearest(o.Format, OutputFormats); near != "" {
			hint = fmt.Sprintf("did you mean %q? %s", near, allowed)
		}
		v.at("output.format", hint, "unknown output format %s", shortQuote(o.Format))
	case o.Format == "regex" && o.Extract == "":
		v.at("output.format", `add output.extract, e.g. 'A:\s*(.+)$'`, "output.format regex needs output.extract")
	case o.Format != "regex" && o.Extract != "":
		v.at("output.extract", "remove output.format or set it to regex", "output.extract applies only to output.format regex, but the format is %s", o.Format)
	}
	if o.Strict && o.Format != "json" {
		v.at("output.strict", "set output.format: json, or remove strict", "output.strict applies only to output.format json, but the format is %s", o.Format)
	}
}

func (v *validator) checkScorers() {
	names := map[string]int{}
	for i := range v.s.Scorers {
		sc := &v.s.Scorers[i]
		p := fmt.Sprintf("scorers[%d]", i)
		// A rubric may be a file:// reference, read like a prompt: the
		// judge grades by its text, and ScorersHash covers it.
		sc.Rubric = v.readRef(p+".rubric", FileForScorers, sc.Rubric, &sc.RubricFile)
		if sc.Name == "" {
			continue // the scorer package names it after its type
		}
		if first, dup := names[sc.Name]; dup {
			l, _, _ := v.s.Pos(fmt.Sprintf("scorers[%d].name", first))
			v.at(p+".name", "scorer names must be unique", "duplicate scorer name %q (first at line %d)", sc.Name, l)
			continue
		}
		names[sc.Name] = i
	}
}

// hash is "sha256:<hex>" over the spec bytes and the content of every
// file:// prompt and rubric, so the same files give the same hash on any
// machine.
func (v *validator) hash(src []byte) string {
	h := sha256.New()
	writeField(h, "spec", src)
	for _, f := range v.files {
		writeField(h, f[0], []byte(f[1]))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkGate checks the gate: section's rules against the spec's scorers
// and tags, so a bad rule stops `assay validate` and `assay run` before any
// model is called.
func (v *validator) checkGate() {
	g := v.s.Gate
	if g == nil {
		return
	}
	if v.written("gate.alpha") && !(g.Alpha > 0 && g.Alpha <= 0.5) {
		v.at("gate.alpha", "the usual value is 0.05", "gate.alpha must be above 0 and at most 0.5, got %v", g.Alpha)
	}
	scorers := []string{}
	for _, sc := range v.s.Scorers {
		name := sc.Name
		if name == "" {
			name = sc.Type
		}
		if name != "" {
			scorers = append(scorers, name)
		}
	}
	tags := []string{}
	for _, t := range v.s.Dataset.Tags {
		tags = append(tags, t.Key)
	}
	for i, r := range g.Rules {
		p := fmt.Sprintf("gate.rules[%d]", i)
		_, probs := r.Parse(scorers, tags)
		for _, pr := range probs {
			if pr.Field == "" {
				if !v.unknownKeyUnder(p) { // a misspelt limit is reported as such
					v.at(p, pr.Hint, "%s %s", p, pr.Msg)
				}
				continue
			}
			v.at(p+"."+pr.Field, pr.Hint, "%s.%s", p, pr.Msg)
		}
	}
}

// unknownKeyUnder reports whether a key written directly under the mapping
// at path is not a field of GateRule (the decoder reported it).
func (v *validator) unknownKeyUnder(path string) bool {
	known := map[string]bool{}
	for _, f := range structFields(reflect.TypeOf(GateRule{})) {
		known[f.name] = true
	}
	for p := range v.s.pos {
		rest, ok := strings.CutPrefix(p, path+".")
		if ok && !strings.ContainsAny(rest, ".[") && !known[rest] {
			return true
		}
	}
	return false
}

// gateRuleSyntax is the hint shown for a rule that sets no limit.
const gateRuleSyntax = "set max_drop (5% or 2pt) or min (80%) on a rate; max_rise or max on cost_per_case, latency_p95, ttft_p95 or loud_rate"

// Parse reads a rule into a GateCheck, checking it against the names of
// the scorers and the tag keys it may use (a nil list is not checked).
// Every problem is returned, each naming the field it is about.
func (r GateRule) Parse(scorers, tagKeys []string) (GateCheck, []GateRuleProblem) {
	var c GateCheck
	var probs []GateRuleProblem
	fail := func(field, hint, format string, args ...any) {
		probs = append(probs, GateRuleProblem{Field: field, Msg: fmt.Sprintf(format, args...), Hint: hint})
	}
	metric := strings.TrimSpace(r.Metric)
	metricOK := true
	switch metric {
	case "":
		fail("metric", "a scorer's name, primary, cost_per_case, latency_p95, ttft_p95 or loud_rate", "metric is required")
		metricOK = false
	case GateCostPerCase, GateLatencyP95, GateTTFTP95, GateLoudRate:
		c.Kind = metric
	case GatePrimary:
		c.Kind, c.Scorer = "rate", GatePrimary
	default:
		c.Kind, c.Scorer = "rate", metric
		if scorers != nil && !contains(scorers, metric) {
			all := append(append([]string{}, scorers...), GateMetrics...)
			hint := "metrics are a scorer's name (" + strings.Join(scorers, ", ") + "), primary, cost_per_case, latency_p95, ttft_p95 or loud_rate"
			if near := nearest(metric, all); near != "" {
				hint = fmt.Sprintf("did you mean %q? %s", near, hint)
			}
			fail("metric", hint, "metric %s is neither a scorer of the spec nor a gate metric", shortQuote(metric))
			metricOK = false
		}
	}

	switch {
	case len(r.Slice) > 1:
		fail("slice", "write one tag and its value, e.g. slice: {tier: hard}", "slice names %d tags; a slice is one tag and its value", len(r.Slice))
	case len(r.Slice) == 1:
		for k, val := range r.Slice {
			c.SliceKey, c.SliceValue = k, val
			switch {
			case tagKeys != nil && len(tagKeys) == 0:
				fail("slice."+k, "add the tag under dataset.tags", "slice tag %s is not a tag of the dataset: the spec defines no tags", shortQuote(k))
			case tagKeys != nil && !contains(tagKeys, k):
				hint := "tags are: " + strings.Join(tagKeys, ", ")
				if near := nearest(k, tagKeys); near != "" {
					hint = fmt.Sprintf("did you mean %q? %s", near, hint)
				}
				fail("slice."+k, hint, "slice tag %s is not a tag of the dataset", shortQuote(k))
			case val == "":
				fail("slice."+k, "write the tag value whose cases the rule is about", "slice tag %s has no value", shortQuote(k))
			}
		}
	}

	if r.MaxDrop == "" && r.MaxRise == "" && r.Min == "" && r.Max == "" {
		fail("", gateRuleSyntax, "sets no limit")
		return c, probs
	}
	if !metricOK {
		return c, probs
	}
	rate := c.Kind == "rate"
	what := "the rate of " + shortQuote(c.Scorer)
	if !rate {
		what = c.Kind
	}
	if r.MaxDrop != "" {
		if !rate {
			fail("max_drop", "use max_rise: a worsening of "+c.Kind+" is a rise", "max_drop: %s is lower-is-better and cannot get worse by dropping", c.Kind)
		} else if l, ok := gateDrop(r.MaxDrop, fail); ok {
			c.Worse = &l
		}
	}
	if r.MaxRise != "" {
		if rate {
			fail("max_rise", "use max_drop: a worsening of a rate is a drop", "max_rise: %s is higher-is-better and cannot get worse by rising", what)
		} else if l, ok := gateRise(c.Kind, r.MaxRise, fail); ok {
			c.Worse = &l
		}
	}
	if r.Min != "" {
		if !rate {
			fail("min", "use max: "+c.Kind+" takes a ceiling", "min: %s is lower-is-better; a floor would pass anything", c.Kind)
		} else if b, ok := gateRateBound("min", r.Min, fail); ok {
			c.Bound = &b
		}
	}
	if r.Max != "" {
		if rate {
			fail("max", "use min: a rate takes a floor", "max: %s is higher-is-better; a ceiling would fail improvements", what)
		} else if b, ok := gateCeiling(c.Kind, r.Max, fail); ok {
			c.Bound = &b
		}
	}
	return c, probs
}

// String writes the rule in the --rule syntax: metric[tag=value] then its
// limits, e.g. "correct[tier=hard] max_drop=5% min=80%".
func (r GateRule) String() string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(r.Metric))
	for _, k := range sortedKeys(r.Slice) {
		b.WriteString("[" + k + "=" + r.Slice[k] + "]")
	}
	for _, kv := range [][2]string{{"max_drop", r.MaxDrop}, {"max_rise", r.MaxRise}, {"min", r.Min}, {"max", r.Max}} {
		if kv[1] != "" {
			b.WriteString(" " + kv[0] + "=" + strings.TrimSpace(kv[1]))
		}
	}
	return b.String()
}

var gateNumber = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// gateValue splits a limit as written into a number and its unit: "%",
// "pt" (percentage points), "$" (USD), "ms" (a duration, converted to
// milliseconds) or "" (a bare number). ok is false when it is none of them.
func gateValue(s string) (x float64, unit string, ok bool) {
	s = strings.TrimSpace(s)
	num := s
	switch {
	case strings.HasPrefix(s, "$"):
		num, unit = strings.TrimSpace(s[1:]), "$"
	case strings.HasSuffix(s, "%"):
		num, unit = strings.TrimSpace(s[:len(s)-1]), "%"
	default:
		lower := strings.ToLower(s)
		for _, suf := range []string{"points", "point", "pts", "pt"} {
			if strings.HasSuffix(lower, suf) {
				num, unit = strings.TrimSpace(s[:len(s)-len(suf)]), "pt"
				break
			}
		}
	}
	if gateNumber.MatchString(num) {
		f, err := strconv.ParseFloat(num, 64)
		if err != nil || math.IsInf(f, 0) {
			return 0, "", false
		}
		return f, unit, true
	}
	if unit != "" {
		return 0, "", false
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, "", false
	}
	return float64(d) / float64(time.Millisecond), "ms", true
}

type gateFail func(field, hint, format string, args ...any)

// gateDrop reads max_drop of a rate: "5%" (relative) or "2pt".
func gateDrop(s string, fail gateFail) (GateLimit, bool) {
	const hint = "write 5% (relative to the baseline's rate) or 2pt (percentage points)"
	x, unit, ok := gateValue(s)
	switch {
	case !ok || (unit != "%" && unit != "pt"):
		if ok && unit == "" {
			fail("max_drop", hint, "max_drop %s needs a unit", shortQuote(s))
		} else {
			fail("max_drop", hint, "max_drop %s is not a relative drop or a number of points", shortQuote(s))
		}
		return GateLimit{}, false
	case x < 0:
		fail("max_drop", hint, "max_drop %s must not be negative", shortQuote(s))
		return GateLimit{}, false
	case x > 100:
		fail("max_drop", hint, "max_drop %s is out of range: a rate cannot drop by more than 100%s", shortQuote(s), map[string]string{"%": "%", "pt": " points"}[unit])
		return GateLimit{}, false
	}
	return GateLimit{Amount: x / 100, Relative: unit == "%"}, true
}

// gateRise reads max_rise of cost, latency or the loud rate.
func gateRise(kind, s string, fail gateFail) (GateLimit, bool) {
	hint := map[string]string{
		GateCostPerCase: "write 10% (relative to the baseline) or an amount in USD, e.g. 0.0005",
		GateLatencyP95:  "write 10% (relative to the baseline) or a duration, e.g. 200ms (a bare number is milliseconds)",
		GateTTFTP95:     "write 10% (relative to the baseline) or a duration, e.g. 200ms (a bare number is milliseconds)",
		GateLoudRate:    "write 10% (relative to the baseline's loud rate) or 2pt (percentage points)",
	}[kind]
	x, unit, ok := gateValue(s)
	if ok && x < 0 {
		fail("max_rise", hint, "max_rise %s must not be negative", shortQuote(s))
		return GateLimit{}, false
	}
	if ok && unit == "%" {
		return GateLimit{Amount: x / 100, Relative: true}, true
	}
	switch kind {
	case GateCostPerCase:
		if ok && (unit == "" || unit == "$") {
			return GateLimit{Amount: x}, true
		}
	case GateLatencyP95, GateTTFTP95:
		if ok && (unit == "" || unit == "ms") {
			return GateLimit{Amount: x}, true
		}
	case GateLoudRate:
		if ok && unit == "pt" {
			if x > 100 {
				fail("max_rise", hint, "max_rise %s is out of range: a rate cannot rise by more than 100 points", shortQuote(s))
				return GateLimit{}, false
			}
			return GateLimit{Amount: x / 100}, true
		}
		if ok && unit == "" {
			fail("max_rise", hint, "max_rise %s needs a unit", shortQuote(s))
			return GateLimit{}, false
		}
	}
	fail("max_rise", hint, "max_rise %s is not a valid rise of %s", shortQuote(s), kind)
	return GateLimit{}, false
}

// gateRateBound reads a rate's floor (or the loud rate's ceiling): "80%"
// or a fraction in [0, 1].
func gateRateBound(field, s string, fail gateFail) (float64, bool) {
	const hint = "write a rate as 80% or 0.8"
	x, unit, ok := gateValue(s)
	switch {
	case ok && unit == "%" && x >= 0 && x <= 100:
		return x / 100, true
	case ok && unit == "" && x >= 0 && x <= 1:
		return x, true
	case ok && (unit == "%" || unit == ""):
		fail(field, hint, "%s %s is out of range: a rate is between 0 and 1 (0%% and 100%%)", field, shortQuote(s))
	default:
		fail(field, hint, "%s %s is not a rate", field, shortQuote(s))
	}
	return 0, false
}

// gateCeiling reads max of cost, latency or the loud rate.
func gateCeiling(kind, s string, fail gateFail) (float64, bool) {
	if kind == GateLoudRate {
		return gateRateBound("max", s, fail)
	}
	x, unit, ok := gateValue(s)
	if ok && x < 0 {
		fail("max", "", "max %s must not be negative", shortQuote(s))
		return 0, false
	}
	switch kind {
	case GateCostPerCase:
		if ok && (unit == "" || unit == "$") {
			return x, true
		}
		fail("max", "write the most a case may cost in USD, e.g. 0.002", "max %s is not an amount in USD", shortQuote(s))
	case GateLatencyP95, GateTTFTP95:
		if ok && (unit == "" || unit == "ms") {
			return x, true
		}
		fail("max", "write a duration, e.g. 2s or 800ms (a bare number is milliseconds)", "max %s is not a duration", shortQuote(s))
	}
	return 0, false
}
