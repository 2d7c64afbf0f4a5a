// Package runview owns the one view of a run that the commands comparing
// runs read: a columnar, interned table of every result (case × target ×
// epoch) — its verdict per scorer, the primary scorer's failure shape and
// kind, the reply's price, latency and time to first token, a hash of the
// raw output, whether the call failed or the cache served it — with the
// run's identity and hashes, its cases and their tags, and each target's
// reported models and settings. A view is built from the store (FromStore,
// FromStoreUnscored, or a Builder fed by a caller's own pass over the
// results) or read from a baseline file (LoadBaseline; WriteBaseline writes
// one), and holds the same numbers either way. The gate, drift, diff,
// probe, the report (its rates, slices, paired comparisons and latency
// percentiles) and assay compare read it, so two commands cannot measure
// or pair one run two ways. It reads records, never calls a model, and
// must not import the store, the runner, providers, analysis, gate or
// report.
package runview

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// Failure shapes of the primary scorer, one byte per result.
const (
	ShapePass   byte = 'p'
	ShapeLoud   byte = 'l'
	ShapeSilent byte = 's'
	// ShapeNone marks a result that does not exist or has no primary score.
	ShapeNone byte = '-'
)

// View is what the gate and drift need of a run, from the store or
// from a baseline file: the run's identity and hashes, its cases and their
// tags, and for each target its temperature and the per-result verdicts,
// failure shapes, cost, latency, a hash of the raw output and whether the
// call failed. Per-result columns are indexed case × epoch: result (case i,
// epoch e) is at i*Epochs + e − 1.
type View struct {
	Run RunInfo
	// Source says where the snapshot came from: "run ID" or the baseline
	// file's path. It is not part of the file.
	Source string
	// Scorers are the scores' names, in the order first seen; Primary is
	// the one flagged primary (the headline).
	Scorers []string
	Primary string
	Epochs  int
	Cases   []Case
	Targets []*Target
	// tags holds the cases' tags by key, columnar: see Tag and SetTag.
	tags map[string]*tagColumn
	// expected and weights hold the cases' expected values and weights
	// from the store, by case; they end at the last case that has one (nil
	// when none has, as from a baseline file): see Expected and Weight.
	expected [][]byte
	weights  []*float64
}

// tagColumn is one tag key's values, interned: idx[i] is 0 when case i
// has no value for the key, else 1 + the index of its value in values.
// Cases past the end of idx have no value.
type tagColumn struct {
	values []string
	lookup map[string]int32
	idx    []int32
}

// RunInfo identifies the run a snapshot was taken of.
type RunInfo struct {
	ID       string `json:"id"`
	Spec     string `json:"spec,omitempty"`
	SpecHash string `json:"spec_hash,omitempty"`
	// DatasetHash is the dataset's content hash and FileHash its file's
	// byte hash; a run or baseline file recorded before content hashes
	// has no FileHash, and its DatasetHash is the byte hash (Dataset
	// reads both).
	DatasetHash  string    `json:"dataset_hash,omitempty"`
	FileHash     string    `json:"file_hash,omitempty"`
	PromptHash   string    `json:"prompt_hash,omitempty"`
	ScorersHash  string    `json:"scorers_hash,omitempty"`
	AssayVersion string    `json:"assay_version,omitempty"`
	GitCommit    string    `json:"git_commit,omitempty"`
	Epochs       int       `json:"epochs"`
	Scoring      int       `json:"scoring"`
	Created      time.Time `json:"created"`
	// Gate is the gate: section of the run's spec (empty when the spec had
	// none: the default rules), and GateHash its GateHash: the rules a
	// later run is gated by when this run is its baseline. Nil and "" in a
	// baseline file written before they were recorded.
	Gate     *spec.Gate `json:"gate,omitempty"`
	GateHash string     `json:"gate_hash,omitempty"`
}

// Dataset is the dataset version the run recorded.
func (r RunInfo) Dataset() dataset.Version {
	return dataset.Version{Hash: r.DatasetHash, File: r.FileHash}
}

