package runview

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// BaselineVersion is the version of the baseline file format this assay
// writes and reads.
const BaselineVersion = 1

// MaxBaselineBytes bounds the size of a baseline file read.
const MaxBaselineBytes = 512 << 20

// maxEpochs bounds a baseline's epochs (a sanity check on the file).
const maxEpochs = 10000

// The baseline file is one JSON object, columnar so that it stays small
// (about 160 KB for 1,000 cases × 2 targets, written a list entry a line by
// WriteBaseline; shown here compact):
//
//	{"assay_baseline": 1,
//	 "run": {"id": …, "spec_hash": …, "dataset_hash": …, "file_hash": …, …},
//	 "scorers": ["correct", …], "primary": "correct", "epochs": 1,
//	 "cases": {"id": ["c1", …], "tags": {"tier": ["hard", null, …]}},
//	 "targets": [{"name": "gpt", "temperature": 0, "config_hash": "5d41402abc4b2a76",
//	              "fingerprints": [{"model": …, "count": 1000}],
//	              "pass": {"correct": "10-1…"}, "shape": "psl-…",
//	              "kinds": ["wrong", …], "kind": [0, -1, …],
//	              "cost_usd": [0.00012, null, …], "latency_ms": [812.5, …],
//	              "output_hash": ["9f86d081884c7d65", "", …],
//	              "errored": [17, 240]}]}
//
// Every per-result column has cases × epochs entries, case-major (case i,
// epoch e at i*epochs + e − 1). pass holds one character per result: 1
// passed, 0 failed, - not scored; shape the primary scorer's failure
// shape: p pass, l loud, s silent, - no result or no primary score; kind
// an index into kinds (-1 for none). Missing numbers are null. No raw
// output, prompt, error text or secret is written: outputs only as hashes.
//
// Three fields were added to format 1 and are optional, so that files
// written before them still read: a target's temperature (its spec's
// params.temperature; null when the spec left it unset, absent when not
// recorded), its config_hash (ConfigHash of its entry in the resolved
// spec), and errored, the indexes of the results whose call failed, in
// increasing order (absent when not recorded). run.gate and run.gate_hash
// (the gate: section of the run's spec and its GateHash, checked against
// each other on reading) were added the same way: absent in older files.
//
// run.dataset_hash is the dataset's content hash (its cases as parsed) and
// run.file_hash the hash of the file's bytes. A file written before
// content hashes has no file_hash, and its dataset_hash is the byte hash:
// it is still read, and compared by bytes (dataset.CompareVersions).
type fileBaseline struct {
	Version json.RawMessage `json:"assay_baseline"`
	Run     *RunInfo        `json:"run"`
	Scorers []string        `json:"scorers"`
	Primary string          `json:"primary"`
	Epochs  int             `json:"epochs"`
	Cases   fileCases       `json:"cases"`
	Targets []fileTarget    `json:"targets"`
}

type fileCases struct {
	ID   []string             `json:"id"`
	Tags map[string][]*string `json:"tags,omitempty"`
}

type fileTarget struct {
	Name string `json:"name"`
	// Temperature is a number, null (unset in the spec) or absent (not
	// recorded): the raw JSON keeps null apart from absent.
	Temperature  json.RawMessage   `json:"temperature,omitempty"`
	ConfigHash   string            `json:"config_hash,omitempty"`
	Fingerprints []Fingerprint     `json:"fingerprints"`
	Pass         map[string]string `json:"pass"`
	Shape        string            `json:"shape"`
	Kinds        []string          `json:"kinds"`
	Kind         []int             `json:"kind"`
	CostUSD      numbers           `json:"cost_usd"`
	LatencyMS    numbers           `json:"latency_ms"`
	// FirstTokenMS is written when some call streamed (null for a call
	// that did not).
	FirstTokenMS numbers  `json:"first_token_ms,omitzero"`
	OutputHash   []string `json:"output_hash"`
	Errored      []int    `json:"errored,omitzero"`
}

// numbers is a column of non-negative numbers with NaN written as null,
// each rounded to digits significant digits.
type numbers struct {
	xs     []float64
	digits int
}

func (n numbers) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, x := range n.xs {
		if i > 0 {
			b.WriteByte(',')
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			b.WriteString("null")
			continue
		}
		b.WriteString(strconv.FormatFloat(quantize(x, n.digits), 'g', -1, 64))
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}

func (n *numbers) UnmarshalJSON(b []byte) error {
	var ps []*float64
	if err := json.Unmarshal(b, &ps); err != nil {
		return err
	}
	n.xs = make([]float64, len(ps))
	for i, p := range ps {
		n.xs[i] = math.NaN()
		if p != nil {
			n.xs[i] = *p
		}
	}
	return nil
}

