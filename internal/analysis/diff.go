package analysis

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/runview"
	"github.com/assay-eval/assay/internal/spec"
)

// maxIDsShown bounds the case IDs a diff names in each list (added,
// removed, changed); the counts are always complete.
const maxIDsShown = 10

// maxSpecValue bounds a spec value (a prompt, a schema) shown in a diff.
const maxSpecValue = 600

// RunDiff says what changed between two runs: the versions that name what
// was measured, the spec, the cases, the models that answered, and the cases
// whose primary verdict flipped. It is information, not a verdict.
type RunDiff struct {
	Before RunInfo `json:"before"`
	After  RunInfo `json:"after"`
	// Versions lists spec, prompt, dataset and scorer hashes, the git
	// commit and the assay version, each marked same or changed.
	Versions []VersionChange `json:"versions"`
	// Spec lists the changed fields of the resolved spec; nil when either
	// run does not carry its resolved spec.
	Spec *SpecDiff `json:"spec,omitempty"`
	// Cases compares the cases the runs measured, by ID.
	Cases CaseDiff `json:"cases"`
	// TargetsAdded and TargetsRemoved are targets run in one run only.
	TargetsAdded   []string `json:"targets_added,omitempty"`
	TargetsRemoved []string `json:"targets_removed,omitempty"`
	// Models lists, per target, the models and fingerprints that answered.
	Models []TargetModels `json:"models"`
	// Flips lists, per target both runs ran, the cases whose primary
	// verdict flipped (paired by case and epoch).
	Flips    []TargetFlips `json:"flips"`
	Warnings []string      `json:"warnings,omitempty"`
}

// VersionChange is one versioned property of two runs.
type VersionChange struct {
	Name   string `json:"name"`
	Before string `json:"before"`
	After  string `json:"after"`
	Same   bool   `json:"same"`
}

// CaseDiff compares the cases two runs measured, by ID. A shared case is
// Changed when its expected value or tags differ between the runs.
type CaseDiff struct {
	Before  int `json:"before"`
	After   int `json:"after"`
	Shared  int `json:"shared"`
	Added   int `json:"added"`
	Removed int `json:"removed"`
	Changed int `json:"changed"`
	// The first few IDs of each kind, in dataset order.
	AddedIDs   []string `json:"added_ids,omitempty"`
	RemovedIDs []string `json:"removed_ids,omitempty"`
	ChangedIDs []string `json:"changed_ids,omitempty"`
}

// SpecDiff lists the fields of the resolved spec that differ. Values are
// JSON text ("" when the field is absent), long ones cut.
type SpecDiff struct {
	TargetsAdded   []string       `json:"targets_added,omitempty"`
	TargetsRemoved []string       `json:"targets_removed,omitempty"`
	Targets        []TargetChange `json:"targets_changed,omitempty"`
	Prompt         []FieldChange  `json:"prompt,omitempty"`
	// Scorers covers the definition of correct: the output parser, the
	// scorers, refusal detection, error costs and how primaries combine.
	Scorers []FieldChange `json:"scorers,omitempty"`
	Dataset []FieldChange `json:"dataset,omitempty"`
	Other   []FieldChange `json:"other,omitempty"`
	// Files lists the files read for the prompt or the scorers (a JSON
	// schema, a file it $refs, a file:// rubric or prompt) whose content
	// changed, or that only one run read, by path relative to the spec.
	Files []spec.FileChange `json:"files,omitempty"`
}

// Empty reports whether no field changed.
func (d *SpecDiff) Empty() bool {
	return len(d.TargetsAdded)+len(d.TargetsRemoved)+len(d.Targets)+len(d.Prompt)+len(d.Scorers)+len(d.Dataset)+len(d.Other)+len(d.Files) == 0
}

// TargetChange lists the changed fields of one target defined in both specs
// (field paths relative to the target: "model", "params.temperature").
type TargetChange struct {
	Name    string        `json:"name"`
	Changes []FieldChange `json:"changes"`
}

