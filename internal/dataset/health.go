package dataset

import (
	"cmp"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/stats"
	"github.com/assay-eval/assay/internal/units"
)

// Health defaults.
const (
	DefaultDupThreshold = 0.9
	DefaultMinBucket    = 30
	DefaultTopLabels    = 10
	DefaultMaxListed    = 50
)

// BucketTag is the tag key that names a case's bucket, and BucketShouldRefuse
// the bucket whose cases pass by refusing (they need no expected value).
const (
	BucketTag          = "bucket"
	BucketShouldRefuse = "should-refuse"
)

// StandardBuckets are the buckets a case set should cover.
func StandardBuckets() []string { return []string{"common", "edge", "hostile", BucketShouldRefuse} }

// HealthOptions configure CheckHealth. Zero values take the defaults.
type HealthOptions struct {
	// TextFields are the fields whose text is a case's input, compared for
	// duplicates: the fields the prompt uses. Empty means every string
	// field but the ID and expected fields.
	TextFields []string
	// DupThreshold is the token-set Jaccard similarity at or above which two
	// cases are near-duplicates, in (0, 1] (default 0.9).
	DupThreshold float64
	// MinBucket is the fewest cases a tag value needs before its rate means
	// much (default 30).
	MinBucket int
	// TopLabels is how many expected values the distribution lists
	// (default 10).
	TopLabels int
	// MaxListed bounds the groups, pairs and cases listed in each finding
	// (default 50); the counts are always complete.
	MaxListed int
}

// Health is what CheckHealth found. Counts are complete; lists are cut at
// HealthOptions.MaxListed.
type Health struct {
	Path  string `json:"path"`
	Cases int    `json:"cases"`
	// Skipped counts rows that are not cases (malformed, duplicate IDs …;
	// validate reports them as problems).
	Skipped int `json:"skipped_rows,omitempty"`
	// TextFields are the fields compared for duplicates; TextSource says
	// where they came from: "prompt" or "string fields".
	TextFields []string `json:"text_fields"`
	TextSource string   `json:"text_source"`

	Exact    ExactDuplicates `json:"exact_duplicates"`
	Near     NearDuplicates  `json:"near_duplicates"`
	Expected ExpectedHealth  `json:"expected"`
	Labels   *Labels         `json:"labels,omitempty"`
	Tags     []TagHealth     `json:"tags"`
	// MissingBuckets are standard buckets no case is in (only when the
	// dataset has a bucket tag).
	MissingBuckets []string `json:"missing_buckets,omitempty"`
}

// CaseRef names a case: its ID and the line where it starts.
type CaseRef struct {
	ID   string `json:"id"`
	Line int    `json:"line"`
}

// ExactDuplicates are groups of cases whose normalised input text is the
// same.
type ExactDuplicates struct {
	Groups int `json:"groups"`
	// Cases counts the cases in the groups; Extra those beyond the first of
	// each group (what removing the duplicates would remove).
	Cases int        `json:"cases"`
	Extra int        `json:"extra"`
	List  []DupGroup `json:"list,omitempty"`
	// Conflicting counts groups whose cases expect different values: the
	// same input cannot be right both ways.
	Conflicting int `json:"conflicting"`
}

// DupGroup is one group of exact duplicates.
type DupGroup struct {
	Cases []CaseRef `json:"cases"`
	// Text is the normalised input, cut to 120 characters.
	Text string `json:"text"`
	// Expected lists the distinct expected values in the group when there
	// are several.
	Expected []string `json:"conflicting_expected,omitempty"`
}

// NearDuplicates are pairs of cases whose input token sets overlap at or
// above the threshold (exact duplicates are not repeated here: each exact
// group is compared once, through its first case).
type NearDuplicates struct {
	Threshold float64 `json:"threshold"`
	Pairs     int     `json:"pairs"`
	// Cases counts the distinct cases in some pair.
	Cases int        `json:"cases"`
	List  []NearPair `json:"list,omitempty"`
	// Compared is how many candidate pairs were checked exactly (of
	// n(n-1)/2): the work the prefix filter left.
	Compared int64 `json:"compared"`
}

