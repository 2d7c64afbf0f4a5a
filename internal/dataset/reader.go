package dataset

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"math"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/assay-eval/assay/internal/spec"
)

// Reader streams the cases of a dataset one at a time; memory does not grow
// with the number of cases (beyond a small fingerprint per ID, kept to catch
// duplicates).
//
// JSONL: one JSON object per line. Blank (whitespace-only) lines, including
// a trailing one, are skipped silently: they are not cases and not
// problems, but line numbers count them, so `id: line` IDs are the
// physical line numbers and stay stable when blank lines are added at the
// end. A UTF-8 byte-order mark and CRLF line ends are accepted.
//
// CSV: the first row names the fields (an empty or repeated name is a
// problem); quoted fields may span lines; a case's Line is where its record
// starts; `id: line` IDs are row numbers, header excluded. Every value is a
// string.
//
// Values: IDs, tags and expected_extract read a value as text (Stringify):
// numbers as written, so the JSON id 12345678901234567890 keeps its digits.
// In Vars and Expected, JSON numbers are json.Number, their written form,
// so a scorer compares 9007199254740993 exactly (a float64 would round it)
// and a prompt shows 1.50 as the file wrote it. A CEL tag expression sees
// them as int, uint or double.
//
// A JSONL line whose object repeats a key ({"total": 1, "total": 2}) is a
// problem at the repeated key's FILE:LINE:COL: a reader that kept the last
// value would change the case without a word.
//
// A Reader assumes a spec that spec.Load accepted: settings spec.Load rejects
// (an expected_extract that does not compile, say) are ignored here rather
// than reported twice.
type Reader struct {
	sp      *spec.Spec
	file    string
	f       *os.File
	h       hash.Hash // the file's bytes
	ch      hash.Hash // the cases, canonically encoded (canonical.go)
	enc     []byte    // scratch for one case's encoding
	raw     io.Reader // the file, through the hash
	src     source
	header  []string
	tags    []tagger
	extract *regexp.Regexp
	ids     map[[16]byte]int
	pending []spec.Problem
	eof     bool
	stats   *fieldStats // set by Scan
	// badUTF8 holds the first rows (Scan only) with bytes that are not
	// UTF-8; badRows counts them all.
	badUTF8 []spec.Problem
	badRows int
	// tagFails (Scan only) gathers tag expressions' evaluation errors, to
	// report each tag's once rather than once per case.
	tagFails *tagFailures
}

// Open opens the dataset sp names. Problems that stop reading altogether —
// a missing file, a CSV file without a header, a tag expression that does
// not compile — come back as spec.Problems.
func Open(sp *spec.Spec) (*Reader, error) { return openChecked(sp, true) }

// openChecked is Open; hashing says whether the reader hashes what it
// reads (Hash, FileHash): Each, which streams the cases once per target of
// a run, does not.
func openChecked(sp *spec.Spec, hashing bool) (*Reader, error) {
	r, probs, err := open(sp, hashing)
	if err != nil {
		return nil, err
	}
	if len(probs) > 0 {
		if r != nil {
			r.Close()
		}
		return nil, probs
	}
	return r, nil
}

// open returns the reader (nil when the file cannot be read at all) and the
// problems found opening it.
func open(sp *spec.Spec, hashing bool) (*Reader, spec.Problems, error) {
	ds := &sp.Dataset
	if ds.Path == "" {
		return nil, spec.Problems{sp.Problemf("dataset.path", "the JSONL or CSV file of cases, relative to the spec", "dataset.path is required")}, nil
	}
	path := sp.Resolve(ds.Path)
	f, err := os.Open(path)
	if err == nil {
		if st, serr := f.Stat(); serr == nil && st.IsDir() {
			f.Close()
			err = fmt.Errorf("is a directory: %w", fs.ErrInvalid)
		}
	}
	if err != nil {
		return nil, spec.Problems{sp.Problemf("dataset.path", "paths are relative to the spec's directory", "dataset.path: cannot read %q: %s", ds.Path, spec.FileError(err))}, nil
	}
	r, probs, err := newReaderHashing(sp, path, f, hashing)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	r.f = f
	return r, probs, nil
}