// FieldChange is one changed field: its dotted path and both values as JSON.
// A prompt text changed on both sides also carries its line diff (Lines,
// bounded; LinesOmitted counts the changed lines past the bound).
type FieldChange struct {
	Field        string     `json:"field"`
	Before       string     `json:"before"`
	After        string     `json:"after"`
	Lines        []DiffLine `json:"lines,omitempty"`
	LinesOmitted int        `json:"lines_omitted,omitempty"`
}

// ModelCount is one model/fingerprint pair a provider reported serving, and
// how many successful results reported it.
type ModelCount struct {
	Model       string `json:"model"`
	Fingerprint string `json:"fingerprint,omitempty"`
	Results     int    `json:"results"`
}

// TargetModels lists the models and fingerprints one target's successful
// results reported in each run. Changed is set when the target ran in both
// runs and the sets of model/fingerprint pairs differ.
type TargetModels struct {
	Target  string       `json:"target"`
	Before  []ModelCount `json:"before"`
	After   []ModelCount `json:"after"`
	Changed bool         `json:"changed"`
}

// TargetFlips counts, for one target both runs ran, the paired (case,
// epoch) results whose primary verdict flipped, and lists the first few.
type TargetFlips struct {
	Target string `json:"target"`
	// Scorer is the primary scorer (of the after run).
	Scorer     string `json:"scorer"`
	Paired     int    `json:"paired"`
	PassToFail int    `json:"pass_to_fail"`
	FailToPass int    `json:"fail_to_pass"`
	// Cases are the flips listed (pass→fail first, in dataset order), at
	// most the diff's limit; Unlisted counts the rest.
	Cases    []FlippedCase `json:"cases"`
	Unlisted int           `json:"unlisted"`
}

// FlippedCase is one case whose primary verdict flipped, with both outputs.
// Outputs are hostile: every renderer escapes them.
type FlippedCase struct {
	CaseID    string `json:"case_id"`
	Epoch     int    `json:"epoch"`
	Direction string `json:"direction"` // pass_to_fail | fail_to_pass
	Expected  string `json:"expected,omitempty"`
	Before    string `json:"before"` // the output (or the call's error), cut at 4,000 bytes
	After     string `json:"after"`
}

// Flip directions.
const (
	PassToFail = "pass_to_fail"
	FailToPass = "fail_to_pass"
)

// DiffOptions tune DiffRuns.
type DiffOptions struct {
	// Limit is how many flipped cases to list per target (default 20; a
	// negative limit lists none).
	Limit int
	// Target restricts models and flips to one target ("" = all).
	Target string
}