// NearPair is one near-duplicate pair, A before B in the file.
type NearPair struct {
	A          CaseRef `json:"a"`
	B          CaseRef `json:"b"`
	Similarity float64 `json:"similarity"`
	// Differ lists the tokens only one side has (up to 10 of each).
	OnlyA []string `json:"only_a"`
	OnlyB []string `json:"only_b"`
}

// ExpectedHealth says which cases lack a usable expected value.
type ExpectedHealth struct {
	Field   string `json:"field,omitempty"`
	Extract string `json:"extract,omitempty"`
	// Missing: the field is absent, null or blank (or what the extract
	// captured is blank). Unextractable: expected_extract does not match.
	Missing           int       `json:"missing"`
	MissingList       []CaseRef `json:"missing_list,omitempty"`
	Unextractable     int       `json:"unextractable"`
	UnextractableList []CaseRef `json:"unextractable_list,omitempty"`
	// ShouldRefuseExempt counts should-refuse cases without an expected
	// value: refusing is their answer, so they need none.
	ShouldRefuseExempt int `json:"should_refuse_exempt,omitempty"`
}

// Labels is the distribution of expected values.
type Labels struct {
	Field    string `json:"field"`
	Values   int    `json:"values"`
	Distinct int    `json:"distinct"`
	// Numeric is true when every value is a number: the top values then
	// say little, but a dominant one still shows what a constant answer
	// would score.
	Numeric bool         `json:"numeric"`
	Top     []ValueCount `json:"top"`
	// Other counts the values not in Top.
	Other int `json:"other"`
	// Fields are present when expected values are JSON objects (an
	// extraction task's {"currency": "EUR", "total": 12}): the
	// distribution of each field, by dotted path, in path order. A whole
	// object rarely repeats, so Top says little about them; a field
	// whose one value dominates is what a constant answer gets right.
	Fields []FieldLabels `json:"fields,omitempty"`
	// Objects counts the expected values that are objects; FieldsOmitted
	// the field paths past MaxLabelFields, not summarised.
	Objects       int `json:"objects,omitempty"`
	FieldsOmitted int `json:"fields_omitted,omitempty"`
}

// MaxLabelFields bounds the fields of object-valued expected answers that
// the health check summarises.
const MaxLabelFields = 50

// FieldLabels is the distribution of one field of object-valued expected
// values. Numeric fields (every value a number) are summarised by their
// range and median, not listed; others list their most frequent values.
type FieldLabels struct {
	Field string `json:"field"`
	// Values counts the objects with a value (not null) at the field;
	// Missing the objects without one.
	Values   int          `json:"values"`
	Missing  int          `json:"missing"`
	Distinct int          `json:"distinct"`
	Numeric  bool         `json:"numeric"`
	Min      *float64     `json:"min,omitempty"`
	Median   *float64     `json:"median,omitempty"`
	Max      *float64     `json:"max,omitempty"`
	Top      []ValueCount `json:"top,omitempty"`
	Other    int          `json:"other,omitempty"`
}

// ValueCount is one value with its count and share.
type ValueCount struct {
	Value string  `json:"value"`
	Count int     `json:"count"`
	Share float64 `json:"share"`
	// Small is set on a tag value with fewer than MinBucket cases;
	// HalfWidth is then the widest half-width of a 95% Wilson interval on
	// that many cases (at a 50% rate), the precision any rate on it can
	// have.
	Small     bool    `json:"small,omitempty"`
	HalfWidth float64 `json:"ci_half_width,omitempty"`
}

// TagHealth is the distribution of one tag's values.
type TagHealth struct {
	Key    string       `json:"key"`
	Values []ValueCount `json:"values"`
	// Missing counts cases with no value for the key.
	Missing     int       `json:"missing"`
	MissingList []CaseRef `json:"missing_list,omitempty"`
	Small       int       `json:"small_values"`
}

// Warnings are the findings that `validate --deep --strict` fails on:
// duplicates.
func (h *Health) Warnings() []string {
	var ws []string
	if h.Exact.Groups > 0 {
		ws = append(ws, fmt.Sprintf("%d group(s) of exactly duplicated inputs (%d cases, %d beyond the first of each)", h.Exact.Groups, h.Exact.Cases, h.Exact.Extra))
	}
	if h.Exact.Conflicting > 0 {
		ws = append(ws, fmt.Sprintf("%d duplicate group(s) expect different answers for the same input", h.Exact.Conflicting))
	}
	if h.Near.Pairs > 0 {
		ws = append(ws, fmt.Sprintf("%d near-duplicate pair(s) (token overlap ≥ %s) among %d cases", h.Near.Pairs, units.Plain(h.Near.Threshold), h.Near.Cases))
	}
	return ws
}

