package dataset

import (
	"crypto/sha256"
	"math"
)

// Deduper tells whether a new input repeats a case already held: the same
// normalised text (an exact duplicate, as CheckHealth's exact groups) or a
// token set whose Jaccard similarity with a held case's is at least the
// threshold (a near-duplicate, as CheckHealth's pairs: the same
// normalisation, tokens and measure). It compares a new input with every
// case held, so it suits checking a batch of additions against a dataset;
// CheckHealth's all-pairs search is for the dataset itself.
type Deduper struct {
	threshold float64
	tokens    map[string]int32
	cases     []healthCase
	byKey     map[[16]byte]int
}

// Duplicate is the held case a new input repeats.
type Duplicate struct {
	Of CaseRef `json:"of"`
	// Similarity is the token-set Jaccard similarity (1 for an exact
	// duplicate).
	Similarity float64 `json:"similarity"`
	Exact      bool    `json:"exact"`
}

// NewDeduper makes a Deduper with a near-duplicate threshold in (0, 1] (0:
// DefaultDupThreshold, as dataset health).
func NewDeduper(threshold float64) (*Deduper, error) {
	o := HealthOptions{DupThreshold: threshold}
	if err := o.check(); err != nil {
		return nil, err
	}
	o = o.withDefaults()
	return &Deduper{threshold: o.DupThreshold, tokens: map[string]int32{}, byKey: map[[16]byte]int{}}, nil
}

// Threshold is the near-duplicate threshold in use.
func (d *Deduper) Threshold() float64 { return d.threshold }

// Add holds a case's input text (as written: it is normalised here).
func (d *Deduper) Add(ref CaseRef, text string) {
	hc := d.healthCase(ref, text)
	if _, ok := d.byKey[hc.key]; !ok {
		d.byKey[hc.key] = len(d.cases)
	}
	d.cases = append(d.cases, hc)
}

// Find returns the held case text repeats: an exact duplicate first, else
// the most similar near-duplicate (the earliest held among equals); ok is
// false when there is none.
func (d *Deduper) Find(text string) (dup Duplicate, ok bool) {
	hc := d.healthCase(CaseRef{}, text)
	if i, found := d.byKey[hc.key]; found {
		return Duplicate{Of: d.cases[i].ref, Similarity: 1, Exact: true}, true
	}
	if len(hc.tokens) == 0 {
		return dup, false
	}
	const eps = 1e-9
	best := -1.0
	for i := range d.cases {
		c := &d.cases[i]
		if len(c.tokens) == 0 {
			continue
		}
		// J ≤ min/max of the sizes: skip what cannot reach the threshold.
		lo, hi := min(len(c.tokens), len(hc.tokens)), max(len(c.tokens), len(hc.tokens))
		if float64(lo) < d.threshold*float64(hi)-eps {
			continue
		}
		inter := intersectSize(c.tokens, hc.tokens)
		j := float64(inter) / float64(len(c.tokens)+len(hc.tokens)-inter)
		if j >= d.threshold-eps && j > best {
			best = j
			dup = Duplicate{Of: c.ref, Similarity: math.Round(j*1e4) / 1e4}
		}
	}
	return dup, best >= 0
}

func (d *Deduper) healthCase(ref CaseRef, text string) healthCase {
	t := NormalizeText(text)
	hc := healthCase{ref: ref, text: t}
	sum := sha256.Sum256([]byte(t))
	copy(hc.key[:], sum[:16])
	hc.tokens = tokenIDs(t, d.tokens)
	return hc
}