// newReader reads the dataset from in, naming file in problems.
func newReader(sp *spec.Spec, file string, in io.Reader) (*Reader, spec.Problems, error) {
	return newReaderHashing(sp, file, in, true)
}

// newReaderHashing is newReader; without hashing the reader neither hashes
// the file's bytes nor encodes each case for the content hash (Hash and
// FileHash are then "").
func newReaderHashing(sp *spec.Spec, file string, in io.Reader, hashing bool) (*Reader, spec.Problems, error) {
	ds := &sp.Dataset
	r := &Reader{sp: sp, file: file, ids: map[[16]byte]int{}, raw: in}
	if hashing {
		r.h, r.ch = sha256.New(), sha256.New()
		r.ch.Write([]byte(casesHashHeader))
		r.raw = io.TeeReader(in, r.h)
	}
	var probs spec.Problems
	switch ds.Format {
	case "jsonl":
		r.src = newJSONL(r.raw)
	case "csv":
		// A byte-order mark goes before the CSV reader sees the header, so
		// a quoted first cell after it is not read as a bare quote. The
		// bytes still reach the file's hash, through r.raw.
		in := bufio.NewReaderSize(r.raw, 64<<10)
		if b, _ := in.Peek(len(utf8BOM)); string(b) == utf8BOM {
			in.Discard(len(utf8BOM))
		}
		src, hp, err := newCSV(in)
		if err != nil {
			return nil, nil, fmt.Errorf("reading dataset %s: %w", file, err)
		}
		for _, p := range hp {
			r.pending = append(r.pending, r.problem(p))
		}
		if src == nil {
			// No header: nothing more can be read.
			probs = append(probs, r.pending...)
			r.pending = nil
			r.eof = true
			return r, probs, nil
		}
		r.src = src
		r.header = src.header
	default:
		return nil, nil, fmt.Errorf("dataset %s: unknown format %q (want jsonl or csv)", file, ds.Format)
	}
	tags, tp := compileTags(sp, r.header)
	r.tags = tags
	probs = append(probs, tp...)
	if ds.ExpectedExtract != "" {
		if re, err := regexp.Compile(ds.ExpectedExtract); err == nil && re.NumSubexp() > 0 {
			r.extract = re
		}
	}
	return r, probs, nil
}

const utf8BOM = "\xef\xbb\xbf"

// Close releases the file.
func (r *Reader) Close() error {
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}

// Hash is the dataset's version: "sha256:<hex>" over its cases as parsed,
// in the canonical encoding canonical.go describes (line ends, a
// byte-order mark, CSV quoting and JSONL key order do not change it). It
// is complete only after Next has returned io.EOF (or after Scan).
func (r *Reader) Hash() string {
	if r.ch == nil {
		return ""
	}
	return "sha256:" + hex.EncodeToString(r.ch.Sum(nil))
}

// FileHash is "sha256:<hex>" of the file's bytes; it is complete only
// after Next has returned io.EOF (or after Scan).
func (r *Reader) FileHash() string {
	if r.h == nil {
		return ""
	}
	return "sha256:" + hex.EncodeToString(r.h.Sum(nil))
}

// Header is the CSV header (nil for JSONL).
func (r *Reader) Header() []string { return r.header }

// Next returns the next case, or io.EOF after the last. A malformed row is
// returned as spec.Problems located in the dataset file; the row is skipped
// and reading may go on.
func (r *Reader) Next() (*Case, error) {
	for {
		c, probs, err := r.read()
		if err != nil {
			return nil, err
		}
		if len(probs) > 0 {
			return nil, spec.Problems(probs)
		}
		if c != nil {
			return c, nil
		}
	}
}

func (r *Reader) problem(p rowProblem) spec.Problem {
	return spec.Problem{File: r.file, Line: p.line, Col: p.col, Msg: p.msg, Hint: p.hint}
}