// Invalid reports whether a case lacks a usable expected value: the
// dataset cannot grade it, so it is invalid.
func (h *Health) Invalid() bool { return h.Expected.Missing > 0 || h.Expected.Unextractable > 0 }

// healthCase is what the checks keep of one case.
type healthCase struct {
	ref    CaseRef
	key    [16]byte // of the normalised input
	text   string   // normalised input (for exact-group display)
	tokens []int32  // distinct token IDs
	exp    string   // expected value as text ("" when unusable)
}

// CheckHealth reads the whole dataset sp names (ignoring dataset.limit) and
// reports duplicates, unusable expected values and the distributions of
// labels and tags. Rows that are not cases are counted and skipped; an
// error is returned only when the dataset cannot be read at all.
func CheckHealth(sp *spec.Spec, o HealthOptions) (*Health, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	r, err := Open(rawExpected(sp))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return checkHealth(r, sp, o)
}

// rawExpected is sp reading expected values as written: CheckHealth applies
// expected_extract itself, so that a case it does not match is reported,
// not skipped.
func rawExpected(sp *spec.Spec) *spec.Spec {
	raw := *sp
	raw.Dataset.ExpectedExtract = ""
	return &raw
}

// checkHealth reads r (opened on rawExpected(sp)) to the end.
func checkHealth(r *Reader, sp *spec.Spec, o HealthOptions) (*Health, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	o = o.withDefaults()
	ds := &sp.Dataset
	var err error
	var extract *regexp.Regexp
	if ds.ExpectedExtract != "" {
		if extract, err = regexp.Compile(ds.ExpectedExtract); err != nil || extract.NumSubexp() == 0 {
			return nil, fmt.Errorf("dataset.expected_extract %q does not compile with a group", ds.ExpectedExtract)
		}
	}

	h := &Health{Path: ds.Path, TextFields: o.TextFields, TextSource: "prompt"}
	if len(o.TextFields) == 0 {
		h.TextSource = "string fields"
	}
	h.Expected.Field, h.Expected.Extract = ds.Expected, ds.ExpectedExtract
	tokens := map[string]int32{}
	stringFields := map[string]bool{}
	tagCounts := make([]map[string]int, len(ds.Tags))
	for i := range tagCounts {
		tagCounts[i] = map[string]int{}
		h.Tags = append(h.Tags, TagHealth{Key: ds.Tags[i].Key})
	}
	labelCounts := map[string]int{}
	numeric := true
	fields := &fieldTally{by: map[string]*fieldCount{}}
	var cases []healthCase

	for {
		c, err := r.Next()
		if err == io.EOF {
			break
		}
		var ps spec.Problems
		if errors.As(err, &ps) {
			h.Skipped++
			continue
		}
		if err != nil {
			return nil, err
		}
		hc := healthCase{ref: CaseRef{ID: c.ID, Line: c.Line}}
		text := caseText(c, o.TextFields, ds, stringFields)
		hc.text = text
		sum := sha256.Sum256([]byte(text))
		copy(hc.key[:], sum[:16])
		hc.tokens = tokenIDs(text, tokens)

		if ds.Expected != "" {
			exp, state := expectedText(c, ds.Expected, extract)
			shouldRefuse := c.Tags[BucketTag] == BucketShouldRefuse
			switch {
			case state == expOK:
				hc.exp = exp
				labelCounts[exp]++
				if numeric && !isNumber(exp) {
					numeric = false
				}
				if extract == nil {
					if obj, ok := expectedObject(c.Vars[ds.Expected]); ok {
						fields.add(obj)
					}
				}
			case shouldRefuse:
				h.Expected.ShouldRefuseExempt++
			case state == expUnextractable:
				h.Expected.Unextractable++
				h.Expected.UnextractableList = appendCapped(h.Expected.UnextractableList, hc.ref, o.MaxListed)
			default:
				h.Expected.Missing++
				h.Expected.MissingList = appendCapped(h.Expected.MissingList, hc.ref, o.MaxListed)
			}
		}
		for i := range ds.Tags {
			v, ok := c.Tags[ds.Tags[i].Key]
			if !ok || strings.TrimSpace(v) == "" {
				h.Tags[i].Missing++
				h.Tags[i].MissingList = appendCapped(h.Tags[i].MissingList, hc.ref, o.MaxListed)
				continue
			}
			tagCounts[i][v]++
		}
		cases = append(cases, hc)
	}
	h.Cases = len(cases)
	if len(o.TextFields) == 0 {
		for f := range stringFields {
			h.TextFields = append(h.TextFields, f)
		}
		slices.Sort(h.TextFields)
	}

	h.Exact = exactDuplicates(cases, o.MaxListed)
	h.Near = nearDuplicates(cases, tokens, o.DupThreshold, o.MaxListed)

	if ds.Expected != "" {
		h.Labels = labels(ds.Expected, labelCounts, numeric, o.TopLabels)
		fields.summarise(h.Labels, o.TopLabels)
	}
	for i := range h.Tags {
		vals := sortedCounts(tagCounts[i])
		for j := range vals {
			vals[j].Share = share(vals[j].Count, h.Cases)
			if vals[j].Count < o.MinBucket {
				vals[j].Small = true
				vals[j].HalfWidth = widestHalfWidth(vals[j].Count)
				h.Tags[i].Small++
			}
		}
		h.Tags[i].Values = vals
		if h.Tags[i].Values == nil {
			h.Tags[i].Values = []ValueCount{}
		}
		if h.Tags[i].Key == BucketTag && h.Cases > 0 {
			for _, b := range StandardBuckets() {
				if tagCounts[i][b] == 0 {
					h.MissingBuckets = append(h.MissingBuckets, b)
				}
			}
		}
	}
	if h.Tags == nil {
		h.Tags = []TagHealth{}
	}
	return h, nil
}

