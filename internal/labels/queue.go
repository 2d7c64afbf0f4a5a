package labels

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/assay-eval/assay/internal/record"
)

// QueueSpec is what a labeler asks for.
type QueueSpec struct {
	Name string
	Size int
	Seed uint64
	// Judge is the scorer whose verdict stratifies (and is revealed after
	// labeling); "" none.
	Judge string
	// Slices are tag keys to stratify by (the run's cases' tags).
	Slices []string
}

// Judge verdicts as a stratum names them; a result the judge left without
// a score is "unscored".
const (
	judgePass     = "pass"
	judgeFail     = "fail"
	judgeUnscored = "unscored"
)

// stratum is one cell of the sample: the results of one target, judge
// verdict and slice values.
type stratum struct {
	values []string // in the order of the queue's Strata
	name   string   // "target=a, judge=pass, lang=en"
	keys   []rkey
	draw   int
}

// keyReader is what a store streams without outputs (store.Keys): when
// NewQueue's reader has it, the results' keys and the judge's verdicts are
// read through it, and only the drawn items' outputs are read (to hash
// them). Any record.Reader still works, reading every result and score.
type keyReader interface {
	ResultKeys(ctx context.Context, runID string, fn func(k record.Key, failed bool) error) error
	Verdicts(ctx context.Context, runID string, scoring int, scorer string, fn func(k record.Key, pass bool, kind string) error) error
}

// NewQueue samples a queue from a run's results in its latest scoring.
//
// The results are divided into strata: target × the judge's verdict (when
// q.Judge is set) × the value of each slice tag (a case without the tag has
// the value ""). Failed calls (a result with an ErrorKind) are left out:
// there is no output to judge. Of n = min(q.Size, results) items, every
// non-empty stratum gets one while n allows (when n is smaller than the
// number of strata, the largest strata get one each), and the rest go one
// at a time to the stratum furthest below its proportional share n·Nₕ/N,
// so every stratum's count is within one of its share whenever the shares
// are all at least one. Each stratum's items are a seeded simple random
// sample of it; then all items are shuffled (seeded) into their positions,
// so the labeler cannot tell a target or a verdict from an item's place.
// An item's Stratum names its cell (target and judge verdict among them:
// it must not be shown while the item is labeled) and its Weight is
// Nₕ / (items drawn from its stratum).
func NewQueue(ctx context.Context, r record.Reader, run *record.Run, q QueueSpec, now time.Time) (*record.Queue, error) {
	if err := CheckQueueName(q.Name); err != nil {
		return nil, err
	}
	if q.Size < 1 {
		return nil, fmt.Errorf("the queue's size is %d; give the number of outputs to label (at least 1)", q.Size)
	}
	names := []string{"target"}
	if q.Judge != "" {
		names = append(names, "judge")
	}
	for i, s := range q.Slices {
		if s == "" {
			return nil, errors.New("a slice names a tag of the run's cases; got an empty name")
		}
		if slices.Contains(q.Slices[:i], s) {
			return nil, fmt.Errorf("slice %q is given twice", s)
		}
		names = append(names, "slice:"+s)
	}

	scoring, err := r.LatestScoring(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	// A million results are held as small integer keys: case IDs and
	// targets interned once.
	ix := &index{cases: newInterner(), targets: newInterner()}
	if len(q.Slices) > 0 {
		if err := ix.readTags(ctx, r, run.ID, q.Slices); err != nil {
			return nil, err
		}
	}
	var verdicts *verdictTable
	if q.Judge != "" {
		if verdicts, err = ix.judgeVerdicts(ctx, r, run.ID, scoring, q.Judge, run.Epochs); err != nil {
			return nil, err
		}
	}

	cells := map[string]*stratum{}
	total, failed := 0, 0
	var id []byte
	add := func(key record.Key, fail bool) error {
		if fail {
			failed++
			return nil
		}
		k := rkey{ix.cases.id(key.CaseID), ix.targets.id(key.Target), int32(key.Epoch)}
		verdict := ""
		if q.Judge != "" {
			v, ok := verdicts.get(k)
			switch {
			case !ok:
				verdict = judgeUnscored
			case v:
				verdict = judgePass
			default:
				verdict = judgeFail
			}
		}
		var tags []string
		if len(q.Slices) > 0 {
			tags = ix.sliceValues(k.c, len(q.Slices))
		}
		id = append(id[:0], key.Target...)
		id = append(id, 0)
		id = append(id, verdict...)
		for _, v := range tags {
			id = append(id, 0)
			id = append(id, v...)
		}
		c := cells[string(id)]
		if c == nil {
			values := []string{key.Target}
			if q.Judge != "" {
				values = append(values, verdict)
			}
			values = append(values, tags...)
			c = &stratum{values: values, name: stratumName(names, values)}
			cells[string(id)] = c
		}
		c.keys = append(c.keys, k)
		total++
		return nil
	}
	// The keys come in the order of Results either way, so a seed draws
	// the same items from a store as from any other reader.
	if kr, ok := r.(keyReader); ok {
		err = kr.ResultKeys(ctx, run.ID, add)
	} else {
		err = r.Results(ctx, run.ID, func(res record.Result) error { return add(res.Key(), res.ErrorKind != "") })
	}
	if err != nil {
		return nil, fmt.Errorf("reading the results of run %s: %w", run.ID, err)
	}
	if total == 0 {
		if failed > 0 {
			return nil, fmt.Errorf("run %s has no outputs to label: all %d of its results are failed calls", run.ID, failed)
		}
		return nil, fmt.Errorf("run %s has no results to label", run.ID)
	}

	strata := make([]*stratum, 0, len(cells))
	for _, c := range cells {
		strata = append(strata, c)
	}
	slices.SortFunc(strata, func(a, b *stratum) int { return slices.Compare(a.values, b.values) })
	allocate(strata, min(q.Size, total), total)

	rng := rand.New(rand.NewPCG(q.Seed, 0x6c6162656c73)) // "labels"
	var items []record.QueueItem
	for _, c := range strata {
		// A partial Fisher–Yates shuffle draws c.draw of c.keys.
		for i := range c.draw {
			j := i + rng.IntN(len(c.keys)-i)
			c.keys[i], c.keys[j] = c.keys[j], c.keys[i]
		}
		w := float64(len(c.keys)) / float64(c.draw)
		for _, k := range c.keys[:c.draw] {
			items = append(items, record.QueueItem{CaseID: ix.cases.names[k.c], Target: ix.targets.names[k.t], Epoch: int(k.e), Stratum: c.name, Weight: w})
		}
	}
	rng.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
	for i := range items {
		it := &items[i]
		it.Position = i
		res, err := r.Result(ctx, run.ID, it.Key())
		if err != nil {
			return nil, fmt.Errorf("reading the output of %s/%s/%d: %w", it.CaseID, it.Target, it.Epoch, err)
		}
		it.OutputHash = record.LabelOutputHash(res)
	}
	return &record.Queue{
		RunID: run.ID, Name: q.Name, Judge: q.Judge, Size: q.Size, Seed: q.Seed,
		Strata: names, Created: now, Items: items,
	}, nil
}

// allocate sets each stratum's draw: n items in all, one per stratum
// while n allows, the rest by largest shortfall from the proportional
// share n·Nₕ/N (ties to the larger stratum, then the first).
func allocate(strata []*stratum, n, total int) {
	if n < len(strata) {
		// Fewer items than strata: the largest strata get one each.
		order := slices.Clone(strata)
		slices.SortStableFunc(order, func(a, b *stratum) int { return cmp.Compare(len(b.keys), len(a.keys)) })
		for _, c := range order[:n] {
			c.draw = 1
		}
		return
	}
	share := func(c *stratum) float64 { return float64(n) * float64(len(c.keys)) / float64(total) }
	for _, c := range strata {
		c.draw = 1
	}
	for range n - len(strata) {
		var best *stratum
		for _, c := range strata {
			if c.draw >= len(c.keys) {
				continue
			}
			if best == nil {
				best = c
				continue
			}
			d, bd := share(c)-float64(c.draw), share(best)-float64(best.draw)
			if d > bd || (d == bd && len(c.keys) > len(best.keys)) {
				best = c
			}
		}
		best.draw++
	}
}

func stratumName(names, values []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = strings.TrimPrefix(n, "slice:") + "=" + values[i]
	}
	return strings.Join(parts, ", ")
}