// read returns the next case, or problems for a row that is not one.
func (r *Reader) read() (*Case, []spec.Problem, error) {
	if len(r.pending) > 0 {
		p := r.pending
		r.pending = nil
		return nil, p, nil
	}
	if r.eof {
		return nil, nil, io.EOF
	}
	row, rps, err := r.src.next()
	if err == io.EOF {
		r.eof = true
		return nil, nil, io.EOF
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading dataset %s: %w", r.file, err)
	}
	var probs []spec.Problem
	for _, p := range rps {
		probs = append(probs, r.problem(p))
	}
	if row == nil {
		return nil, probs, nil
	}
	if r.stats != nil {
		r.stats.add(row)
	}
	if row.badUTF8 > 0 && r.stats != nil {
		r.badRows++
	}
	if row.badUTF8 > 0 && r.stats != nil && len(r.badUTF8) <= MaxProblems {
		r.badUTF8 = append(r.badUTF8, spec.Problem{File: r.file, Line: row.line, Col: row.badUTF8,
			Msg:  "bytes that are not UTF-8 are read as U+FFFD",
			Hint: "save the file as UTF-8: inputs and answers are sent and compared with U+FFFD in their place"})
	}
	c, cps := r.build(row)
	probs = append(probs, cps...)
	if c != nil && r.ch != nil {
		// Streaming: one case's encoding at a time, the buffer reused.
		r.enc = appendCase(r.enc[:0], c)
		r.ch.Write(r.enc)
		if cap(r.enc) > 1<<20 {
			r.enc = nil // a huge row's buffer is not kept
		}
	}
	return c, probs, nil
}

// build turns a row into a case. It returns no case when the row has a
// problem.
func (r *Reader) build(row *row) (*Case, []spec.Problem) {
	ds := &r.sp.Dataset
	var probs []spec.Problem
	at := func(field, hint, format string, args ...any) {
		col := 1
		if field != "" {
			col = row.fieldCol(field)
		}
		probs = append(probs, spec.Problem{File: r.file, Line: row.line, Col: col, Msg: fmt.Sprintf(format, args...), Hint: hint})
	}
	c := &Case{Line: row.line}

	// The ID, weight and extracted expected value read the values as
	// written (numbers keep their text) before they become plain Go values.
	if ds.ID == spec.DefaultID {
		c.ID = strconv.Itoa(row.line) // JSONL: the line number
		if ds.Format == "csv" {
			c.ID = strconv.Itoa(row.num) // CSV: the row number, header excluded
		}
	} else {
		v, ok := row.fields[ds.ID]
		switch {
		case !ok:
			if r.stats != nil {
				r.stats.missingID++
			}
			at("", "dataset.id names the field holding each case's unique id; use id: line to number cases by line", "missing id field %q", ds.ID)
		case v == nil || v == "":
			at(ds.ID, "every case needs a unique id", "empty id field %q", ds.ID)
		default:
			switch v.(type) {
			case map[string]any, []any:
				at(ds.ID, "ids are strings or numbers", "id field %q holds %s", ds.ID, jsonKind(v))
			default:
				c.ID = Stringify(v)
			}
		}
	}
	if c.ID != "" {
		key := idKey(c.ID)
		if first, dup := r.ids[key]; dup {
			at(ds.ID, "case ids must be unique", "duplicate case id %q at line %d (first at line %d)", c.ID, row.line, first)
		} else {
			r.ids[key] = row.line
		}
	}

	if ds.Weight != "" {
		if v, ok := row.fields[ds.Weight]; ok && v != nil && v != "" {
			var w float64
			var err error
			switch x := v.(type) {
			case json.Number:
				w, err = x.Float64()
			case string:
				w, err = strconv.ParseFloat(strings.TrimSpace(x), 64)
			default:
				err = errors.New(jsonKind(v))
			}
			got := jsonKind(v)
			if str, isStr := v.(string); isStr {
				got = preview(str)
			}
			switch {
			case err != nil:
				at(ds.Weight, "a weight is a number, the cost of a wrong answer", "weight field %q must be a number, got %s", ds.Weight, got)
			case math.IsNaN(w) || math.IsInf(w, 0):
				at(ds.Weight, "a weight is a number, the cost of a wrong answer", "weight field %q must be a finite number, got %s", ds.Weight, got)
			case w < 0:
				at(ds.Weight, "a weight is the cost of a wrong answer, 0 or more", "weight field %q must not be negative, got %s", ds.Weight, Stringify(v))
			default:
				c.Weight, c.HasWeight = w, true
			}
		}
	}

	var extracted *string
	if ds.Expected != "" && r.extract != nil {
		if v, ok := row.fields[ds.Expected]; ok && v != nil {
			s := Stringify(v)
			m := r.extract.FindStringSubmatch(s)
			if m == nil {
				at(ds.Expected, "the value is "+preview(s), "expected field %q does not match dataset.expected_extract", ds.Expected)
			} else {
				extracted = &m[1]
			}
		}
	}

	c.Vars = row.fields
	if ds.Expected != "" {
		if extracted != nil {
			c.Expected = *extracted
		} else if r.extract == nil {
			c.Expected = c.Vars[ds.Expected]
		}
	}

	tagFailed := false
	var celVars map[string]any // the values as CEL tags read them, made once
	for i := range r.tags {
		t := &r.tags[i]
		vars := c.Vars
		if t.prg != nil {
			if celVars == nil {
				celVars = celNumbers(c.Vars).(map[string]any)
			}
			vars = celVars
		}
		v, ok, errMsg := t.eval(vars)
		if errMsg != "" {
			hint := ""
			if strings.Contains(errMsg, "no such key") {
				hint = "use has(case.FIELD) ? … : … for fields some cases lack"
			}
			if r.tagFails != nil {
				r.tagFails.add(t.key, spec.Problem{File: r.file, Line: row.line, Col: 1, Msg: fmt.Sprintf("tag %q: %s", t.key, errMsg), Hint: hint})
				tagFailed = true
				continue
			}
			at("", hint, "tag %q: %s", t.key, errMsg)
			continue
		}
		if ok {
			if c.Tags == nil {
				c.Tags = make(map[string]string, len(r.tags))
			}
			c.Tags[t.key] = v
		}
	}
	if len(probs) > 0 || tagFailed {
		return nil, probs
	}
	return c, nil
}

