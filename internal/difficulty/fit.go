package difficulty

import (
	"errors"

	"github.com/assay-eval/assay/internal/irt"
	"github.com/assay-eval/assay/internal/stats"
)

// Fitted is `assay difficulty`'s result.
type Fitted struct {
	Scale      Scale
	Sources    []string // run IDs / files read
	Fit        *irt.Fit
	Cases      []CaseDifficulty // sorted hardest first
	Targets    []Ability
	Curve      []irt.InfoPoint // test information over the ability axis
	Separates  [2]float64      // the θ range where the test SE is below SeparateSE
	SeparateSE float64
	Tiers      []Tier // when a tag is also given: per tier the fitted mean difficulty and per-target rates
	Warnings   []string
}

// CaseDifficulty is one case's fitted difficulty.
type CaseDifficulty struct {
	ID            string
	B, SE         float64
	A             float64
	Right, Trials int
	Extreme       bool
	Tag           string
}

// Ability is one target's fitted ability.
type Ability struct {
	Target            string
	Theta, SE, Lo, Hi float64
	Right, Trials     int
}

// Tier is one value of the difficulty tag: its cases' fitted mean
// difficulty and each target's rate on them.
type Tier struct {
	Label string
	Value float64
	Cases int
	MeanB float64
	Rates []Rate
}

// Rate is one target's pass rate on some cases (over epochs) with its
// Wilson interval.
type Rate struct {
	Target    string
	Passed, N int
	Rate      float64
	CI        stats.Interval
}

// FitOptions configures Fit.
type FitOptions struct {
	Model   string
	PriorSD float64
	Points  int
	Level   float64
	Tag     string
	Levels  []string
}

// Fit joins sets by case ID and target name and fits an item-response
// model; it refuses a disconnected design.
func Fit(sets []*Set, o FitOptions) (*Fitted, error) {
	return nil, errors.New("difficulty: Fit not implemented yet")
}
