package sample

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
)

var t0 = time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)

// traces makes n traces per model, an hour apart, with a route attribute
// and, for half of them, a resource attribute env.
func traces(perModel map[string]int) []record.Trace {
	var ts []record.Trace
	models := make([]string, 0, len(perModel))
	for m := range perModel {
		models = append(models, m)
	}
	slices.Sort(models)
	for _, m := range models {
		for i := range perModel[m] {
			t := record.Trace{
				ID: fmt.Sprintf("%s-%04d", m, i), Model: m, Provider: "p", Source: "otlp",
				Time:       t0.Add(time.Duration(i) * time.Minute),
				Attributes: fmt.Appendf(nil, `{"route":"/r%d","n":%d}`, i%3, i%2),
			}
			if i%2 == 0 {
				t.Resource = []byte(`{"env":"prod","route":"ignored"}`)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

func slicePop(ts []record.Trace) Population {
	return func(fn func(*record.Trace) error) error {
		for i := range ts {
			if err := fn(&ts[i]); err != nil {
				return err
			}
		}
		return nil
	}
}

func ids(s *record.Sample) []string {
	var out []string
	for _, it := range s.Items {
		out = append(out, it.TraceID)
	}
	return out
}

func TestDrawReproducibleWhateverTheOrder(t *testing.T) {
	ts := traces(map[string]int{"a": 300, "b": 40})
	o := Options{By: []string{"model"}, Per: 25, Seed: 42}
	first, err := Draw(slicePop(ts), o)
	if err != nil {
		t.Fatal(err)
	}
	shuffled := slices.Clone(ts)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	again, err := Draw(slicePop(shuffled), o)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids(first), ids(again)) {
		t.Errorf("the same seed over shuffled traces drew\n%v\nthen\n%v", ids(first), ids(again))
	}
	o.Seed = 43
	other, err := Draw(slicePop(ts), o)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(ids(first), ids(other)) {
		t.Error("seeds 42 and 43 drew the same sample")
	}
}

func TestDrawStratified(t *testing.T) {
	ts := traces(map[string]int{"a": 300, "b": 40, "c": 10})
	s, err := Draw(slicePop(ts), Options{By: []string{"model"}, Per: 25, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	want := []record.SampleStratum{{Key: "model=a", Population: 300, Drawn: 25}, {Key: "model=b", Population: 40, Drawn: 25}, {Key: "model=c", Population: 10, Drawn: 10}}
	if !slices.Equal(s.Strata, want) {
		t.Errorf("strata %+v, want %+v", s.Strata, want)
	}
	weights := map[string]float64{"model=a": 12, "model=b": 1.6, "model=c": 1}
	seen := map[string]bool{}
	for _, it := range s.Items {
		if it.Weight != weights[it.Stratum] {
			t.Errorf("%s in %s weighs %g, want %g", it.TraceID, it.Stratum, it.Weight, weights[it.Stratum])
		}
		if !strings.HasPrefix(it.TraceID, strings.TrimPrefix(it.Stratum, "model=")+"-") {
			t.Errorf("%s drawn into stratum %s", it.TraceID, it.Stratum)
		}
		if seen[it.TraceID] {
			t.Errorf("%s drawn twice", it.TraceID)
		}
		seen[it.TraceID] = true
	}
	if len(s.Items) != 60 || s.Per != 25 || s.Seed != 7 || !slices.Equal(s.By, []string{"model"}) {
		t.Errorf("%d items, per %d, seed %d, by %v", len(s.Items), s.Per, s.Seed, s.By)
	}
}

func TestDrawAttributesAndWindow(t *testing.T) {
	ts := traces(map[string]int{"a": 120})
	o := Options{By: []string{"model", "env", "route", "n"}, Per: 2, Seed: 1,
		Since: t0.Add(10 * time.Minute), Until: t0.Add(70 * time.Minute), Filter: []string{"route=/r1"}}
	s, err := Draw(slicePop(ts), o)
	if err != nil {
		t.Fatal(err)
	}
	// Minutes 10..69 with i%3 == 1: 20 traces; env only on even i (the
	// resource), n is a JSON number; the span's route wins over the
	// resource's.
	want := []record.SampleStratum{
		{Key: "model=a,env=(none),route=/r1,n=1", Population: 10, Drawn: 2},
		{Key: "model=a,env=prod,route=/r1,n=0", Population: 10, Drawn: 2},
	}
	if !slices.Equal(s.Strata, want) {
		t.Errorf("strata %+v, want %+v", s.Strata, want)
	}
	if s.Filter != "route=/r1" || !s.Since.Equal(o.Since) || !s.Until.Equal(o.Until) {
		t.Errorf("recorded filter %q window %v–%v", s.Filter, s.Since, s.Until)
	}
	for _, it := range s.Items {
		if v := StratumValues(it.Stratum, o.By); v["route"] != "/r1" || v["model"] != "a" {
			t.Errorf("stratum %s read back as %v", it.Stratum, v)
		}
	}
}

func TestStratumValuesQuoted(t *testing.T) {
	tr := &record.Trace{Model: `m,1`, Attributes: []byte(`{"route":"a=b","q":"say \"hi\""}`)}
	by := []string{"model", "route", "q", "missing"}
	key := (&keyValues{t: tr}).stratum(by)
	got := StratumValues(key, by)
	want := map[string]string{"model": "m,1", "route": "a=b", "q": `say "hi"`, "missing": None}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("key %s: %s = %q, want %q", key, k, got[k], v)
		}
	}
}

// Every trace is equally likely to be drawn: over many seeds each of 20
// traces is drawn about 5/20 of the time.
func TestDrawUniform(t *testing.T) {
	ts := traces(map[string]int{"a": 20})
	counts := map[string]int{}
	const seeds = 4000
	for seed := range uint64(seeds) {
		s, err := Draw(slicePop(ts), Options{Size: 5, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids(s) {
			counts[id]++
		}
	}
	mean, sd := seeds*0.25, math.Sqrt(seeds*0.25*0.75)
	for _, tr := range ts {
		if c := float64(counts[tr.ID]); math.Abs(c-mean) > 5*sd {
			t.Errorf("%s drawn %v times in %d draws, want %v ± %.0f", tr.ID, c, seeds, mean, 5*sd)
		}
	}
}

func TestDrawSimple(t *testing.T) {
	ts := traces(map[string]int{"a": 30, "b": 70})
	s, err := Draw(slicePop(ts), Options{Size: 10, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Strata) != 1 || s.Strata[0] != (record.SampleStratum{Key: "", Population: 100, Drawn: 10}) || s.Per != 10 {
		t.Errorf("strata %+v per %d", s.Strata, s.Per)
	}
	for _, it := range s.Items {
		if it.Weight != 10 || it.Stratum != "" {
			t.Errorf("item %+v", it)
		}
	}
}

func TestOptionsCheck(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{}, "a simple sample needs --size 1 or more (or strata: --per model=50)"},
		{Options{Per: 5, Size: 3}, "--per N needs the strata keys: --by model,route --per N, or --per model=N"},
		{Options{By: []string{"model"}}, "a stratified sample (by model) draws --per traces from each stratum: give --per 1 or more"},
		{Options{By: []string{"model", "model"}, Per: 2, Size: 4}, "--size draws a simple sample; a stratified one (--by) draws --per from each stratum: give one or the other\nstrata key \"model\" given twice"},
		{Options{Size: 1, Filter: []string{"model"}}, `filter "model": want key=value, such as model=gpt-4o`},
		{Options{Size: 1, Since: t0, Until: t0}, "the window [2026-11-23T00:00:00Z, 2026-11-23T00:00:00Z) is empty: since must be before until"},
	} {
		if err := c.o.Check(); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
}

// The draw holds k IDs per stratum, not the population: the live heap
// after 120,000 streamed traces is what it was after 20,000.
func TestDrawMemoryFlat(t *testing.T) {
	var at30k, at300k uint64
	tr := record.Trace{Model: "m", Attributes: []byte(`{"route":"/r"}`)}
	pop := func(fn func(*record.Trace) error) error {
		for i := range 120_000 {
			tr.ID = fmt.Sprintf("trace-%07d", i)
			tr.Model = []string{"a", "b", "c"}[i%3]
			if err := fn(&tr); err != nil {
				return err
			}
			if i+1 == 20_000 || i+1 == 120_000 {
				runtime.GC()
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				if i+1 == 20_000 {
					at30k = m.HeapAlloc
				} else {
					at300k = m.HeapAlloc
				}
			}
		}
		return nil
	}
	s, err := Draw(pop, Options{By: []string{"model", "route"}, Per: 100, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Items) != 300 || s.Strata[0].Population != 40_000 {
		t.Fatalf("%d items, strata %+v", len(s.Items), s.Strata)
	}
	if grew := int64(at300k) - int64(at30k); grew > 256<<10 {
		t.Errorf("the live heap grew %d bytes from 20,000 to 120,000 traces (%d → %d)", grew, at30k, at300k)
	}
	t.Logf("live heap %d bytes after 20,000 traces, %d after 120,000", at30k, at300k)
}