// idKey is a 128-bit fingerprint of an ID: duplicate detection keeps this,
// not the ID itself, so long IDs (a whole question) cost no more memory.
func idKey(id string) [16]byte {
	sum := sha256.Sum256([]byte(id))
	var k [16]byte
	copy(k[:], sum[:16])
	return k
}

// Each calls fn with every case, in file order, up to sp.Dataset.Limit
// cases when it is set. It stops at the first problem (returned as
// spec.Problems) or the first error from fn.
func Each(sp *spec.Spec, fn func(*Case) error) error {
	r, err := openChecked(sp, false)
	if err != nil {
		return err
	}
	defer r.Close()
	n := 0
	for sp.Dataset.Limit <= 0 || n < sp.Dataset.Limit {
		c, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(c); err != nil {
			return err
		}
		n++
	}
	return nil
}

// MaxProblems caps the problems Scan lists for one dataset; the rest are
// counted in a final "… and N more problems".
const MaxProblems = 50

// Info describes a dataset as a whole.
type Info struct {
	Path   string `json:"path"`
	Format string `json:"format"`
	// Hash is the dataset's version: "sha256:<hex>" over the cases as
	// parsed (IDs, fields, expected values, tags, weights) in a canonical
	// encoding, so the same cases saved with other line ends, a
	// byte-order mark, other CSV quoting or JSONL key order keep it.
	Hash string `json:"hash"`
	// FileHash is "sha256:<hex>" of the file's bytes.
	FileHash string `json:"file_hash"`
	// Rows counts the rows read (blank JSONL lines are not rows); Cases the
	// valid ones; Count the cases a run uses (Cases, or Limit when smaller).
	Rows  int `json:"rows"`
	Cases int `json:"cases"`
	Count int `json:"count"`
	// Fields are the field names seen, sorted; Stats says how many rows
	// have each and the first line of a row that lacks it.
	Fields   []string             `json:"fields"`
	Stats    map[string]FieldStat `json:"-"`
	Problems spec.Problems        `json:"problems,omitempty"`
	// Warnings are what reads but is not what was written: rows with bytes
	// that are not UTF-8 (read as U+FFFD), each at FILE:LINE:COL, up to
	// MaxProblems and then a count.
	Warnings spec.Problems `json:"warnings,omitempty"`
}