// DiffRuns compares two runs and says what changed between them.
func DiffRuns(ctx context.Context, st record.Reader, before, after *record.Run, o DiffOptions) (*RunDiff, error) {
	if o.Limit == 0 {
		o.Limit = 20
	}
	if o.Target != "" && !slices.Contains(before.Targets, o.Target) && !slices.Contains(after.Targets, o.Target) {
		return nil, fmt.Errorf("target %q is in neither run (%s has %s; %s has %s)", o.Target,
			before.ID, strings.Join(before.Targets, ", "), after.ID, strings.Join(after.Targets, ", "))
	}
	d := &RunDiff{Before: runInfo(before, 0), After: runInfo(after, 0)}
	d.Warnings = append(d.Warnings, incompleteWarnings(before, after)...)
	d.Versions = versionChanges(before, after)
	if n := dataset.CompareVersions("run "+before.ID, runDataset(before), "run "+after.ID, runDataset(after)).Note; n != "" {
		d.Warnings = append(d.Warnings, n)
	}
	if len(before.Config) > 0 && len(after.Config) > 0 {
		sd, err := diffSpecs(before.Config, after.Config)
		if err != nil {
			d.Warnings = append(d.Warnings, "the resolved specs could not be compared: "+err.Error())
		} else {
			d.Spec = sd
		}
	} else {
		d.Warnings = append(d.Warnings, "a run does not carry its resolved spec: spec fields are not compared, only the hashes")
	}
	for _, n := range after.Targets {
		if !slices.Contains(before.Targets, n) {
			d.TargetsAdded = append(d.TargetsAdded, n)
		}
	}
	for _, n := range before.Targets {
		if !slices.Contains(after.Targets, n) {
			d.TargetsRemoved = append(d.TargetsRemoved, n)
		}
	}

	ci := newCaseIndex()
	cd, err := readCases(ctx, st, before.ID, after.ID, ci)
	if err != nil {
		return nil, err
	}
	d.Cases = cd
	want := func(t string) bool { return o.Target == "" || t == o.Target }
	// Each run is read as its view (runview), the one the gate and drift
	// read: primary verdicts, failed calls, reported models.
	b, err := newDiffSide(ctx, st, before, ci)
	if err != nil {
		return nil, err
	}
	a, err := newDiffSide(ctx, st, after, ci)
	if err != nil {
		return nil, err
	}
	if b.v.Primary != "" && a.v.Primary != "" && b.v.Primary != a.v.Primary {
		d.Warnings = append(d.Warnings, fmt.Sprintf("the primary scorer differs (%q before, %q after): a flip may be a change in the definition of correct", b.v.Primary, a.v.Primary))
	}
	for _, name := range unionTargets(before, after) {
		if !want(name) {
			continue
		}
		tm := TargetModels{Target: name, Before: b.models(name), After: a.models(name)}
		tm.Changed = slices.Contains(before.Targets, name) && slices.Contains(after.Targets, name) &&
			modelsChanged(tm.Before, tm.After)
		d.Models = append(d.Models, tm)
	}
	for _, name := range after.Targets {
		if !want(name) || !slices.Contains(before.Targets, name) {
			continue
		}
		tf, err := flips(ctx, st, before, after, name, b, a, ci, o.Limit)
		if err != nil {
			return nil, err
		}
		tf.Scorer = a.v.Primary
		d.Flips = append(d.Flips, tf)
	}
	if cd.Changed > 0 {
		d.Warnings = append(d.Warnings, fmt.Sprintf("%s kept their ID but changed their expected value or tags: their flips may come from the case, not the model",
			countNoun(cd.Changed, "shared case")))
	}
	return d, nil
}

// incompleteWarnings says when a run did not complete: only its stored
// results can be paired.
func incompleteWarnings(runs ...*record.Run) []string {
	var ws []string
	for _, r := range runs {
		if r.Status != record.StatusComplete {
			ws = append(ws, fmt.Sprintf("run %s is %s, not complete: only its stored results are paired", r.ID, r.Status))
		}
	}
	return ws
}

