package sample

import (
	"container/heap"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/assay-eval/assay/internal/record"
)

// None is a stratum key's value when the trace has none.
const None = "(none)"

// Population streams the traces a sample is drawn from, calling fn once
// per trace (in any order: the draw does not depend on it).
type Population func(fn func(*record.Trace) error) error

// Options say how a sample is drawn.
type Options struct {
	// ID names the sample; Created is when it was drawn.
	ID      string
	Created time.Time
	// Since and Until bound the traces' times, [Since, Until): a trace
	// outside is not part of the population even if the stream yields it.
	Since, Until time.Time
	// Filter are conditions "key=value" every trace of the population
	// meets, each key read as a stratum key is (see Key).
	Filter []string
	// By are the strata keys; none draws a simple sample of Size traces.
	By []string
	// Per is how many traces are drawn from each stratum (all of a smaller
	// one) when By is set.
	Per int
	// Size is how many traces a simple sample draws.
	Size int
	// Seed makes the draw reproducible.
	Seed uint64
}

// Check reports what is wrong with the options, all at once.
func (o Options) Check() error {
	var errs []error
	if len(o.By) > 0 {
		if o.Per < 1 {
			errs = append(errs, fmt.Errorf("a stratified sample (by %s) draws --per traces from each stratum: give --per 1 or more", strings.Join(o.By, ",")))
		}
		if o.Size != 0 {
			errs = append(errs, errors.New("--size draws a simple sample; a stratified one (--by) draws --per from each stratum: give one or the other"))
		}
	} else {
		if o.Per != 0 {
			errs = append(errs, errors.New("--per N needs the strata keys: --by model,route --per N, or --per model=N"))
		}
		if o.Size < 1 {
			errs = append(errs, errors.New("a simple sample needs --size 1 or more (or strata: --per model=50)"))
		}
	}
	seen := map[string]bool{}
	for _, k := range o.By {
		switch {
		case k == "":
			errs = append(errs, errors.New("an empty strata key in --by: give names such as model,route"))
		case seen[k]:
			errs = append(errs, fmt.Errorf("strata key %q given twice", k))
		}
		seen[k] = true
	}
	for _, f := range o.Filter {
		if k, _, ok := strings.Cut(f, "="); !ok || k == "" {
			errs = append(errs, fmt.Errorf("filter %q: want key=value, such as model=gpt-4o", f))
		}
	}
	if !o.Since.IsZero() && !o.Until.IsZero() && !o.Since.Before(o.Until) {
		errs = append(errs, fmt.Errorf("the window [%s, %s) is empty: since must be before until", o.Since.Format(time.RFC3339), o.Until.Format(time.RFC3339)))
	}
	return errors.Join(errs...)
}

// Draw draws a sample from the population: from each stratum (the traces
// sharing the values of o.By; one stratum for a simple sample) the Per
// (or Size) traces with the smallest seeded hash of their ID, a bottom-k
// sample: every subset of that size is equally likely, and the same seed
// and traces give the same sample whatever order they are streamed in.
// Memory holds k traces' IDs per stratum, whatever the population's size.
// Each item weighs its stratum's population over its draws; a stratum
// smaller than Per is drawn whole (weight 1).
func Draw(pop Population, o Options) (*record.Sample, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	k := o.Per
	if len(o.By) == 0 {
		k = o.Size
	}
	filter := make([][2]string, 0, len(o.Filter))
	for _, f := range o.Filter {
		key, val, _ := strings.Cut(f, "=")
		filter = append(filter, [2]string{key, val})
	}
	strata := map[string]*stratum{}
	seed := seeded(o.Seed)
	err := pop(func(t *record.Trace) error {
		if !o.Since.IsZero() && t.Time.Before(o.Since) || !o.Until.IsZero() && !t.Time.Before(o.Until) {
			return nil
		}
		kv := keyValues{t: t}
		for _, f := range filter {
			if kv.get(f[0]) != f[1] {
				return nil
			}
		}
		key := kv.stratum(o.By)
		s := strata[key]
		if s == nil {
			s = &stratum{}
			strata[key] = s
		}
		s.population++
		s.offer(k, drawn{hash: rank(seed, t.ID), id: t.ID})
		return nil
	})
	if err != nil {
		return nil, err
	}
	smp := &record.Sample{
		ID: o.ID, Created: o.Created, Since: o.Since, Until: o.Until,
		Filter: strings.Join(o.Filter, ","), By: o.By, Per: k, Seed: o.Seed,
		Strata: []record.SampleStratum{}, Items: []record.SampleItem{},
	}
	keys := make([]string, 0, len(strata))
	for key := range strata {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		s := strata[key]
		items := s.sorted()
		smp.Strata = append(smp.Strata, record.SampleStratum{Key: key, Population: s.population, Drawn: len(items)})
		w := float64(s.population) / float64(len(items))
		for _, d := range items {
			smp.Items = append(smp.Items, record.SampleItem{TraceID: d.id, Stratum: key, Weight: w})
		}
	}
	return smp, nil
}

