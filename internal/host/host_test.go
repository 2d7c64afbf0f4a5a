package host

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseLoadavg(t *testing.T) {
	good := map[string]float64{
		"0.52 0.58 0.59 1/389 12345\n": 0.52,
		"12.00 3.1 1 4/900 7":          12,
		"0 0 0 1/1 1":                  0,
	}
	for in, want := range good {
		got, err := ParseLoadavg(in)
		if err != nil || got != want {
			t.Errorf("ParseLoadavg(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "   \n", "abc 1 2", "-1 0 0", "NaN 1 1", "+Inf 0 0", "1e400 0 0"} {
		if v, err := ParseLoadavg(in); err == nil {
			t.Errorf("ParseLoadavg(%q) = %v, want an error", in, v)
		}
	}
}

// scripted returns the values in turn, then the last one; an error where
// the script says so.
func scripted(vals ...float64) func() (float64, error) {
	var mu sync.Mutex
	i := 0
	return func() (float64, error) {
		mu.Lock()
		defer mu.Unlock()
		v := vals[min(i, len(vals)-1)]
		i++
		if v < 0 {
			return 0, errors.New("unreadable")
		}
		return v, nil
	}
}

// A sampler reads at its start and at Stop even when the run is shorter
// than the interval, and skips reads that fail.
func TestSamplerShortRun(t *testing.T) {
	s := StartWith(scripted(3, -1), 2, time.Hour)
	l := s.Stop()
	want := Load{Cores: 2, Samples: 1, Max: 3, Mean: 3, Over: 1}
	if l != want {
		t.Errorf("got %+v, want %+v (the failed read at Stop skipped)", l, want)
	}
	if !l.Saturated() {
		t.Error("a load of 3 on 2 cores is saturated")
	}
}

func TestSamplerTicks(t *testing.T) {
	s := StartWith(scripted(1, 2, 5, 0.5), 4, time.Millisecond)
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.mu.Lock()
		n := s.load.Samples
		s.mu.Unlock()
		if n >= 4 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	l := s.Stop()
	if l.Samples < 5 || l.Max != 5 || l.Over != 1 || l.Cores != 4 {
		t.Errorf("got %+v: want at least 5 samples (4 ticks and Stop's), max 5, one above 4 cores", l)
	}
	// The mean of 1, 2, 5 and then (Samples-3) readings of 0.5.
	wantMean := (8 + 0.5*float64(l.Samples-3)) / float64(l.Samples)
	if d := l.Mean - wantMean; d > 1e-9 || d < -1e-9 {
		t.Errorf("mean %v, want %v", l.Mean, wantMean)
	}
}

func TestNothingRecorded(t *testing.T) {
	l := StartWith(nil, 0, time.Millisecond).Stop()
	if l != (Load{}) || l.Encode() != "" || l.Saturated() {
		t.Errorf("a sampler with no reader recorded %+v (encoded %q)", l, l.Encode())
	}
	if got, err := Decode(""); err != nil || got != (Load{}) {
		t.Errorf("Decode(\"\") = %+v, %v; want the zero Load", got, err)
	}
}

func TestSaturated(t *testing.T) {
	for _, tc := range []struct {
		l    Load
		want bool
	}{
		{Load{Cores: 2, Samples: 3, Max: 2, Mean: 1.5}, false}, // at the cores, not above
		{Load{Cores: 2, Samples: 3, Max: 2.01, Mean: 1.5, Over: 1}, true},
		{Load{Cores: 0, Samples: 3, Max: 9, Mean: 9}, false}, // cores unknown
		{Load{}, false},
	} {
		if got := tc.l.Saturated(); got != tc.want {
			t.Errorf("%+v: Saturated() = %v, want %v", tc.l, got, tc.want)
		}
	}
}

func TestMergeAndRoundTrip(t *testing.T) {
	a := Load{Cores: 2, Samples: 2, Max: 1, Mean: 0.5}
	b := Load{Cores: 2, Samples: 6, Max: 4, Mean: 3, Over: 5}
	m := a.Merge(b)
	want := Load{Cores: 2, Samples: 8, Max: 4, Mean: (2*0.5 + 6*3) / 8.0, Over: 5}
	if m != want {
		t.Errorf("merge %+v, want %+v", m, want)
	}
	if a.Merge(Load{}) != a || (Load{}).Merge(b) != b {
		t.Error("merging with nothing recorded changed the load")
	}
	got, err := Decode(m.Encode())
	if err != nil || got != m {
		t.Errorf("round trip: %+v, %v; want %+v", got, err, m)
	}
}

func TestDecodeRefusesWhatIsNotALoad(t *testing.T) {
	for _, in := range []string{
		"{",
		"[1,2]",
		`{"cores": 2, "samples": 1, "load1_max": 1, "load1_mean": 1} {}`,
		`{"cores": 2, "samples": 1, "load1_max": 1, "load1_mean": 1, "extra": 1}`,
		`{"cores": -1, "samples": 1, "load1_max": 1, "load1_mean": 1}`,
		`{"cores": 2, "samples": 1, "load1_max": 1, "load1_mean": 2}`,
		`{"cores": 2, "samples": 1, "load1_max": 1, "load1_mean": 1, "samples_over_cores": 2}`,
		`{"cores": "two"}`,
		strings.Repeat(" ", maxRecord) + "{}",
	} {
		if l, err := Decode(in); err == nil {
			t.Errorf("Decode(%.60q) = %+v, want an error", in, l)
		}
	}
}

func FuzzParseLoadavg(f *testing.F) {
	for _, s := range []string{"0.52 0.58 0.59 1/389 12345\n", "", "x", "-0", "1e308"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseLoadavg(s)
		if err == nil && (v < 0 || v != v) {
			t.Fatalf("ParseLoadavg(%q) = %v", s, v)
		}
	})
}

func FuzzDecode(f *testing.F) {
	f.Add(`{"cores":2,"samples":3,"load1_max":4.5,"load1_mean":2,"samples_over_cores":1}`)
	f.Add("")
	f.Add("null")
	f.Fuzz(func(t *testing.T, s string) {
		l, err := Decode(s)
		if err != nil {
			return
		}
		if l.Samples < 0 || l.Over > l.Samples || l.Cores < 0 {
			t.Fatalf("Decode(%q) accepted %+v", s, l)
		}
		back, err := Decode(l.Encode())
		if err != nil || (l.Samples > 0 && back != l) {
			t.Fatalf("re-decoding %+v: %+v, %v", l, back, err)
		}
	})
}
