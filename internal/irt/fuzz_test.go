package irt

import (
	"fmt"
	"math"
	"testing"
)

// FuzzEstimate feeds Estimate small tables of any counts (impossible ones
// included) under every model and prior: it never panics, refuses with an
// error or returns a fit whose numbers hold together — finite difficulties
// and SEs under a prior, intervals around their abilities, the persons'
// trials equal to the table's.
func FuzzEstimate(f *testing.F) {
	f.Add([]byte{3, 4, 0, 1, 1, 1, 0, 1, 2, 1, 1, 0, 1, 1, 0, 0, 1, 1, 1, 1})
	f.Add([]byte{2, 2, 1, 0, 1, 1, 1, 1, 1, 1})
	f.Add([]byte{1, 5, 2, 3, 3, 0, 3, 2, 2, 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 3 {
			return
		}
		np, ni, mode := int(b[0]%6)+1, int(b[1]%6)+1, b[2]
		cells := b[3:]
		persons := make([]string, np)
		items := make([]string, ni)
		for p := range persons {
			persons[p] = fmt.Sprint("p", p)
		}
		for i := range items {
			items[i] = fmt.Sprint("i", i)
		}
		d := NewData(persons, items)
		total := 0
		for k := range d.Right {
			if k < len(cells) {
				c := cells[k]
				d.Trials[k] = int32(c % 4)
				d.Right[k] = int32(c/4%5) - 0 // may exceed trials: refused
				if c == 255 {
					d.Right[k] = -1
				}
				total += int(d.Trials[k])
			}
		}
		o := Options{Model: []Model{TwoPL, Rasch}[mode%2], MaxIter: 60}
		if mode&2 != 0 {
			o.PriorSD = -1
		}
		if mode&4 != 0 && o.Model == Rasch {
			o.FixedA = 1
		}
		fit, err := Estimate(d, o)
		if err != nil {
			return
		}
		trials := 0
		for _, p := range fit.Persons {
			trials += p.Trials
			if !(p.Lo <= p.Theta && p.Theta <= p.Hi) || math.IsNaN(p.SE) || math.IsInf(p.Theta, 0) {
				t.Fatalf("%s: %v in [%v, %v] ± %v", p.ID, p.Theta, p.Lo, p.Hi, p.SE)
			}
		}
		if trials != total {
			t.Fatalf("persons' trials %d, table's %d", trials, total)
		}
		if math.IsNaN(fit.LogLik) || fit.LogLik > 0 {
			t.Fatalf("log-likelihood %v", fit.LogLik)
		}
		for _, it := range fit.Items {
			if o.PriorSD != 0 && (math.IsInf(it.B, 0) || math.IsNaN(it.B) || math.IsInf(it.SEB, 0)) {
				t.Fatalf("%s under a prior: b %v ± %v", it.ID, it.B, it.SEB)
			}
			if math.IsNaN(it.B) || math.IsNaN(it.A) {
				t.Fatalf("%s: a %v b %v", it.ID, it.A, it.B)
			}
		}
	})
}