// rkey is a result's key with its case and target interned.
type rkey struct{ c, t, e int32 }

// interner numbers strings from 0 in the order first seen.
type interner struct {
	ids   map[string]int32
	names []string
}

func newInterner() *interner { return &interner{ids: map[string]int32{}} }

func (n *interner) id(s string) int32 {
	if i, ok := n.ids[s]; ok {
		return i
	}
	i := int32(len(n.names))
	n.ids[s] = i
	n.names = append(n.names, s)
	return i
}

// index holds what NewQueue knows of a run's cases: their interned IDs
// and targets, and each case's value of every slice tag (tags[case]).
type index struct {
	cases, targets *interner
	tags           [][]string
}

// sliceValues is case c's value of each of n slice tags ("" for each when
// the run recorded no such case).
func (ix *index) sliceValues(c int32, n int) []string {
	if int(c) < len(ix.tags) && ix.tags[c] != nil {
		return ix.tags[c]
	}
	return make([]string, n)
}

// judgeVerdicts reads the judge scorer's verdicts in a scoring, refusing a
// scorer the scoring does not have. The scoring's scorers are read only
// when the judge has no verdict in it, to name them: on a big run that
// is a walk of every score.
func (ix *index) judgeVerdicts(ctx context.Context, r record.Reader, runID string, scoring int, judge string, epochs int) (*verdictTable, error) {
	if scoring == 0 {
		return nil, fmt.Errorf("run %s has no scores, so no judge %q to stratify by", runID, judge)
	}
	verdicts := newVerdictTable(epochs)
	var err error
	if kr, ok := r.(keyReader); ok {
		err = kr.Verdicts(ctx, runID, scoring, judge, func(k record.Key, pass bool, _ string) error {
			verdicts.set(rkey{ix.cases.id(k.CaseID), ix.targets.id(k.Target), int32(k.Epoch)}, pass)
			return nil
		})
	} else {
		err = r.Scores(ctx, runID, scoring, func(s record.Score) error {
			if s.Scorer == judge {
				verdicts.set(rkey{ix.cases.id(s.CaseID), ix.targets.id(s.Target), int32(s.Epoch)}, s.Pass)
			}
			return nil
		})
	}
	if err != nil {
		return nil, err
	}
	if verdicts.n == 0 {
		scorers, err := r.ScorerNames(ctx, runID, scoring)
		if err != nil {
			return nil, err
		}
		// A scorer with scores has verdicts; this is a scorer the scoring
		// does not have.
		return nil, fmt.Errorf("run %s has no scorer %q in its latest scoring (%d); its scorers are: %s", runID, judge, scoring, strings.Join(scorers, ", "))
	}
	return verdicts, nil
}