// FieldStat counts one field over the rows.
type FieldStat struct {
	Rows         int // rows that have the field
	FirstMissing int // line of the first row that lacks it (0: none does)
}

// maxFields bounds the distinct field names tracked, against hostile files.
const maxFields = 10000

type fieldStats struct {
	rows      int
	firstLine int
	m         map[string]*FieldStat
	missingID int
}

func (s *fieldStats) add(r *row) {
	s.rows++
	if s.rows == 1 {
		s.firstLine = r.line
	}
	for name := range r.fields {
		st, ok := s.m[name]
		if !ok {
			if len(s.m) >= maxFields {
				continue
			}
			st = &FieldStat{}
			if s.rows > 1 {
				st.FirstMissing = s.firstLine
			}
			s.m[name] = st
		}
		st.Rows++
	}
	if len(r.fields) < len(s.m) {
		for name, st := range s.m {
			if st.FirstMissing == 0 {
				if _, ok := r.fields[name]; !ok {
					st.FirstMissing = r.line
				}
			}
		}
	}
}

// Scan reads the whole dataset once: it counts the cases, hashes the file,
// collects the field names, and reports every problem (up to MaxProblems)
// — malformed rows, duplicate IDs, values that do not fit the spec. The
// whole file is checked even when sp.Dataset.Limit is set. The error is
// the problems as spec.Problems (also in Info.Problems), or an I/O error.
func Scan(sp *spec.Spec) (*Info, error) {
	info := &Info{Path: sp.Resolve(sp.Dataset.Path), Format: sp.Dataset.Format}
	r, probs, err := open(sp, true)
	if err != nil {
		return info, err
	}
	if r == nil {
		info.Problems = probs
		return info, probs
	}
	defer r.Close()
	return r.scan(info, probs)
}