// check rejects a threshold outside (0, 1]; 0 means the default.
func (o HealthOptions) check() error {
	if o.DupThreshold < 0 || o.DupThreshold > 1 || math.IsNaN(o.DupThreshold) {
		return fmt.Errorf("duplicate threshold %s: want a similarity above 0 and at most 1, e.g. 0.9", units.Plain(o.DupThreshold))
	}
	return nil
}

func (o HealthOptions) withDefaults() HealthOptions {
	if o.DupThreshold == 0 {
		o.DupThreshold = DefaultDupThreshold
	}
	if o.MinBucket <= 0 {
		o.MinBucket = DefaultMinBucket
	}
	if o.TopLabels <= 0 {
		o.TopLabels = DefaultTopLabels
	}
	if o.MaxListed <= 0 {
		o.MaxListed = DefaultMaxListed
	}
	return o
}

// caseText is a case's normalised input: the text fields, each normalised,
// joined by a separator no normalised text holds. Without text fields it is
// every string field but the ID and expected fields (their names are added
// to seen).
func caseText(c *Case, fields []string, ds *spec.Dataset, seen map[string]bool) string {
	var parts []string
	if len(fields) > 0 {
		for _, f := range fields {
			v, ok := c.Vars[f]
			if !ok || v == nil {
				parts = append(parts, "")
				continue
			}
			parts = append(parts, NormalizeText(Stringify(v)))
		}
		return strings.Join(parts, "\x1f")
	}
	names := make([]string, 0, len(c.Vars))
	for k, v := range c.Vars {
		if _, isString := v.(string); isString && k != ds.Expected && k != ds.ID {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	for _, k := range names {
		seen[k] = true
		parts = append(parts, k+"\x1e"+NormalizeText(c.Vars[k].(string)))
	}
	return strings.Join(parts, "\x1f")
}

// NormalizeText is the form inputs are compared in: Unicode NFKC, lower
// case, punctuation removed (except between two digits, so 3.5 and 1/2 stay
// apart from 35 and 12), control characters and runs of white space made
// one space, trimmed.
func NormalizeText(s string) string {
	rs := []rune(strings.ToLower(norm.NFKC.String(s)))
	var b strings.Builder
	b.Grow(len(rs))
	space := false
	for i, r := range rs {
		switch {
		case unicode.IsSpace(r) || unicode.IsControl(r):
			space = b.Len() > 0
			continue
		case unicode.IsPunct(r) && !(i > 0 && i < len(rs)-1 && unicode.IsDigit(rs[i-1]) && unicode.IsDigit(rs[i+1])):
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// tokenIDs interns the distinct white-space separated tokens of text
// (field separators split tokens too) and returns their IDs, sorted.
func tokenIDs(text string, ids map[string]int32) []int32 {
	fields := strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == '\x1f' || r == '\x1e' })
	out := make([]int32, 0, len(fields))
	for _, f := range fields {
		id, ok := ids[f]
		if !ok {
			id = int32(len(ids))
			ids[f] = id
		}
		out = append(out, id)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

type expState int

const (
	expOK expState = iota
	expMissing
	expUnextractable
)

// expectedText is a case's expected value as text, after expected_extract
// when there is one. The raw value is the decoded JSON value, so a number
// written 18.0 is matched as 18 (labelText).
func expectedText(c *Case, field string, extract *regexp.Regexp) (string, expState) {
	v, ok := c.Vars[field]
	if !ok || v == nil {
		return "", expMissing
	}
	s := labelText(v)
	if extract != nil {
		m := extract.FindStringSubmatch(s)
		if m == nil {
			if strings.TrimSpace(s) == "" {
				return "", expMissing
			}
			return "", expUnextractable
		}
		s = m[1]
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return "", expMissing
	}
	return s, expOK
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
	return err == nil
}

func appendCapped(list []CaseRef, c CaseRef, max int) []CaseRef {
	if len(list) < max {
		list = append(list, c)
	}
	return list
}

func share(k, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(k) / float64(n)
}

// sortedCounts orders values by count, most first, then by value.
func sortedCounts(m map[string]int) []ValueCount {
	out := make([]ValueCount, 0, len(m))
	for v, n := range m {
		out = append(out, ValueCount{Value: v, Count: n})
	}
	slices.SortFunc(out, func(a, b ValueCount) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return strings.Compare(a.Value, b.Value)
	})
	return out
}

// widestHalfWidth is the half-width of the 95% Wilson interval for a rate
// of one half on n cases (k = n/2, rounded down, for odd n): about the
// widest any rate measured on n cases has.
func widestHalfWidth(n int) float64 {
	if n == 0 {
		return 0.5
	}
	iv := stats.Wilson(n/2, n, 0.05)
	return (iv.Hi - iv.Lo) / 2
}

func labels(field string, counts map[string]int, numeric bool, top int) *Labels {
	all := sortedCounts(counts)
	n := 0
	for _, vc := range all {
		n += vc.Count
	}
	l := &Labels{Field: field, Values: n, Distinct: len(all), Numeric: numeric && n > 0, Top: []ValueCount{}}
	for i, vc := range all {
		if i >= top {
			l.Other += vc.Count
			continue
		}
		vc.Share = share(vc.Count, n)
		l.Top = append(l.Top, vc)
	}
	return l
}

// exactDuplicates groups cases by normalised input.
func exactDuplicates(cases []healthCase, maxListed int) ExactDuplicates {
	groups := map[[16]byte][]int{}
	var order [][16]byte
	for i := range cases {
		k := cases[i].key
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	var out ExactDuplicates
	for _, k := range order {
		idx := groups[k]
		if len(idx) < 2 {
			continue
		}
		out.Groups++
		out.Cases += len(idx)
		out.Extra += len(idx) - 1
		g := DupGroup{Text: clipText(strings.NewReplacer("\x1f", " | ", "\x1e", ": ").Replace(cases[idx[0]].text), 120)}
		var exps []string
		for _, i := range idx {
			g.Cases = append(g.Cases, cases[i].ref)
			if e := cases[i].exp; e != "" && !slices.Contains(exps, e) {
				exps = append(exps, e)
			}
		}
		if len(exps) > 1 {
			out.Conflicting++
			g.Expected = exps
		}
		if len(out.List) < maxListed {
			out.List = append(out.List, g)
		}
	}
	return out
}

func clipText(s string, max int) string {
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return string(r[:max]) + "…"
}

// nearDuplicates finds every pair of distinct inputs whose token sets have
// Jaccard similarity at least t, exactly, with the prefix filter of
// Chaudhuri et al. (2006) and Bayardo et al.'s All-Pairs (2007): tokens are
// ordered rarest first; a pair with J(x, y) ≥ t shares at least ⌈t·|y|⌉
// tokens (|y| ≥ |x|), so each set's first |s| − ⌈t·|s|⌉ + 1 tokens in that
// order must meet. Only pairs that meet there, and whose sizes allow
// J ≥ t, are compared in full. Each exact-duplicate group takes part
// through its first case.
func nearDuplicates(cases []healthCase, tokens map[string]int32, t float64, maxListed int) NearDuplicates {
	out := NearDuplicates{Threshold: t}
	vocab := len(tokens)
	// One representative per normalised input, with a non-empty token set.
	seen := map[[16]byte]bool{}
	var reps []int
	for i := range cases {
		if seen[cases[i].key] || len(cases[i].tokens) == 0 {
			continue
		}
		seen[cases[i].key] = true
		reps = append(reps, i)
	}
	// Document frequency → rank (rarest first).
	df := make([]int32, vocab)
	for _, i := range reps {
		for _, tok := range cases[i].tokens {
			df[tok]++
		}
	}
	rank := make([]int32, vocab)
	byRarity := make([]int32, vocab)
	for i := range byRarity {
		byRarity[i] = int32(i)
	}
	slices.SortFunc(byRarity, func(a, b int32) int {
		if c := cmp.Compare(df[a], df[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	for r, tok := range byRarity {
		rank[tok] = int32(r)
	}
	// Each set as ranks, ascending; sets visited by size, smallest first.
	sets := make([][]int32, len(reps))
	for k, i := range reps {
		s := make([]int32, len(cases[i].tokens))
		for j, tok := range cases[i].tokens {
			s[j] = rank[tok]
		}
		slices.Sort(s)
		sets[k] = s
	}
	order := make([]int, len(reps))
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(len(sets[a]), len(sets[b])) })

	const eps = 1e-9
	minOverlap := func(n int) int { return int(math.Ceil(t*float64(n) - eps)) }
	index := map[int32][]int{} // rank → sets (by position in reps) with it in their prefix
	mark := make([]int, len(reps))
	for k := range mark {
		mark[k] = -1
	}
	inPair := map[int]bool{}
	var found []NearPair
	for _, y := range order {
		sy := sets[y]
		prefix := len(sy) - minOverlap(len(sy)) + 1
		minSize := float64(len(sy))*t - eps
		var cands []int
		for _, tok := range sy[:prefix] {
			for _, x := range index[tok] {
				if mark[x] == y || float64(len(sets[x])) < minSize {
					continue
				}
				mark[x] = y
				cands = append(cands, x)
			}
		}
		for _, x := range cands {
			out.Compared++
			inter := intersectSize(sets[x], sets[y])
			union := len(sets[x]) + len(sets[y]) - inter
			if j := float64(inter) / float64(union); j >= t-eps {
				a, b := cases[reps[x]], cases[reps[y]]
				if b.ref.Line < a.ref.Line {
					a, b = b, a
				}
				found = append(found, NearPair{A: a.ref, B: b.ref, Similarity: math.Round(j*1e4) / 1e4})
				inPair[reps[x]], inPair[reps[y]] = true, true
				out.Pairs++
				if len(found) >= 4*maxListed+64 {
					// Keep memory bounded however many pairs there are.
					found = bestPairs(found, maxListed)
				}
			}
		}
		for _, tok := range sy[:prefix] {
			index[tok] = append(index[tok], y)
		}
	}
	out.Cases = len(inPair)
	found = bestPairs(found, maxListed)
	if len(found) > 0 {
		names := make([]string, len(tokens))
		for s, id := range tokens {
			names[id] = s
		}
		byRef := map[CaseRef][]int32{}
		for _, c := range cases {
			byRef[c.ref] = c.tokens
		}
		for i := range found {
			found[i].OnlyA = tokenDiff(byRef[found[i].A], byRef[found[i].B], names, 10)
			found[i].OnlyB = tokenDiff(byRef[found[i].B], byRef[found[i].A], names, 10)
		}
	}
	out.List = found
	return out
}

// bestPairs sorts pairs most similar first, then in file order, and keeps
// the first max.
func bestPairs(found []NearPair, max int) []NearPair {
	slices.SortFunc(found, func(p, q NearPair) int {
		if c := cmp.Compare(q.Similarity, p.Similarity); c != 0 {
			return c
		}
		if c := cmp.Compare(p.A.Line, q.A.Line); c != 0 {
			return c
		}
		return cmp.Compare(p.B.Line, q.B.Line)
	})
	if len(found) > max {
		found = found[:max]
	}
	return found
}

// intersectSize counts the common elements of two ascending slices.
func intersectSize(a, b []int32) int {
	n, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			n++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return n
}

// tokenDiff lists up to max tokens of a (ascending IDs) not in b, by name.
func tokenDiff(a, b []int32, names []string, max int) []string {
	out := []string{}
	for _, t := range a {
		if _, found := slices.BinarySearch(b, t); !found {
			out = append(out, names[t])
			if len(out) == max {
				break
			}
		}
	}
	return out
}

// expectedObject is an expected value that is a JSON object: one written as
// an object, or a string holding one ("{\"total\": 12}").
func expectedObject(v any) (map[string]any, bool) {
	switch x := v.(type) {
	case map[string]any:
		return x, true
	case string:
		t := strings.TrimSpace(x)
		if !strings.HasPrefix(t, "{") {
			return nil, false
		}
		dec := json.NewDecoder(strings.NewReader(t))
		dec.UseNumber()
		var m map[string]any
		if dec.Decode(&m) != nil || dec.More() {
			return nil, false
		}
		return m, true
	}
	return nil, false
}

// fieldTally counts the values of each field of object-valued expected
// values (nested objects by dotted path; a list is one value, as JSON).
type fieldTally struct {
	objects int
	order   []string
	by      map[string]*fieldCount
	omitted map[string]bool
}

type fieldCount struct {
	counts  map[string]int
	numbers []float64
	numeric bool
	values  int
}

func (f *fieldTally) add(obj map[string]any) {
	f.objects++
	f.walk("", obj)
}

func (f *fieldTally) walk(prefix string, obj map[string]any) {
	for k, v := range obj {
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
			f.walk(path, sub)
			continue
		}
		if v == nil {
			continue // null: counted as missing
		}
		fc, ok := f.by[path]
		if !ok {
			if len(f.order) >= MaxLabelFields {
				if f.omitted == nil {
					f.omitted = map[string]bool{}
				}
				f.omitted[path] = true
				continue
			}
			fc = &fieldCount{counts: map[string]int{}, numeric: true}
			f.by[path] = fc
			f.order = append(f.order, path)
		}
		fc.values++
		if x, ok := numberValue(v); ok && fc.numeric {
			fc.numbers = append(fc.numbers, x)
		} else {
			fc.numeric, fc.numbers = false, nil
		}
		fc.counts[Stringify(v)]++
	}
}

// numberValue reads a JSON number however the reader kept it.
func numberValue(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil && !math.IsInf(f, 0)
	case float64:
		return x, true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case uint64:
		return float64(x), true
	}
	return 0, false
}

// summarise puts the fields' distributions into l: numeric fields by
// range and median, others by their top values.
func (f *fieldTally) summarise(l *Labels, top int) {
	if f.objects == 0 {
		return
	}
	l.Objects, l.FieldsOmitted = f.objects, len(f.omitted)
	paths := slices.Clone(f.order)
	slices.Sort(paths)
	for _, p := range paths {
		fc := f.by[p]
		fl := FieldLabels{Field: p, Values: fc.values, Missing: f.objects - fc.values, Distinct: len(fc.counts), Numeric: fc.numeric}
		if fc.numeric {
			xs := fc.numbers
			slices.Sort(xs)
			lo, hi := xs[0], xs[len(xs)-1]
			med := xs[len(xs)/2]
			if len(xs)%2 == 0 {
				med = (xs[len(xs)/2-1] + med) / 2
			}
			fl.Min, fl.Median, fl.Max = &lo, &med, &hi
		} else {
			for i, vc := range sortedCounts(fc.counts) {
				if i >= top {
					fl.Other += vc.Count
					continue
				}
				vc.Share = share(vc.Count, fc.values)
				fl.Top = append(fl.Top, vc)
			}
		}
		l.Fields = append(l.Fields, fl)
	}
}