// verdictTable holds a judge's verdict on each result: a byte per case
// for each target and epoch from 1 to the run's epochs (a million
// verdicts in a megabyte, read without hashing), a map for any other
// epoch.
type verdictTable struct {
	epochs   int32
	byTarget [][]byte // [target][case·epochs + epoch−1]: 0 none, 1 fail, 2 pass
	other    map[rkey]bool
	n        int // verdicts set
}

func newVerdictTable(epochs int) *verdictTable {
	return &verdictTable{epochs: int32(min(max(epochs, 1), 64)), other: map[rkey]bool{}}
}

func (v *verdictTable) set(k rkey, pass bool) {
	v.n++
	if k.e < 1 || k.e > v.epochs {
		v.other[k] = pass
		return
	}
	for int(k.t) >= len(v.byTarget) {
		v.byTarget = append(v.byTarget, nil)
	}
	i := int(k.c)*int(v.epochs) + int(k.e) - 1
	b := v.byTarget[k.t]
	if i >= len(b) {
		b = append(b, make([]byte, i+1-len(b))...)
		v.byTarget[k.t] = b
	}
	b[i] = 1
	if pass {
		b[i] = 2
	}
}

// get is the verdict on k, ok false when there is none.
func (v *verdictTable) get(k rkey) (pass, ok bool) {
	if k.e < 1 || k.e > v.epochs {
		pass, ok = v.other[k]
		return pass, ok
	}
	if int(k.t) >= len(v.byTarget) {
		return false, false
	}
	i := int(k.c)*int(v.epochs) + int(k.e) - 1
	if b := v.byTarget[k.t]; i < len(b) && b[i] != 0 {
		return b[i] == 2, true
	}
	return false, false
}

// readTags reads the slice tags of a run's cases, refusing a tag no case
// has.
func (ix *index) readTags(ctx context.Context, r record.Reader, runID string, keys []string) error {
	seen := map[string]bool{}
	values := newInterner() // a tag's values are few: each held once
	err := r.Cases(ctx, runID, func(c record.Case) error {
		for k := range c.Tags {
			seen[k] = true
		}
		i := ix.cases.id(c.ID)
		for int(i) >= len(ix.tags) {
			ix.tags = append(ix.tags, nil)
		}
		vs := make([]string, len(keys))
		for j, k := range keys {
			vs[j] = values.names[values.id(c.Tags[k])]
		}
		ix.tags[i] = vs
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading the cases of run %s: %w", runID, err)
	}
	for _, k := range keys {
		if seen[k] {
			continue
		}
		if len(seen) == 0 {
			return fmt.Errorf("no case of run %s has a tag %q: its cases have no tags to slice by", runID, k)
		}
		known := make([]string, 0, len(seen))
		for t := range seen {
			known = append(known, t)
		}
		slices.Sort(known)
		return fmt.Errorf("no case of run %s has a tag %q; its cases' tags are: %s", runID, k, strings.Join(known, ", "))
	}
	return nil
}

// MaxQueueName bounds a queue's name in bytes.
const MaxQueueName = 100

// CheckQueueName refuses a name a queue cannot be reached by: empty, "."
// or ".." (a URL path cleans them away: serve could not show the queue),
// longer than MaxQueueName, or holding a control character.
func CheckQueueName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return errors.New("a labeling queue needs a name")
	case name == "." || name == "..":
		return fmt.Errorf("a labeling queue cannot be named %q (a web address drops it); use letters, digits and punctuation", name)
	case len(name) > MaxQueueName:
		return fmt.Errorf("the queue's name is %d bytes; at most %d", len(name), MaxQueueName)
	case strings.IndexFunc(name, unicode.IsControl) >= 0 || !utf8.ValidString(name):
		return fmt.Errorf("the queue's name %q holds a control character or is not UTF-8; use letters, digits and punctuation", name)
	}
	return nil
}