func unionTargets(before, after *record.Run) []string {
	out := slices.Clone(after.Targets)
	for _, n := range before.Targets {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

func versionChanges(before, after *record.Run) []VersionChange {
	rows := []struct{ name, b, a string }{
		{"spec_hash", before.SpecHash, after.SpecHash},
		{"prompt_hash", before.PromptHash, after.PromptHash},
		{"scorers_hash", before.ScorersHash, after.ScorersHash},
		{"git_commit", before.GitCommit, after.GitCommit},
		{"assay_version", before.AssayVersion, after.AssayVersion},
	}
	out := make([]VersionChange, len(rows))
	for i, r := range rows {
		out[i] = VersionChange{Name: r.name, Before: r.b, After: r.a, Same: r.b == r.a}
	}
	// The dataset by content (or by bytes for a run made before content
	// hashes), after the prompt as before, then its file's bytes.
	bd, ad := runDataset(before), runDataset(after)
	rows2 := datasetRows(dataset.CompareVersions("before", bd, "after", ad), bd, ad)
	return slices.Insert(out, 2, rows2...)
}

// readCases numbers both runs' cases in ci (the before run's first, in
// dataset order) and compares them by ID.
func readCases(ctx context.Context, st record.Reader, beforeID, afterID string, ci *caseIndex) (CaseDiff, error) {
	var d CaseDiff
	seen := map[string][16]byte{}
	var order []string
	if err := st.Cases(ctx, beforeID, func(c record.Case) error {
		if _, dup := seen[c.ID]; dup {
			return nil
		}
		seen[c.ID] = caseDigest(c)
		order = append(order, c.ID)
		ci.add(c.ID, nil)
		d.Before++
		return nil
	}); err != nil {
		return d, err
	}
	inAfter := map[string]bool{}
	if err := st.Cases(ctx, afterID, func(c record.Case) error {
		if inAfter[c.ID] {
			return nil
		}
		inAfter[c.ID] = true
		ci.add(c.ID, nil)
		d.After++
		dg, ok := seen[c.ID]
		switch {
		case !ok:
			d.Added++
			if len(d.AddedIDs) < maxIDsShown {
				d.AddedIDs = append(d.AddedIDs, c.ID)
			}
		case dg != caseDigest(c):
			d.Shared++
			d.Changed++
			if len(d.ChangedIDs) < maxIDsShown {
				d.ChangedIDs = append(d.ChangedIDs, c.ID)
			}
		default:
			d.Shared++
		}
		return nil
	}); err != nil {
		return d, err
	}
	for _, id := range order {
		if !inAfter[id] {
			d.Removed++
			if len(d.RemovedIDs) < maxIDsShown {
				d.RemovedIDs = append(d.RemovedIDs, id)
			}
		}
	}
	return d, nil
}

// diffCases compares two runs' cases by ID.
func diffCases(ctx context.Context, st record.Reader, beforeID, afterID string) (CaseDiff, error) {
	return readCases(ctx, st, beforeID, afterID, newCaseIndex())
}

// caseDigest identifies what a case asks of a model as far as the store
// knows it: its expected value and tags (its prompt variables are not
// stored; the dataset hash covers them).
func caseDigest(c record.Case) [16]byte {
	h := sha256.New()
	exp := c.Expected
	if len(exp) == 0 {
		exp = []byte("null")
	}
	h.Write(exp)
	keys := make([]string, 0, len(c.Tags))
	for k := range c.Tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(h, "\x00%q=%q", k, c.Tags[k])
	}
	if c.Weight != nil {
		fmt.Fprintf(h, "\x00weight=%v", *c.Weight)
	}
	var out [16]byte
	copy(out[:], h.Sum(nil))
	return out
}

// diffSide is one run of a diff: its view (runview.FromStoreUnscored) and
// where each of its cases is in it.
type diffSide struct {
	v  *runview.View
	at map[string]int // case ID → index in v.Cases
}

// newDiffSide reads a run's view under its latest scoring and numbers its
// cases in ci (after those ci already has), as the run lists them.
func newDiffSide(ctx context.Context, st record.Reader, run *record.Run, ci *caseIndex) (*diffSide, error) {
	v, err := runview.FromStoreUnscored(ctx, st, run)
	if err != nil {
		return nil, err
	}
	s := &diffSide{v: v, at: make(map[string]int, len(v.Cases))}
	for i, c := range v.Cases {
		s.at[c.ID] = i
		ci.add(c.ID, nil)
	}
	return s, nil
}

// verdict is target name's primary verdict on case id, epoch e (-1 when
// there is none).
func (s *diffSide) verdict(name, id string, e int) int8 {
	t := s.v.Target(name)
	i, ok := s.at[id]
	if t == nil || !ok || e > s.v.Epochs {
		return -1
	}
	p := t.Pass[s.v.Primary]
	if j := i*s.v.Epochs + e - 1; j < len(p) {
		return p[j]
	}
	return -1
}

// models lists the model/fingerprint pairs a target's successful results
// reported, most results first.
func (s *diffSide) models(name string) []ModelCount {
	out := []ModelCount{}
	t := s.v.Target(name)
	if t == nil {
		return out
	}
	for _, f := range t.Fingerprints {
		out = append(out, ModelCount{Model: f.Model, Fingerprint: f.System, Results: f.Count})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Results != out[j].Results {
			return out[i].Results > out[j].Results
		}
		if out[i].Model != out[j].Model {
			return out[i].Model < out[j].Model
		}
		return out[i].Fingerprint < out[j].Fingerprint
	})
	return out
}