// scan reads every row of r; probs are the problems found opening it.
func (r *Reader) scan(info *Info, probs spec.Problems) (*Info, error) {
	sp := r.sp
	stats := &fieldStats{m: map[string]*FieldStat{}}
	r.stats = stats
	r.tagFails = &tagFailures{}

	var rowProbs []spec.Problem
	missingID := fmt.Sprintf("missing id field %q", sp.Dataset.ID)
	more, missingMore := 0, 0
	var firstOmitted *spec.Problem
	keep := func(ps []spec.Problem) {
		for _, p := range ps {
			// Keep more than shown: missing-id problems may be replaced by
			// one problem in the spec below.
			if len(rowProbs) < MaxProblems*2 {
				rowProbs = append(rowProbs, p)
				continue
			}
			more++
			if p.Msg == missingID {
				missingMore++
			}
			if firstOmitted == nil {
				q := p
				firstOmitted = &q
			}
		}
	}
	for {
		c, ps, err := r.read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return info, err
		}
		keep(ps)
		if c != nil {
			info.Cases++
		}
	}
	// Hash the whole file even if reading stopped early.
	if _, err := io.Copy(io.Discard, r.raw); err != nil {
		return info, fmt.Errorf("reading dataset %s: %w", r.file, err)
	}
	info.Hash, info.FileHash = r.Hash(), r.FileHash()
	info.Rows = stats.rows
	if n := r.badRows; n > 0 {
		info.Warnings = r.badUTF8[:min(n, MaxProblems)]
		if n > MaxProblems {
			q := r.badUTF8[MaxProblems]
			info.Warnings = append(info.Warnings, spec.Problem{File: r.file, Line: q.Line, Col: q.Col,
				Msg: fmt.Sprintf("… and %d more rows with bytes that are not UTF-8", n-MaxProblems)})
		}
	}
	info.Count = info.Cases
	if l := sp.Dataset.Limit; l > 0 && l < info.Count {
		info.Count = l
	}
	info.Stats = map[string]FieldStat{}
	for name, st := range stats.m {
		info.Fields = append(info.Fields, name)
		info.Stats[name] = *st
	}
	if r.header != nil {
		// CSV: the header names the fields even when no row was read.
		for _, h := range r.header {
			if _, ok := info.Stats[h]; !ok && h != "" {
				info.Fields = append(info.Fields, h)
				info.Stats[h] = FieldStat{}
			}
		}
	}
	sort.Strings(info.Fields)

	// Settings naming a field no row has are one problem in the spec, not
	// one per row.
	ds := &sp.Dataset
	fieldProblem := func(path, field, what string) {
		hint := ""
		if near := spec.Nearest(field, info.Fields); near != "" {
			hint = fmt.Sprintf("did you mean %q?", near)
		}
		probs = append(probs, sp.Problemf(path, hint, "%s names field %q that the dataset lacks (fields: %s)", what, field, FieldList(info.Fields)))
	}
	if ds.ID != spec.DefaultID && stats.rows > 0 && stats.missingID == stats.rows {
		fieldProblem("dataset.id", ds.ID, "dataset.id")
		rowProbs = dropMsg(rowProbs, missingID)
		more -= missingMore
	}
	if stats.rows > 0 {
		if ds.Expected != "" && !hasField(info, ds.Expected) {
			fieldProblem("dataset.expected", ds.Expected, "dataset.expected")
		}
		if ds.Weight != "" && !hasField(info, ds.Weight) {
			fieldProblem("dataset.weight", ds.Weight, "dataset.weight")
		}
		for _, t := range r.tags {
			// The spec's difficulty tag may be a rating people have yet
			// to give (assay serve writes it into each case's line): a
			// workload none of whose cases is rated yet is where rating
			// starts, not a mistake.
			rated := sp.Difficulty != nil && sp.Difficulty.Tag == t.key
			if t.field != "" && !hasField(info, t.field) && !rated {
				fieldProblem("dataset.tags."+t.key, t.field, "tag "+strconv.Quote(t.key))
			}
		}
	}
	// Never cut among the rows' problems: one per failing tag expression.
	probs = append(probs, r.tagFails.problems()...)
	if info.Cases == 0 && stats.rows == 0 && len(rowProbs) == 0 && !hasFileProblem(probs, r.file) {
		rowProbs = append(rowProbs, spec.Problem{File: r.file, Line: 1, Col: 1, Msg: "the dataset has no cases", Hint: "write one case per line in JSONL, or one per row under a header in CSV"})
	}
	if len(rowProbs) > MaxProblems {
		more += len(rowProbs) - MaxProblems
		q := rowProbs[MaxProblems]
		firstOmitted = &q
		rowProbs = rowProbs[:MaxProblems]
	}
	if more > 0 {
		rowProbs = append(rowProbs, spec.Problem{File: r.file, Line: firstOmitted.Line, Col: firstOmitted.Col, Msg: fmt.Sprintf("… and %d more problems", more)})
	}
	probs = append(probs, rowProbs...)
	if len(probs) > 0 {
		info.Problems = probs
		return info, probs
	}
	return info, nil
}

func hasFileProblem(ps spec.Problems, file string) bool {
	for _, p := range ps {
		if p.File == file {
			return true
		}
	}
	return false
}

func hasField(info *Info, name string) bool {
	_, ok := info.Stats[name]
	return ok
}

func dropMsg(ps []spec.Problem, msg string) []spec.Problem {
	out := ps[:0]
	for _, p := range ps {
		if p.Msg != msg {
			out = append(out, p)
		}
	}
	return out
}

// FieldList renders field names for messages, cut after the first 20.
func FieldList(fields []string) string {
	const max = 20
	if len(fields) == 0 {
		return "none"
	}
	if len(fields) > max {
		return strings.Join(fields[:max], ", ") + fmt.Sprintf(", … (%d in all)", len(fields))
	}
	return strings.Join(fields, ", ")
}