// Key is a trace's value of a strata key: model, provider, operation,
// source, or any other name as an attribute of the trace (its span's
// attributes first, then its resource's); None when it has none. A string
// attribute is its text, any other value its JSON.
func Key(t *record.Trace, name string) string {
	return (&keyValues{t: t}).get(name)
}

// StratumValues splits a stratum key "k=v,k=v" built from by back into its
// values, one per key, in order. A value holding a comma or an equals sign
// is quoted in the key, and unquoted here.
func StratumValues(key string, by []string) map[string]string {
	out := map[string]string{}
	rest := key
	for i, name := range by {
		prefix := name + "="
		if !strings.HasPrefix(rest, prefix) {
			return out
		}
		rest = rest[len(prefix):]
		var v string
		if strings.HasPrefix(rest, `"`) {
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				return out
			}
			v, _ = strconv.Unquote(q)
			rest = rest[len(q):]
		} else {
			j := strings.IndexByte(rest, ',')
			if j < 0 || i == len(by)-1 {
				j = len(rest)
			}
			v, rest = rest[:j], rest[j:]
		}
		out[name] = v
		rest = strings.TrimPrefix(rest, ",")
	}
	return out
}

// keyValues reads a trace's strata keys, decoding its attributes once.
type keyValues struct {
	t          *record.Trace
	attrs, res map[string]json.RawMessage
	decoded    bool
}

func (kv *keyValues) get(name string) string {
	t := kv.t
	v := ""
	switch name {
	case "model":
		v = t.Model
	case "provider":
		v = t.Provider
	case "operation":
		v = t.Operation
	case "source":
		v = t.Source
	default:
		if !kv.decoded {
			kv.decoded = true
			_ = json.Unmarshal(t.Attributes, &kv.attrs)
			_ = json.Unmarshal(t.Resource, &kv.res)
		}
		raw, ok := kv.attrs[name]
		if !ok {
			raw, ok = kv.res[name]
		}
		if ok {
			var s string
			if json.Unmarshal(raw, &s) == nil {
				v = s
			} else if string(raw) != "null" {
				v = string(raw)
			}
		}
	}
	if v == "" {
		return None
	}
	return v
}

// stratum builds the key "k=v,k=v" of the trace's values of by, quoting a
// value that holds a comma, an equals sign or a quote.
func (kv *keyValues) stratum(by []string) string {
	var b strings.Builder
	for i, name := range by {
		if i > 0 {
			b.WriteByte(',')
		}
		v := kv.get(name)
		if strings.ContainsAny(v, `,="`) {
			v = strconv.Quote(v)
		}
		b.WriteString(name + "=" + v)
	}
	return b.String()
}

// drawn is a candidate of a stratum's bottom-k sample.
type drawn struct {
	hash uint64
	id   string
}

func (a drawn) less(b drawn) bool {
	if a.hash != b.hash {
		return a.hash < b.hash
	}
	return a.id < b.id
}

// stratum keeps its population's size and the k smallest candidates in a
// max-heap (the largest on top, the one a smaller candidate replaces).
type stratum struct {
	population int
	top        maxHeap
}

func (s *stratum) offer(k int, d drawn) {
	if len(s.top) < k {
		heap.Push(&s.top, d)
		return
	}
	if d.less(s.top[0]) {
		s.top[0] = d
		heap.Fix(&s.top, 0)
	}
}

// sorted is the stratum's draws, smallest hash first: the draw order.
func (s *stratum) sorted() []drawn {
	out := slices.Clone(s.top)
	slices.SortFunc(out, func(a, b drawn) int {
		if a.less(b) {
			return -1
		}
		if b.less(a) {
			return 1
		}
		return 0
	})
	return out
}

type maxHeap []drawn

func (h maxHeap) Len() int           { return len(h) }
func (h maxHeap) Less(i, j int) bool { return h[j].less(h[i]) }
func (h maxHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *maxHeap) Push(x any)        { *h = append(*h, x.(drawn)) }
func (h *maxHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Rank is an ID's place in a draw with seed, smallest first: the order
// Draw takes traces in (bottom-k), for any caller that draws by ID (serve's
// rating queue), so the same seed and ID rank the same everywhere.
func Rank(seed uint64, id string) uint64 { return rank(seeded(seed), id) }

// seeded is a draw's seed as rank mixes it.
func seeded(seed uint64) uint64 { return mix(seed ^ 0x9e3779b97f4a7c15) }

// rank is a trace's place in the draw: FNV-1a of its ID mixed with the seed
// by SplitMix64's finaliser, so every bit of the ID and the seed moves it.
func rank(seed uint64, id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return mix(h.Sum64() ^ seed)
}

// mix is SplitMix64's finaliser.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