// modelsChanged reports whether both runs reported models and the sets of
// model/fingerprint pairs differ (whatever their counts): the gate's rule,
// so diff, drift, gate and report agree on what a change of model is.
func modelsChanged(a, b []ModelCount) bool {
	return runview.FingerprintsChanged(asFingerprints(a), asFingerprints(b))
}

func asFingerprints(ms []ModelCount) []runview.Fingerprint {
	out := make([]runview.Fingerprint, len(ms))
	for i, m := range ms {
		out[i] = runview.Fingerprint{Model: m.Model, System: m.Fingerprint, Count: m.Results}
	}
	return out
}

// pairCases calls fn for every case of ci and epoch up to epochs, in
// dataset order (the before run's cases first).
func pairCases(ci *caseIndex, epochs int, fn func(i, e int)) {
	for i := range ci.len() {
		for e := 1; e <= epochs; e++ {
			fn(i, e)
		}
	}
}

// flips counts a target's verdict flips and lists the first limit of them
// (pass→fail before fail→pass) with both outputs and the expected value.
func flips(ctx context.Context, st record.Reader, before, after *record.Run, name string, b, a *diffSide, ci *caseIndex, limit int) (TargetFlips, error) {
	tf := TargetFlips{Target: name, Cases: []FlippedCase{}}
	type flip struct{ i, e int }
	var down, up []flip
	epochs := min(b.v.Epochs, a.v.Epochs)
	pairCases(ci, epochs, func(i, e int) {
		vb, va := b.verdict(name, ci.id(i), e), a.verdict(name, ci.id(i), e)
		if vb < 0 || va < 0 {
			return
		}
		tf.Paired++
		switch {
		case vb == 1 && va == 0:
			tf.PassToFail++
			if len(down) < limit {
				down = append(down, flip{i, e})
			}
		case vb == 0 && va == 1:
			tf.FailToPass++
			if len(up) < limit {
				up = append(up, flip{i, e})
			}
		}
	})
	list := append(down, up...)
	if len(list) > max(limit, 0) {
		list = list[:max(limit, 0)]
	}
	tf.Unlisted = tf.PassToFail + tf.FailToPass - len(list)
	if len(list) == 0 {
		return tf, nil
	}
	byCase := map[string][]int{}
	for k, f := range list {
		fc := FlippedCase{CaseID: ci.id(f.i), Epoch: f.e, Direction: FailToPass}
		if k < len(down) {
			fc.Direction = PassToFail
		}
		var err error
		if fc.Before, err = shownOutput(ctx, st, before.ID, record.Key{CaseID: fc.CaseID, Target: name, Epoch: f.e}); err != nil {
			return tf, err
		}
		if fc.After, err = shownOutput(ctx, st, after.ID, record.Key{CaseID: fc.CaseID, Target: name, Epoch: f.e}); err != nil {
			return tf, err
		}
		byCase[fc.CaseID] = append(byCase[fc.CaseID], len(tf.Cases))
		tf.Cases = append(tf.Cases, fc)
	}
	err := st.Cases(ctx, after.ID, func(c record.Case) error {
		for _, k := range byCase[c.ID] {
			tf.Cases[k].Expected = expectedText(c.Expected)
		}
		return nil
	})
	return tf, err
}

