// Package host samples the load of the machine a run executes on, so a
// report can say when latency figures measured the machine rather than the
// model: a local exec target (or a local model server) sharing two cores
// with the other targets' workers answers slower because the host is busy.
//
// On Linux a Sampler reads the 1-minute load average from /proc/loadavg
// every few seconds; on other systems it records nothing. What it saw is a
// Load, stored on the run as JSON (record.Run.Host) and read back by
// analysis, which warns when the load exceeded the cores. It imports
// nothing of assay.
package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Every is how often a Sampler reads the load.
const Every = 5 * time.Second

// Load is what a run saw of its host: the cores it had and the 1-minute
// load average sampled during the run. The zero Load (no samples) means
// nothing was recorded.
type Load struct {
	// Cores is the number of logical CPUs the process could use.
	Cores int `json:"cores"`
	// Samples is how many times the load was read.
	Samples int `json:"samples"`
	// Max and Mean are the highest and the mean 1-minute load average
	// sampled.
	Max  float64 `json:"load1_max"`
	Mean float64 `json:"load1_mean"`
	// Over counts the samples whose load was above Cores.
	Over int `json:"samples_over_cores"`
}

// Saturated reports whether the host was busier than its cores at some
// sample: more runnable work than CPUs, so calls waited for a CPU.
func (l Load) Saturated() bool {
	return l.Samples > 0 && l.Cores > 0 && l.Max > float64(l.Cores)
}

// Merge combines what two invocations of a run saw (a run and its resume).
func (l Load) Merge(o Load) Load {
	if o.Samples == 0 {
		return l
	}
	if l.Samples == 0 {
		return o
	}
	n := l.Samples + o.Samples
	return Load{
		Cores:   max(l.Cores, o.Cores),
		Samples: n,
		Max:     math.Max(l.Max, o.Max),
		Mean:    (l.Mean*float64(l.Samples) + o.Mean*float64(o.Samples)) / float64(n),
		Over:    l.Over + o.Over,
	}
}

// Encode is the Load as stored on a run: "" when nothing was recorded.
func (l Load) Encode() string {
	if l.Samples == 0 {
		return ""
	}
	b, _ := json.Marshal(l)
	return string(b)
}

// maxRecord bounds a stored record read back; a Load is under 200 bytes.
const maxRecord = 4 << 10

// Decode reads a stored Load. An empty record is the zero Load (nothing
// recorded); a record that is not one Load (or has impossible values) is
// an error.
func Decode(s string) (Load, error) {
	var l Load
	if strings.TrimSpace(s) == "" {
		return l, nil
	}
	if len(s) > maxRecord {
		return Load{}, fmt.Errorf("host record is %d bytes, not a load record", len(s))
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return Load{}, fmt.Errorf("host record: %w", err)
	}
	if dec.More() {
		return Load{}, errors.New("host record: more than one value")
	}
	if l.Cores < 0 || l.Samples < 0 || l.Over < 0 || l.Over > l.Samples ||
		l.Max < 0 || l.Mean < 0 || l.Mean > l.Max*(1+1e-9)+1e-9 {
		return Load{}, fmt.Errorf("host record: impossible values %+v", l)
	}
	return l, nil
}

// ParseLoadavg reads the 1-minute load average from the text of
// /proc/loadavg ("0.52 0.58 0.59 1/389 12345").
func ParseLoadavg(text string) (float64, error) {
	f := strings.Fields(text)
	if len(f) == 0 {
		return 0, errors.New("loadavg is empty")
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("loadavg: %q is not a load average", f[0])
	}
	return v, nil
}

// Sampler reads the load at its start, every interval, and at Stop.
type Sampler struct {
	read  func() (float64, error)
	cores int
	stop  chan struct{}
	done  chan struct{}

	mu   sync.Mutex
	load Load
	sum  float64
}

// Start samples the system's load every Every: /proc/loadavg on Linux,
// nothing elsewhere (Stop then returns the zero Load).
func Start() *Sampler {
	if runtime.GOOS != "linux" {
		return StartWith(nil, 0, Every)
	}
	return StartWith(readProcLoadavg, runtime.NumCPU(), Every)
}

func readProcLoadavg() (float64, error) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, err
	}
	return ParseLoadavg(string(b))
}

// StartWith samples read (nil: record nothing) every interval, for a host
// of cores CPUs. A failed read is skipped.
func StartWith(read func() (float64, error), cores int, every time.Duration) *Sampler {
	s := &Sampler{read: read, cores: cores, stop: make(chan struct{}), done: make(chan struct{})}
	if read == nil {
		close(s.done)
		return s
	}
	s.sample()
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				s.sample()
			case <-s.stop:
				return
			}
		}
	}()
	return s
}

func (s *Sampler) sample() {
	v, err := s.read()
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l := &s.load
	l.Cores = s.cores
	l.Samples++
	l.Max = math.Max(l.Max, v)
	s.sum += v
	l.Mean = s.sum / float64(l.Samples)
	if v > float64(s.cores) {
		l.Over++
	}
}

// Stop takes a last sample, stops sampling and returns what was seen. It
// may be called once.
func (s *Sampler) Stop() Load {
	if s.read != nil {
		close(s.stop)
		<-s.done
		s.sample()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.load
}