// Case is a case's ID. Its tags are the view's (View.Tag, View.CaseTags),
// and so are its expected value and weight (View.Expected, View.Weight),
// which only a view from the store holds.
type Case struct {
	ID string
}

// Expected returns case i's expected value as the store holds it (JSON),
// nil when it has none or the view does not hold it (a baseline file).
func (s *View) Expected(i int) []byte {
	if i < len(s.expected) {
		return s.expected[i]
	}
	return nil
}

// Weight returns case i's weight, nil when it has none or the view does
// not hold it (a baseline file).
func (s *View) Weight(i int) *float64 {
	if i < len(s.weights) {
		return s.weights[i]
	}
	return nil
}

// setCaseRecord sets case i's expected value and weight (nil: none).
func (s *View) setCaseRecord(i int, expected []byte, weight *float64) {
	if expected != nil {
		s.expected = growTo(s.expected, i+1, cap(s.Cases))
		s.expected[i] = expected
	}
	if weight != nil {
		s.weights = growTo(s.weights, i+1, cap(s.Cases))
		s.weights[i] = weight
	}
}

// growTo extends col with zero values to n elements, making room for
// capacity at the first allocation.
func growTo[E any](col []E, n, capacity int) []E {
	if len(col) >= n {
		return col
	}
	if col == nil {
		col = make([]E, 0, max(n, capacity))
	}
	return append(col, make([]E, n-len(col))...)
}

// AddCase appends a case with the tags given (nil for none) and returns
// its index.
func (s *View) AddCase(id string, tags map[string]string) int {
	i := len(s.Cases)
	s.Cases = append(s.Cases, Case{ID: id})
	for k, v := range tags {
		s.SetTag(i, k, v)
	}
	return i
}

// SetTag sets case i's value of tag key.
func (s *View) SetTag(i int, key, value string) {
	if s.tags == nil {
		s.tags = map[string]*tagColumn{}
	}
	c := s.tags[key]
	if c == nil {
		c = &tagColumn{lookup: map[string]int32{}}
		s.tags[key] = c
	}
	v, ok := c.lookup[value]
	if !ok {
		c.values = append(c.values, value)
		v = int32(len(c.values))
		c.lookup[value] = v
	}
	if i >= len(c.idx) {
		c.idx = slices.Grow(c.idx, i+1-len(c.idx))[:i+1]
	}
	c.idx[i] = v
}

// Tag returns case i's value of tag key, and whether it has one.
func (s *View) Tag(i int, key string) (string, bool) {
	c := s.tags[key]
	if c == nil || i >= len(c.idx) || c.idx[i] == 0 {
		return "", false
	}
	return c.values[c.idx[i]-1], true
}

// TagColumn returns tag key's values, interned, and each case's: idx[i]
// is 0 when case i has no value for the key, else 1 + the index of its
// value in values; cases past the end of idx have none. Both slices are
// the view's own, for a reader that walks every case (the report's slices
// and clusters): they are not to be modified.
func (s *View) TagColumn(key string) (values []string, idx []int32) {
	c := s.tags[key]
	if c == nil {
		return nil, nil
	}
	return c.values, c.idx
}