// shownOutput is a stored result's output for display: the raw text, or
// the call's error when it failed, cut at maxRawShown bytes.
func shownOutput(ctx context.Context, st record.Reader, runID string, k record.Key) (string, error) {
	r, err := st.Result(ctx, runID, k)
	if errors.Is(err, record.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	raw := ReplyText(r.Raw, r.ToolCalls)
	if r.ErrorKind != "" && raw == "" {
		raw = "(" + r.ErrorKind + ") " + r.Error
	}
	return cut(raw, maxRawShown), nil
}

// cut shortens s to at most n bytes on a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// expectedText is a stored expected value as text: a JSON string unquoted,
// anything else as JSON, nothing for null.
func expectedText(b []byte) string {
	var s string
	if json.Unmarshal(b, &s) == nil {
		return s
	}
	if e := string(b); e != "null" {
		return e
	}
	return ""
}

// diffSpecs compares two resolved specs (JSON) field by field. Lists of
// named objects (targets, scorers) are matched by name, so reordering them
// is no change.
func diffSpecs(before, after []byte) (*SpecDiff, error) {
	fb, tb, err := flattenSpec(before)
	if err != nil {
		return nil, fmt.Errorf("before: %w", err)
	}
	fa, ta, err := flattenSpec(after)
	if err != nil {
		return nil, fmt.Errorf("after: %w", err)
	}
	d := &SpecDiff{}
	for _, n := range ta {
		if !slices.Contains(tb, n) {
			d.TargetsAdded = append(d.TargetsAdded, n)
		}
	}
	for _, n := range tb {
		if !slices.Contains(ta, n) {
			d.TargetsRemoved = append(d.TargetsRemoved, n)
		}
	}
	paths := make([]string, 0, len(fb)+len(fa))
	for p := range fb {
		paths = append(paths, p)
	}
	for p := range fa {
		if _, ok := fb[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	// Keyed entries ("scorers[\"x\"]") are leaves only when one side lacks
	// them; their fields are then not listed one by one.
	var entries []string
	for _, p := range paths {
		if strings.HasSuffix(p, "]") {
			entries = append(entries, p)
		}
	}
	inOneOnly := func(e string) bool { _, b := fb[e]; _, a := fa[e]; return a != b }
	byTarget := map[string][]FieldChange{}
	for _, p := range paths {
		vb, va := fb[p], fa[p]
		if vb == va {
			continue
		}
		if strings.HasSuffix(p, "]") && !inOneOnly(p) {
			continue
		}
		if slices.ContainsFunc(entries, func(e string) bool { return strings.HasPrefix(p, e+".") && inOneOnly(e) }) {
			continue
		}
		fc := FieldChange{Field: p, Before: cut(vb, maxSpecValue), After: cut(va, maxSpecValue)}
		top, _, _ := strings.Cut(p, ".")
		top, _, _ = strings.Cut(top, "[")
		switch top {
		case "targets":
			name, field, ok := splitKeyed(p)
			if !ok || !slices.Contains(tb, name) || !slices.Contains(ta, name) {
				continue // an added or removed target is listed as such
			}
			fc.Field = field
			byTarget[name] = append(byTarget[name], fc)
		case "prompt":
			if vb != "" && va != "" {
				fc.Lines, fc.LinesOmitted = lineDiffJSON(vb, va)
			}
			d.Prompt = append(d.Prompt, fc)
		case "output", "scorers", "refusal", "error_costs", "combine":
			d.Scorers = append(d.Scorers, fc)
		case "dataset":
			d.Dataset = append(d.Dataset, fc)
		case "files":
			continue // compared by file below
		default:
			d.Other = append(d.Other, fc)
		}
	}
	for _, n := range ta {
		if cs := byTarget[n]; len(cs) > 0 {
			d.Targets = append(d.Targets, TargetChange{Name: n, Changes: cs})
		}
	}
	filesB, okB := spec.ConfigFiles(before)
	filesA, okA := spec.ConfigFiles(after)
	if okB && okA {
		d.Files = spec.ChangedFiles(filesB, filesA)
	}
	return d, nil
}

// scorerFilesNote names the files read by the scorers whose content
// differs between two runs' resolved specs ("; files: schemas/invoice.json
// changed"), or "" when none does or a run lacks its resolved spec.
func scorerFilesNote(before, after []byte) string {
	if len(before) == 0 || len(after) == 0 {
		return ""
	}
	fb, okB := spec.ConfigFiles(before)
	fa, okA := spec.ConfigFiles(after)
	if !okB || !okA {
		return ""
	}
	var out []string
	for _, c := range spec.ChangedFiles(fb, fa) {
		if c.For == spec.FileForScorers {
			out = append(out, c.Path+" "+c.Change)
		}
	}
	if len(out) == 0 {
		return ""
	}
	return "; files: " + strings.Join(out, ", ")
}

// splitKeyed splits "targets[name].params.temperature" into the name and
// the rest ("params.temperature"; "" for the whole entry).
func splitKeyed(p string) (name, field string, ok bool) {
	open := strings.IndexByte(p, '[')
	if open < 0 {
		return "", "", false
	}
	// The name is JSON-quoted, so a ']' inside it is escaped.
	var q string
	dec := json.NewDecoder(strings.NewReader(p[open+1:]))
	if err := dec.Decode(&q); err != nil {
		return "", "", false
	}
	rest := p[open+1+int(dec.InputOffset()):]
	rest = strings.TrimPrefix(rest, "]")
	return q, strings.TrimPrefix(rest, "."), true
}

// flattenSpec flattens a resolved spec into path → JSON value, and returns
// the names of its targets in order.
func flattenSpec(b []byte) (map[string]string, []string, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, nil, err
	}
	root, ok := v.(map[string]any)
	if !ok {
		return nil, nil, errors.New("the resolved spec is not a JSON object")
	}
	out := map[string]string{}
	flatten("", root, out)
	var targets []string
	if ts, ok := root["targets"].([]any); ok {
		for _, t := range ts {
			if m, ok := t.(map[string]any); ok {
				if n, ok := m["name"].(string); ok {
					targets = append(targets, n)
				}
			}
		}
	}
	return out, targets, nil
}

// flatten writes v's leaves into out under dotted paths. A list whose
// elements are all objects with distinct string names is keyed by name
// (`targets["a"]`), any other list is one leaf.
func flatten(path string, v any, out map[string]string) {
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch x := v.(type) {
	case map[string]any:
		for k, sub := range x {
			flatten(join(k), sub, out)
		}
		return
	case []any:
		if names, ok := listNames(x); ok {
			for i, el := range x {
				q, _ := json.Marshal(names[i])
				flatten(path+"["+string(q)+"]", el, out)
			}
			// The entry itself, so an added or removed one shows whole.
			for i, el := range x {
				q, _ := json.Marshal(names[i])
				b, _ := json.Marshal(el)
				out[path+"["+string(q)+"]"] = string(b)
			}
			return
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(fmt.Sprint(v))
	}
	out[path] = string(b)
}

// listNames returns the names of a list's elements when every element is an
// object with a distinct string "name" (or, failing that, "key").
func listNames(xs []any) ([]string, bool) {
	if len(xs) == 0 {
		return nil, false
	}
	for _, field := range []string{"name", "key"} {
		names := make([]string, 0, len(xs))
		seen := map[string]bool{}
		for _, x := range xs {
			m, ok := x.(map[string]any)
			if !ok {
				return nil, false
			}
			n, ok := m[field].(string)
			if !ok || seen[n] {
				break
			}
			seen[n] = true
			names = append(names, n)
		}
		if len(names) == len(xs) {
			return names, true
		}
	}
	return nil, false
}