// WriteBaseline writes the snapshot as a baseline file, stable and
// line-oriented so that its git diff reads: cases sorted by ID, targets by
// name, every list entry on a line of its own (see sortedForFile).
func WriteBaseline(w io.Writer, s *View) error {
	s = s.sortedForFile()
	f := fileBaseline{Version: json.RawMessage(strconv.Itoa(BaselineVersion)), Run: &s.Run, Scorers: s.Scorers, Primary: s.Primary, Epochs: s.Epochs}
	f.Run.Epochs = s.Epochs
	f.Cases.ID = make([]string, len(s.Cases))
	keys := s.TagKeys()
	if len(keys) > 0 {
		f.Cases.Tags = map[string][]*string{}
		for _, k := range keys {
			col := s.tags[k]
			vals := make([]*string, len(s.Cases))
			for i, v := range col.idx[:min(len(col.idx), len(s.Cases))] {
				if v != 0 {
					vals[i] = &col.values[v-1]
				}
			}
			f.Cases.Tags[k] = vals
		}
	}
	for i, c := range s.Cases {
		f.Cases.ID[i] = c.ID
	}
	for _, t := range s.Targets {
		ft := fileTarget{Name: t.Name, ConfigHash: t.ConfigHash, Fingerprints: t.Fingerprints, Pass: map[string]string{},
			Shape: string(t.Shape), Kinds: []string{}, Kind: make([]int, len(t.Kind)),
			CostUSD:    numbers{xs: t.CostUSD, digits: costDigits},
			LatencyMS:  numbers{xs: t.LatencyMS, digits: latencyDigits},
			OutputHash: hashStrings(t)}
		if slices.ContainsFunc(t.FirstTokenMS, func(x float64) bool { return !math.IsNaN(x) }) {
			ft.FirstTokenMS = numbers{xs: t.FirstTokenMS, digits: latencyDigits}
		}
		if ft.Fingerprints == nil {
			ft.Fingerprints = []Fingerprint{}
		}
		if t.TemperatureKnown {
			ft.Temperature = json.RawMessage("null")
			if t.Temperature != nil {
				ft.Temperature = strconv.AppendFloat(nil, *t.Temperature, 'g', -1, 64)
			}
		}
		if t.Errored != nil {
			ft.Errored = []int{}
			for j, e := range t.Errored {
				if e {
					ft.Errored = append(ft.Errored, j)
				}
			}
		}
		for sc, p := range t.Pass {
			b := make([]byte, len(p))
			for j, x := range p {
				b[j] = "-01"[x+1]
			}
			ft.Pass[sc] = string(b)
		}
		// The file's kinds are listed in the order results first use
		// them, which need not be the order of t.Kinds.
		fileKind := make([]int, len(t.Kinds)+1)
		for i := range fileKind {
			fileKind[i] = -2 // not yet used
		}
		fileKind[0] = -1
		for j, k := range t.Kind {
			if fileKind[k] == -2 {
				fileKind[k] = len(ft.Kinds)
				ft.Kinds = append(ft.Kinds, t.Kinds[k-1])
			}
			ft.Kind[j] = fileKind[k]
		}
		f.Targets = append(f.Targets, ft)
	}
	if f.Targets == nil {
		f.Targets = []fileTarget{}
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(f); err != nil {
		return err
	}
	return bw.Flush()
}

// hashStrings is a target's output hashes as the file holds them: 16 hex
// digits each, "" where there is no result.
func hashStrings(t *Target) []string {
	out := make([]string, len(t.OutputHash))
	var x [8]byte
	for j, h := range t.OutputHash {
		if t.Has(j) {
			binary.BigEndian.PutUint64(x[:], h)
			out[j] = hex.EncodeToString(x[:])
		}
	}
	return out
}

// BaselineError is a baseline file that cannot be read: it names the file,
// where in it (line:col for JSON syntax, a JSON path for content), and
// what is wrong.
type BaselineError struct {
	File string
	// Line and Col locate a syntax or type error (0 when not known).
	Line, Col int
	// Path is the JSON path of the value at fault ("" for the file).
	Path string
	Msg  string
}

func (e *BaselineError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// LoadBaseline reads the baseline file at path.
func LoadBaseline(path string) (*View, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadBaseline(path, f)
}

// ReadBaseline reads a baseline file from r; name is the file's name in
// errors. The file is checked strictly: an unknown field, a column of the
// wrong length, a character or number out of range is an error naming it.
func ReadBaseline(name string, r io.Reader) (*View, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxBaselineBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	fail := func(path, format string, args ...any) error {
		return &BaselineError{File: name, Path: path, Msg: fmt.Sprintf(format, args...)}
	}
	if len(data) > MaxBaselineBytes {
		return nil, fail("", "the file is larger than %d MiB", MaxBaselineBytes>>20)
	}
	// One strict pass decodes a good file. Only a file it refuses, or one
	// with data after the object, is read again for its version alone:
	// a file from a newer assay gets a clear message rather than a
	// complaint about a field this version does not know, and a file
	// that is not one JSON value is located by the same syntax error
	// whatever its fields.
	var f fileBaseline
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	strictErr := dec.Decode(&f)
	version := f.Version
	if strictErr != nil || !jsonSpace(data[dec.InputOffset():]) {
		var head struct {
			Version json.RawMessage `json:"assay_baseline"`
		}
		if err := json.Unmarshal(data, &head); err != nil {
			return nil, jsonError(name, data, err)
		}
		version = head.Version
	}
	switch v := string(version); {
	case v == "":
		return nil, fail("", `not an assay baseline file (it has no "assay_baseline" version field); write one with: assay baseline export RUN -o FILE`)
	case v != strconv.Itoa(BaselineVersion):
		n, err := strconv.Atoi(v)
		if err == nil && n > BaselineVersion {
			return nil, fail("assay_baseline", "the file is format %d, written by a newer assay; this assay reads format %d: upgrade assay, or export the baseline again with this one", n, BaselineVersion)
		}
		if len(v) > 40 {
			v = v[:40] + "…"
		}
		return nil, fail("assay_baseline", "unknown format %s; this assay reads format %d", v, BaselineVersion)
	}
	if strictErr != nil {
		return nil, jsonError(name, data, strictErr)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fail("", "unexpected data after the baseline object")
	}
	return f.snapshot(name)
}

// jsonSpace reports whether b is only JSON whitespace.
func jsonSpace(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

// jsonError locates a JSON decoding error in the file.
func jsonError(name string, data []byte, err error) error {
	e := &BaselineError{File: name, Msg: err.Error()}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		e.Line, e.Col = lineCol(data, se.Offset)
		e.Msg = "invalid JSON: " + se.Error()
	case errors.As(err, &te):
		e.Line, e.Col = lineCol(data, te.Offset)
		e.Path = te.Field
		e.Msg = fmt.Sprintf("want %s, got a JSON %s", typeName(te.Type.String()), te.Value)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		e.Msg = "invalid JSON: the file ends before the baseline object is complete"
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		e.Msg = strings.TrimPrefix(err.Error(), "json: ") + " (the baseline file format has no such field: was the file edited?)"
	}
	return e
}

func typeName(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"), strings.HasPrefix(t, "runview.numbers"):
		return "a list"
	case strings.HasPrefix(t, "map["), strings.HasPrefix(t, "runview."), strings.HasPrefix(t, "struct"):
		return "an object"
	case t == "string", t == "*string":
		return "a string"
	case strings.HasPrefix(t, "int"), t == "*int":
		return "a whole number"
	case strings.HasPrefix(t, "float"), t == "*float64":
		return "a number"
	case t == "bool":
		return "true or false"
	}
	return t
}

// lineCol turns a byte offset (just past the fault, as encoding/json
// reports it) into a 1-based line and column.
func lineCol(data []byte, off int64) (int, int) {
	off = max(0, min(off, int64(len(data))))
	if off > 0 {
		off-- // point at the offending byte
	}
	line, col := 1, 1
	for _, c := range data[:off] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

// clip quotes a value from the file for a message, shortened.
func clip(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strconv.Quote(s)
}

// snapshot checks the decoded file and builds the snapshot.
func (f *fileBaseline) snapshot(name string) (*View, error) {
	var errs []error
	fail := func(path, format string, args ...any) {
		if len(errs) < 20 {
			errs = append(errs, &BaselineError{File: name, Path: path, Msg: fmt.Sprintf(format, args...)})
		}
	}
	if f.Run == nil {
		fail("run", "missing: the run the baseline was taken of")
		return nil, errors.Join(errs...)
	}
	if strings.TrimSpace(f.Run.ID) == "" {
		fail("run.id", "missing")
	}
	if f.Epochs < 1 || f.Epochs > maxEpochs {
		fail("epochs", "must be between 1 and %d, got %d", maxEpochs, f.Epochs)
		return nil, errors.Join(errs...)
	}
	if f.Run.Epochs != f.Epochs {
		fail("run.epochs", "is %d but epochs is %d", f.Run.Epochs, f.Epochs)
	}
	if len(f.Scorers) == 0 {
		fail("scorers", "must name at least one scorer")
	}
	checkBaselineGate(f.Run, f.Scorers, fail)
	for i, sc := range f.Scorers {
		if sc == "" {
			fail(fmt.Sprintf("scorers[%d]", i), "is empty")
		} else if slices.Index(f.Scorers, sc) != i {
			fail(fmt.Sprintf("scorers[%d]", i), "%s is listed twice", clip(sc))
		}
	}
	if !slices.Contains(f.Scorers, f.Primary) {
		fail("primary", "%s is not one of the scorers", clip(f.Primary))
	}
	nc := len(f.Cases.ID)
	if nc == 0 {
		fail("cases.id", "must list at least one case")
	}
	seen := make(map[string]int, nc)
	for i, id := range f.Cases.ID {
		if id == "" {
			fail(fmt.Sprintf("cases.id[%d]", i), "is empty")
		} else if j, dup := seen[id]; dup {
			fail(fmt.Sprintf("cases.id[%d]", i), "%s is also case %d: case IDs are unique", clip(id), j)
		}
		seen[id] = i
	}
	for k, vals := range f.Cases.Tags {
		if k == "" {
			fail("cases.tags", "a tag key is empty")
		}
		if len(vals) != nc {
			fail("cases.tags."+k, "has %s for %s (null where a case has no value)", plural(len(vals), "value"), plural(nc, "case"))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	n := nc * f.Epochs
	s := &View{Run: *f.Run, Source: name, Scorers: f.Scorers, Primary: f.Primary, Epochs: f.Epochs,
		Cases: make([]Case, nc)}
	for i, id := range f.Cases.ID {
		s.Cases[i].ID = id
	}
	for k, vals := range f.Cases.Tags {
		for i, v := range vals {
			if v != nil {
				s.SetTag(i, k, *v)
			}
		}
	}
	names := map[string]bool{}
	for ti, ft := range f.Targets {
		p := fmt.Sprintf("targets[%d]", ti)
		if ft.Name == "" {
			fail(p+".name", "is empty")
		} else if names[ft.Name] {
			fail(p+".name", "target %s is listed twice", clip(ft.Name))
		}
		names[ft.Name] = true
		length := func(field string, got int) bool {
			if got != n {
				fail(p+"."+field, "has %d entries, want %d (%s × %s)", got, n, plural(nc, "case"), plural(f.Epochs, "epoch"))
				return false
			}
			return true
		}
		t := &Target{Name: ft.Name, Fingerprints: ft.Fingerprints, Pass: map[string][]int8{}}
		total := 0
		for i, fp := range ft.Fingerprints {
			if fp.Count < 1 {
				fail(fmt.Sprintf("%s.fingerprints[%d].count", p, i), "must be at least 1, got %d", fp.Count)
			}
			total += max(fp.Count, 0)
		}
		if total > n {
			fail(p+".fingerprints", "count %d results, more than the %d the target can have", total, n)
		}
		for sc, col := range ft.Pass {
			if !slices.Contains(f.Scorers, sc) {
				fail(p+".pass", "%s is not one of the scorers", clip(sc))
				continue
			}
			if !length("pass."+sc, len(col)) {
				continue
			}
			v := make([]int8, n)
		chars:
			for j := range n {
				switch col[j] {
				case '1':
					v[j] = 1
				case '0':
					v[j] = 0
				case '-':
					v[j] = -1
				default:
					fail(p+".pass."+sc, "character %d is %s; each result is 1 (passed), 0 (failed) or - (not scored)", j, clip(col[j:j+1]))
					break chars
				}
			}
			t.Pass[sc] = v
		}
		for _, sc := range f.Scorers {
			if _, ok := ft.Pass[sc]; !ok {
				fail(p+".pass", "has no column for scorer %s", clip(sc))
			}
		}
		if length("shape", len(ft.Shape)) {
			t.Shape = []byte(ft.Shape)
			for j, c := range t.Shape {
				if c != ShapePass && c != ShapeLoud && c != ShapeSilent && c != ShapeNone {
					fail(p+".shape", "character %d is %s; each result is p (pass), l (loud), s (silent) or - (none)", j, clip(ft.Shape[j:j+1]))
					break
				}
			}
		}
		for i, k := range ft.Kinds {
			if k == "" || slices.Index(ft.Kinds, k) != i {
				fail(fmt.Sprintf("%s.kinds[%d]", p, i), "kinds are distinct and not empty")
			}
		}
		if length("kind", len(ft.Kind)) {
			t.Kind, t.Kinds = make([]int32, n), ft.Kinds
			for j, k := range ft.Kind {
				if k < -1 || k >= len(ft.Kinds) {
					fail(fmt.Sprintf("%s.kind[%d]", p, j), "%d is not an index into kinds (-1 for none)", k)
					break
				}
				t.Kind[j] = int32(k + 1)
			}
		}
		col := func(field string, xs []float64, digits int) []float64 {
			if !length(field, len(xs)) {
				return nil
			}
			for j, x := range xs {
				if x < 0 || math.IsInf(x, 0) {
					fail(fmt.Sprintf("%s.%s[%d]", p, field, j), "must be a number of at least 0 or null, got %v", x)
					return nil
				}
				xs[j] = quantize(x, digits)
			}
			return xs
		}
		t.CostUSD = col("cost_usd", ft.CostUSD.xs, costDigits)
		t.LatencyMS = col("latency_ms", ft.LatencyMS.xs, latencyDigits)
		if ft.FirstTokenMS.xs != nil {
			t.FirstTokenMS = col("first_token_ms", ft.FirstTokenMS.xs, latencyDigits)
		}
		var hashed []bool // which results have an output hash
		if length("output_hash", len(ft.OutputHash)) {
			t.OutputHash, hashed = make([]uint64, n), make([]bool, n)
			bad := false
			for j, h := range ft.OutputHash {
				hashed[j] = h != ""
				if h == "" || bad {
					continue
				}
				if !isHash(h) {
					fail(fmt.Sprintf("%s.output_hash[%d]", p, j), "is not 16 lowercase hex digits (or empty for no result)")
					bad = true
					continue
				}
				t.OutputHash[j], _ = strconv.ParseUint(h, 16, 64)
			}
		}
		if len(ft.Temperature) > 0 {
			t.TemperatureKnown = true
			if string(ft.Temperature) != "null" {
				const want = "must be a number of at least 0, or null when the spec left it unset"
				var x float64
				switch err := json.Unmarshal(ft.Temperature, &x); {
				case err != nil:
					fail(p+".temperature", "%s; got %s", want, jsonKind(ft.Temperature))
				case x < 0:
					fail(p+".temperature", "%s; got %s", want, strconv.FormatFloat(x, 'g', -1, 64))
				default:
					t.Temperature = &x
				}
			}
		}
		if ft.ConfigHash != "" {
			t.ConfigHash = ft.ConfigHash
			if !isHash(ft.ConfigHash) {
				fail(p+".config_hash", "is not 16 lowercase hex digits")
			}
		}
		if ft.Errored != nil {
			t.Errored = make([]bool, n)
			for i, j := range ft.Errored {
				switch {
				case j < 0 || j >= n:
					fail(fmt.Sprintf("%s.errored[%d]", p, i), "%d is not a result index (0 to %d)", j, n-1)
				case i > 0 && j <= ft.Errored[i-1]:
					fail(fmt.Sprintf("%s.errored[%d]", p, i), "%d does not follow %d: each failed result is listed once, in increasing order", j, ft.Errored[i-1])
				case t.LatencyMS != nil && math.IsNaN(t.LatencyMS[j]):
					fail(fmt.Sprintf("%s.errored[%d]", p, i), "result %d does not exist (its latency_ms is null): only a result that exists can be a failed call", j)
				default:
					t.Errored[j] = true
					continue
				}
				break
			}
		}
		if t.LatencyMS != nil && t.CostUSD != nil && hashed != nil && t.Shape != nil {
			for j := range n {
				has := !math.IsNaN(t.LatencyMS[j])
				if has != !math.IsNaN(t.CostUSD[j]) || has != hashed[j] || (!has && t.Shape[j] != ShapeNone) {
					fail(p, "result %d is present in some columns and missing in others (latency_ms, cost_usd, output_hash and shape agree on which results exist)", j)
					break
				}
				if !has && t.FirstTokenMS != nil && !math.IsNaN(t.FirstTokenMS[j]) {
					fail(fmt.Sprintf("%s.first_token_ms[%d]", p, j), "result %d does not exist (its latency_ms is null): only a result that exists has a time to first token", j)
					break
				}
			}
		}
		s.Targets = append(s.Targets, t)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return s, nil
}

// jsonKind names the kind of a JSON value that is not the number wanted.
func jsonKind(raw []byte) string {
	switch raw[0] {
	case '"':
		return "a JSON string"
	case '{':
		return "a JSON object"
	case '[':
		return "a JSON list"
	case 't', 'f':
		return "true or false"
	}
	return "a number out of range"
}

func isHash(h string) bool {
	if len(h) != 16 {
		return false
	}
	for _, c := range h {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