// CaseTags returns case i's tags as a new map (nil when it has none).
func (s *View) CaseTags(i int) map[string]string {
	var out map[string]string
	for k := range s.tags {
		if v, ok := s.Tag(i, k); ok {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// Fingerprint is one model name and system fingerprint a provider
// reported, and how many results reported it.
type Fingerprint struct {
	Model  string `json:"model,omitempty"`
	System string `json:"system_fingerprint,omitempty"`
	Count  int    `json:"count"`
}

// FingerprintsChanged reports whether both sides reported models and the
// sets of model names and system fingerprints differ (whatever their
// counts). A side with no successful call reported nothing, which is not a
// change of model.
func FingerprintsChanged(base, cand []Fingerprint) bool {
	return len(base) > 0 && len(cand) > 0 && fpSet(base) != fpSet(cand)
}

// FingerprintList writes the distinct model names and fingerprints, sorted,
// for a message.
func FingerprintList(fps []Fingerprint) string { return fpSet(fps) }

// fpSet writes the distinct model names and fingerprints, sorted.
func fpSet(fps []Fingerprint) string {
	var parts []string
	for _, f := range fps {
		s := f.Model
		if f.System != "" {
			s += " (" + f.System + ")"
		}
		if s == "" {
			s = "none reported"
		}
		parts = append(parts, s)
	}
	slices.Sort(parts)
	parts = slices.Compact(parts)
	if len(parts) == 0 {
		return "none reported"
	}
	return strings.Join(parts, ", ")
}

// Target holds one target's results, per case × epoch.
type Target struct {
	Name         string
	Fingerprints []Fingerprint
	// Pass holds, per scorer, -1 (not scored), 0 (failed) or 1 (passed).
	Pass map[string][]int8
	// Shape is the primary scorer's failure shape (ShapePass, ShapeLoud,
	// ShapeSilent, or ShapeNone); Kind its failure kind, interned: 0 for
	// none (passed), else 1 + an index into Kinds (see KindAt, SetKind).
	Shape []byte
	Kind  []int32
	Kinds []string
	// CostUSD and LatencyMS are NaN where there is no result. CostUSD is
	// the reply's price, paid in the run or served from the cache alike
	// (record.Result.Price): a cost gate compares models, not caches.
	CostUSD   []float64
	LatencyMS []float64
	// FirstTokenMS is the time to the first token of a call that streamed,
	// NaN where the call did not stream, failed or is missing. It is nil
	// when not known: a baseline file written before assay recorded it.
	FirstTokenMS []float64
	// OutputHash is a short hash of the raw output (OutputSum; 0 where
	// there is no result): two equal hashes mean identical outputs.
	OutputHash []uint64
	// Errored marks the results whose call failed (they have no output).
	// It is nil when not known: a baseline file written before assay
	// recorded failed calls.
	Errored []bool
	// Cached marks the results the response cache served. Only the store
	// knows it: a baseline file does not hold it, and a snapshot read from
	// one has nil.
	Cached []bool
	// Temperature is the sampling temperature the run's resolved spec set
	// for the target (params.temperature), nil when the spec left it unset
	// (the provider's default applied). TemperatureKnown is false when that
	// is not known: the run carries no resolved spec, or the baseline file
	// was written before assay recorded temperatures.
	Temperature      *float64
	TemperatureKnown bool
	// ConfigHash is ConfigHash of the target's entry in the run's resolved
	// spec (provider, model, base URL, parameters …): two equal hashes
	// mean the target was configured the same. "" when not known.
	ConfigHash string
}

// KindAt returns result j's failure kind ("" for none).
func (t *Target) KindAt(j int) string {
	if t.Kind[j] == 0 {
		return ""
	}
	return t.Kinds[t.Kind[j]-1]
}

// SetKind sets result j's failure kind ("" for none).
func (t *Target) SetKind(j int, kind string) {
	if kind == "" {
		t.Kind[j] = 0
		return
	}
	at := slices.Index(t.Kinds, kind)
	if at < 0 {
		at = len(t.Kinds)
		t.Kinds = append(t.Kinds, kind)
	}
	t.Kind[j] = int32(at + 1)
}

// Has reports whether result j exists.
func (t *Target) Has(j int) bool { return !math.IsNaN(t.LatencyMS[j]) }

// Failed reports whether result j's call failed (false when the view
// does not say: a baseline file from before failures were recorded).
func (t *Target) Failed(j int) bool { return j < len(t.Errored) && t.Errored[j] }

// Behaved reports whether result j exists and its call did not fail: an
// output whose behaviour can be judged.
func (t *Target) Behaved(j int) bool { return t.Has(j) && !t.Failed(j) }

// Latencies returns the latencies (ms) of the results whose call did not
// fail, in column order: what every latency percentile is taken of.
func (t *Target) Latencies() []float64 { return t.behavedValues(t.LatencyMS) }

// FirstTokens returns the times to first token (ms) of the results whose
// call did not fail and streamed, in column order (nil when not known).
func (t *Target) FirstTokens() []float64 { return t.behavedValues(t.FirstTokenMS) }

func (t *Target) behavedValues(col []float64) []float64 {
	var out []float64
	for j, x := range col {
		if t.Behaved(j) && !math.IsNaN(x) {
			out = append(out, x)
		}
	}
	return out
}

// Target returns the named target, or nil.
func (s *View) Target(name string) *Target {
	for _, t := range s.Targets {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// TagKeys returns every tag key of the cases, sorted.
func (s *View) TagKeys() []string {
	keys := make([]string, 0, len(s.tags))
	for k, c := range s.tags {
		if slices.ContainsFunc(c.idx, func(v int32) bool { return v != 0 }) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// OutputHash is the short hash of a raw output kept in snapshots: the first
// 8 bytes of its SHA-256, in hex.
func OutputHash(raw string) string {
	h := sha256.Sum256([]byte(raw))
	return hex.EncodeToString(h[:8])
}

// OutputSum is OutputHash as a number, the form a snapshot holds: the
// first 8 bytes of the SHA-256, big-endian (so its 16 hex digits are
// OutputHash).
func OutputSum(raw string) uint64 {
	h := sha256.Sum256([]byte(raw))
	return binary.BigEndian.Uint64(h[:8])
}

// NewTarget allocates a target's columns for n results.
func NewTarget(name string, scorers []string, n int) *Target {
	t := &Target{Name: name, Pass: map[string][]int8{}, Shape: make([]byte, n), Kind: make([]int32, n),
		CostUSD: make([]float64, n), LatencyMS: make([]float64, n), FirstTokenMS: make([]float64, n), OutputHash: make([]uint64, n),
		Errored: make([]bool, n), Cached: make([]bool, n)}
	for _, sc := range scorers {
		t.Pass[sc] = newPass(n)
	}
	for j := range n {
		t.Shape[j] = ShapeNone
		t.CostUSD[j], t.LatencyMS[j], t.FirstTokenMS[j] = math.NaN(), math.NaN(), math.NaN()
	}
	return t
}

func newPass(n int) []int8 {
	p := make([]int8, n)
	for j := range p {
		p[j] = -1
	}
	return p
}

// FromStore takes a snapshot of a stored run, under its latest scoring.
// Its memory is a few dozen bytes per result. A run with no scores is an
// error: there is nothing to gate.
func FromStore(ctx context.Context, st record.Reader, run *record.Run) (*View, error) {
	return FromStoreWith(ctx, st, run, Options{})
}

// FromStoreUnscored is FromStore that also takes a run with no scores (its
// verdicts all "not scored"), for a caller that compares outputs as well
// as verdicts (drift).
func FromStoreUnscored(ctx context.Context, st record.Reader, run *record.Run) (*View, error) {
	return FromStoreWith(ctx, st, run, Options{Unscored: true})
}

// Options choose what FromStoreWith reads of a run.
type Options struct {
	// Unscored takes a run with no scores (its verdicts all "not scored").
	Unscored bool
	// VerdictsOnly reads only what pairing verdicts by case ID needs: the
	// cases are numbered as their results come, without their tags,
	// expected values or weights, and outputs are not hashed (OutputHash
	// is zero). The probe reads runs so.
	VerdictsOnly bool
	// ScoresWithoutResults keeps the verdicts of scores whose result is not
	// in the view (a score stored for a result that is not: Has is false
	// where they sit), which are otherwise dropped as measuring nothing.
	// The report and assay compare count every stored score so. With it
	// set, a Builder's results and scores may arrive in any order, and from
	// two goroutines at once (Builder.AddResult, Builder.AddScore).
	ScoresWithoutResults bool
	// VerdictsAndTimings keeps, of the per-result columns, only the
	// verdicts (Pass) and what Has, Behaved, Latencies and FirstTokens
	// read (LatencyMS, FirstTokenMS, Errored): CostUSD, Shape, Kind,
	// OutputHash and Cached are nil. The report reads a run so: its rates,
	// slices, paired comparisons and latency percentiles are the view's,
	// in about 17 bytes per result plus one per scorer.
	VerdictsAndTimings bool
}

// FromStoreWith is FromStore with options.
func FromStoreWith(ctx context.Context, st record.Reader, run *record.Run, o Options) (*View, error) {
	scoring, err := st.LatestScoring(ctx, run.ID)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", run.ID, err)
	}
	if scoring == 0 && !o.Unscored {
		return nil, fmt.Errorf("run %s has no scores: nothing to gate (run it to completion, or rescore it)", run.ID)
	}
	b := NewBuilder(run, scoring, o)
	if !o.VerdictsOnly {
		if err := st.Cases(ctx, run.ID, func(c record.Case) error {
			b.AddCase(&c)
			return nil
		}); err != nil {
			return nil, err
		}
	}
	if err := st.Results(ctx, run.ID, func(r record.Result) error {
		b.AddResult(&r)
		return nil
	}); err != nil {
		return nil, err
	}
	if scoring > 0 {
		if err := st.Scores(ctx, run.ID, scoring, func(sc record.Score) error {
			b.AddScore(&sc)
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return b.View(), nil
}

// Builder makes a run's view from its records, for a caller that streams
// them itself (FromStore is a Builder fed from the store): its cases first,
// then its results, then the scores of one scoring (with
// Options.ScoresWithoutResults, results and scores in any order). Its
// methods may be called from several goroutines at once.
type Builder struct {
	mu  sync.Mutex
	b   builder
	run *record.Run
}

// NewBuilder starts the view of run under scoring (0: no scores), keeping
// what o asks (Options.Unscored is FromStoreWith's alone; VerdictsOnly here
// leaves OutputHash zero, for a caller that does not compare outputs and
// so skips hashing every one).
func NewBuilder(run *record.Run, scoring int, o Options) *Builder {
	s := &View{
		Run: RunInfo{ID: run.ID, Spec: run.Spec, SpecHash: run.SpecHash, DatasetHash: run.DatasetHash, FileHash: run.FileHash,
			PromptHash: run.PromptHash, ScorersHash: run.ScorersHash, AssayVersion: run.AssayVersion,
			GitCommit: run.GitCommit, Epochs: run.Epochs, Scoring: scoring, Created: run.Started.UTC()},
		Source: "run " + run.ID,
		Epochs: max(run.Epochs, 1),
	}
	// A spec whose gate section does not read leaves the rules unknown:
	// the gate then says so rather than guessing.
	if g, err := GateOfConfig(run.Config); err == nil && g != nil {
		s.Run.Gate, s.Run.GateHash = g, GateHash(g)
	}
	b := &Builder{b: builder{s: s, caseIdx: make(map[string]int, max(run.Cases, 0)), fps: map[string]map[[2]string]int{},
		o: o}, run: run}
	s.Cases = make([]Case, 0, max(run.Cases, 0))
	for _, name := range run.Targets {
		b.b.target(name).reserve(max(run.Cases, 0) * s.Epochs)
	}
	return b
}

// AddCase adds a case (once: a case seen again is ignored) with its tags,
// expected value and weight.
func (b *Builder) AddCase(c *record.Case) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, seen := b.b.caseIdx[c.ID]; seen {
		return
	}
	s := b.b.s
	i := b.b.caseOf(c.ID)
	for k, v := range c.Tags {
		s.SetTag(i, k, v)
	}
	s.setCaseRecord(i, c.Expected, c.Weight)
}

// AddResult places a result's measurements: its price, latency and time
// to first token (as a baseline file holds them: Latency, Cost,
// FirstToken), whether it failed or the cache served it, its output's
// hash and the model that answered.
func (b *Builder) AddResult(r *record.Result) {
	var sum uint64
	if !b.b.o.VerdictsOnly && !b.b.o.VerdictsAndTimings {
		sum = OutputSum(r.Raw) // outside the lock: the costly part
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	t, j := b.b.slot(r.Target, r.CaseID, r.Epoch)
	t.LatencyMS[j], t.FirstTokenMS[j], t.Errored[j] = Latency(r), FirstToken(r), r.ErrorKind != ""
	if !b.b.o.VerdictsAndTimings {
		t.CostUSD[j], t.OutputHash[j], t.Cached[j] = Cost(r), sum, r.FromCache
	}
	// A failed call reports no model: it says nothing of which model
	// answered, so it is not counted as one.
	if r.ErrorKind == "" {
		b.b.fps[r.Target][[2]string{r.Model, r.Fingerprint}]++
	}
}

// Latency is a result's latency as a view holds it: the measurement made
// usable (a negative or non-finite one is 0) and kept to the significant
// digits a baseline file writes, so a run and its exported baseline hold
// the same number. Every latency percentile of assay (the report's, the
// gate's) is taken of these values.
func Latency(r *record.Result) float64 { return quantize(clean(r.LatencyMS), latencyDigits) }

// Cost is a result's price (record.Result.Price: paid in the run or served
// from the cache alike) as a view holds it, to the digits a baseline file
// writes.
func Cost(r *record.Result) float64 { return quantize(clean(r.Price()), costDigits) }

// FirstToken is a result's time to the first token as a view holds it:
// NaN when the call failed or did not stream, else as Latency.
func FirstToken(r *record.Result) float64 {
	if r.ErrorKind != "" || !(r.FirstTokenMS > 0) {
		return math.NaN()
	}
	return quantize(clean(r.FirstTokenMS), latencyDigits)
}

// AddScore places a score's verdict (a score of a result not added is
// dropped: nothing was measured; unless Options.ScoresWithoutResults); the
// primary score also sets the result's failure shape and kind. It returns
// the index of the score's case in the view.
func (b *Builder) AddScore(sc *record.Score) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.b.s
	t, j := b.b.slot(sc.Target, sc.CaseID, sc.Epoch)
	i := j / s.Epochs
	if !t.Has(j) && !b.b.o.ScoresWithoutResults {
		return i // a score without a result: nothing was measured
	}
	p, ok := t.Pass[sc.Scorer]
	if !ok {
		s.Scorers = append(s.Scorers, sc.Scorer)
		for _, tt := range s.Targets {
			tt.Pass[sc.Scorer] = slices.Grow(newPass(len(tt.LatencyMS)), cap(tt.LatencyMS)-len(tt.LatencyMS))
		}
		p = t.Pass[sc.Scorer]
	}
	p[j] = int8(b2i(sc.Pass))
	if sc.Primary {
		s.Primary = sc.Scorer
		if t.Shape != nil {
			t.Shape[j] = shapeByte(sc.Shape, sc.Pass)
			t.Kind[j] = 0
			if !sc.Pass {
				t.SetKind(j, sc.Kind)
			}
		}
	}
	return i
}

// View finishes the view: every column sized to cases × epochs, and each
// target's reported models, temperature and configuration hash set. The
// Builder is not used after.
func (b *Builder) View() *View {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.b.s
	if s.Primary == "" && len(s.Scorers) > 0 {
		s.Primary = s.Scorers[0]
	}
	b.b.finish(b.run)
	b.b.caseIdx = nil // the view does not need it: let it go before the Builder does
	return s
}

// finish sizes every column to cases × epochs and sets each target's
// fingerprints, temperature and configuration hash.
func (b *builder) finish(run *record.Run) {
	s := b.s
	s.Run.Epochs = s.Epochs
	n := len(s.Cases) * s.Epochs
	settings, known := targetSettings(run.Config)
	for _, t := range s.Targets {
		t.grow(n)
		for fp, count := range b.fps[t.Name] {
			t.Fingerprints = append(t.Fingerprints, Fingerprint{Model: fp[0], System: fp[1], Count: count})
		}
		sortFingerprints(t.Fingerprints)
		set := settings[t.Name]
		t.Temperature, t.TemperatureKnown, t.ConfigHash = set.temperature, known, set.configHash
	}
}

// targetSetting is what a snapshot keeps of a target's entry in the run's
// resolved spec.
type targetSetting struct {
	temperature *float64
	configHash  string
}

// targetSettings reads each target's params.temperature (nil where the
// spec left it unset) and configuration hash from a run's resolved spec
// (record.Run.Config, a spec.Spec as JSON). known is false when there is no
// resolved spec to read.
func targetSettings(config []byte) (map[string]targetSetting, bool) {
	out := map[string]targetSetting{}
	var sp struct {
		Targets []json.RawMessage `json:"targets"`
	}
	if len(config) == 0 || json.Unmarshal(config, &sp) != nil {
		return out, false
	}
	for _, raw := range sp.Targets {
		var t struct {
			Name   string      `json:"name"`
			Params spec.Params `json:"params"`
		}
		if json.Unmarshal(raw, &t) != nil {
			return map[string]targetSetting{}, false
		}
		out[t.Name] = targetSetting{temperature: t.Params.Temperature, configHash: ConfigHash(raw)}
	}
	return out, true
}

// ConfigHash is the short hash of a target's entry in a resolved spec
// (JSON) kept in snapshots: the first 8 bytes of the SHA-256 of its
// canonical JSON (keys sorted, no spaces), in hex; "" when it is not JSON.
func ConfigHash(target json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(target))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return ""
	}
	canon, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return OutputHash(string(canon))
}

// builder places a run's streamed results and scores into a snapshot's
// columns, growing them as cases (or, rarely, epochs) appear.
type builder struct {
	s       *View
	caseIdx map[string]int
	fps     map[string]map[[2]string]int
	o       Options // what the view keeps
}

func (b *builder) caseOf(id string) int {
	if i, ok := b.caseIdx[id]; ok {
		return i
	}
	b.caseIdx[id] = len(b.s.Cases)
	b.s.Cases = append(b.s.Cases, Case{ID: id})
	return len(b.s.Cases) - 1
}

func (b *builder) target(name string) *Target {
	if t := b.s.Target(name); t != nil {
		return t
	}
	t := NewTarget(name, b.s.Scorers, len(b.s.Cases)*b.s.Epochs)
	if b.o.VerdictsAndTimings {
		t.dropMeasures()
	}
	b.s.Targets = append(b.s.Targets, t)
	b.fps[name] = map[[2]string]int{}
	return t
}

// slot returns the target and the column index of a result.
func (b *builder) slot(target, caseID string, epoch int) (*Target, int) {
	epoch = max(epoch, 1)
	if epoch > b.s.Epochs {
		b.relayout(epoch)
	}
	i := b.caseOf(caseID)
	t := b.target(target)
	j := i*b.s.Epochs + epoch - 1
	t.grow(j + 1)
	return t, j
}

// relayout re-lays every column for more epochs per case.
func (b *builder) relayout(epochs int) {
	old := b.s.Epochs
	for _, t := range b.s.Targets {
		cases := (len(t.LatencyMS) + old - 1) / old
		nt := NewTarget(t.Name, nil, cases*epochs)
		if b.o.VerdictsAndTimings {
			nt.dropMeasures()
		}
		nt.Kinds = t.Kinds
		for sc := range t.Pass {
			nt.Pass[sc] = newPass(cases * epochs)
		}
		for j := range t.LatencyMS {
			k := (j/old)*epochs + j%old
			nt.LatencyMS[k], nt.Errored[k] = t.LatencyMS[j], t.Errored[j]
			if !b.o.VerdictsAndTimings {
				nt.Shape[k], nt.Kind[k], nt.CostUSD[k], nt.OutputHash[k], nt.Cached[k] = t.Shape[j], t.Kind[j], t.CostUSD[j], t.OutputHash[j], t.Cached[j]
			}
			if t.FirstTokenMS != nil {
				nt.FirstTokenMS[k] = t.FirstTokenMS[j]
			}
			for sc, p := range t.Pass {
				nt.Pass[sc][k] = p[j]
			}
		}
		*t = *nt
	}
	b.s.Epochs = epochs
}

// reserve makes room in the columns for n results, so that a view built
// result by result for a run of known size grows no column twice.
func (t *Target) reserve(n int) {
	t.LatencyMS, t.FirstTokenMS, t.Errored = slices.Grow(t.LatencyMS, n), slices.Grow(t.FirstTokenMS, n), slices.Grow(t.Errored, n)
	for sc, p := range t.Pass {
		t.Pass[sc] = slices.Grow(p, n)
	}
	if t.Shape == nil {
		return // verdicts and timings only
	}
	t.Shape, t.Kind = slices.Grow(t.Shape, n), slices.Grow(t.Kind, n)
	t.CostUSD, t.OutputHash, t.Cached = slices.Grow(t.CostUSD, n), slices.Grow(t.OutputHash, n), slices.Grow(t.Cached, n)
}

// dropMeasures leaves out the columns a view of verdicts and timings does
// not keep (Options.VerdictsAndTimings).
func (t *Target) dropMeasures() {
	t.Shape, t.Kind, t.CostUSD, t.OutputHash, t.Cached = nil, nil, nil, nil, nil
}

// grow extends the columns to n results.
func (t *Target) grow(n int) {
	for len(t.LatencyMS) < n {
		if t.Shape != nil {
			t.Shape = append(t.Shape, ShapeNone)
			t.Kind = append(t.Kind, 0)
			t.CostUSD = append(t.CostUSD, math.NaN())
			t.OutputHash = append(t.OutputHash, 0)
			t.Cached = append(t.Cached, false)
		}
		t.LatencyMS = append(t.LatencyMS, math.NaN())
		if t.FirstTokenMS != nil {
			t.FirstTokenMS = append(t.FirstTokenMS, math.NaN())
		}
		t.Errored = append(t.Errored, false)
		for sc, p := range t.Pass {
			t.Pass[sc] = append(p, -1)
		}
	}
}

// Significant digits kept of cost (USD) and latency (ms): a snapshot
// from the store holds exactly what its baseline file holds, so a run and
// its exported baseline gate the same way.
const (
	costDigits    = 7
	latencyDigits = 6
)

// quantize rounds x to digits significant digits, through the same decimal
// text the baseline file holds.
func quantize(x float64, digits int) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	v, err := strconv.ParseFloat(strconv.FormatFloat(x, 'g', digits, 64), 64)
	if err != nil {
		return x
	}
	return v
}

// clean makes a stored measurement usable: negative or non-finite values
// (which no provider should report) count as 0, so "no result" stays the
// only NaN.
func clean(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
		return 0
	}
	return x
}

func shapeByte(shape string, pass bool) byte {
	switch {
	case pass || shape == "pass":
		return ShapePass
	case shape == "silent":
		return ShapeSilent
	default:
		// An error, a refusal, an unparseable output: loud. Unknown shapes
		// count as loud, as the report counts unscored results.
		return ShapeLoud
	}
}

func sortFingerprints(fps []Fingerprint) {
	slices.SortFunc(fps, func(a, b Fingerprint) int {
		if a.Model != b.Model {
			if a.Model < b.Model {
				return -1
			}
			return 1
		}
		if a.System < b.System {
			return -1
		}
		if a.System > b.System {
			return 1
		}
		return 0
	})
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
