// Package irt fits item-response models to counts of right answers: Rasch
// (one discrimination shared by every item, estimated or fixed) and the
// two-parameter logistic model, by marginal maximum likelihood (Bock–Aitkin
// EM over a fixed Gauss–Hermite grid on N(0,1), a Newton step per item in the
// M-step), with optional weak priors that keep all-right and all-wrong items
// finite. It gives standard errors of the item parameters from the observed
// information of the marginal likelihood, EAP abilities with posterior SDs and
// intervals, item and test information, and a convergence report. Pure
// numerics: it imports nothing of assay and does no I/O.
package irt

// Model names an item-response model.
type Model string

const (
	Rasch Model = "rasch" // one discrimination shared by every item (estimated, or fixed by Options.FixedA)
	TwoPL Model = "2pl"
)

// Data holds counts: Right[p*len(Items)+i] successes of Trials[...] (0 trials = missing).
type Data struct {
	Persons, Items []string
	Right, Trials  []int32
}

// NewData returns an empty table (every response missing) of persons × items.
func NewData(persons, items []string) *Data {
	n := len(persons) * len(items)
	return &Data{Persons: persons, Items: items, Right: make([]int32, n), Trials: make([]int32, n)}
}

// Add adds right successes out of trials to person × item (indices into
// Persons and Items; out of range panics). Several calls for one cell add
// up: each epoch may be added as it comes.
func (d *Data) Add(person, item, right, trials int) {
	k := person*len(d.Items) + item
	d.Right[k] += int32(right)
	d.Trials[k] += int32(trials)
}

// Options configures Estimate.
type Options struct {
	Model   Model
	Points  int     // quadrature points over N(0,1); 0 = 21
	PriorSD float64 // SD of a weak N(0,sd²) prior on b, and N(0,(sd/4)²) on log a; 0 = none (plain MML, as ltm); <0 = DefaultPriorSD (2.0 on b, 0.5 on log a)
	FixedA  float64 // Rasch only: >0 fixes the common discrimination (1 = textbook Rasch)
	MaxIter int     // 0 = 500
	Tol     float64 // 0 = 1e-6 on the largest parameter change
	Level   float64 // ability interval level; 0 = 0.95
}

// Item is one item's estimate. IRT parametrisation:
// P(right | θ) = 1 / (1 + exp(−A(θ − B))).
type Item struct {
	ID      string  `json:"id"`
	A       float64 `json:"a"`
	B       float64 `json:"b"`
	SEA     float64 `json:"se_a"`
	SEB     float64 `json:"se_b"` // from the observed information of the marginal likelihood; SEA is 0 when A is fixed
	Right   int     `json:"right"`
	Trials  int     `json:"trials"`
	Extreme bool    `json:"extreme"` // all right or all wrong: finite only through the prior (or ±Inf without one)
}

// Person is one respondent's ability.
type Person struct {
	ID     string  `json:"id"`
	Theta  float64 `json:"theta"`
	SE     float64 `json:"se"` // EAP and posterior SD
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"` // interval at Options.Level
	Right  int     `json:"right"`
	Trials int     `json:"trials"`
}

// InfoPoint is the test information at one ability.
type InfoPoint struct { // SE = 1/sqrt(Info)
	Theta float64 `json:"theta"`
	Info  float64 `json:"info"`
	SE    float64 `json:"se"`
}

// Fit is Estimate's result.
type Fit struct {
	Model      Model    `json:"model"`
	Items      []Item   `json:"items"`   // in Data.Items' order
	Persons    []Person `json:"persons"` // in Data.Persons' order
	LogLik     float64  `json:"log_lik"` // marginal log-likelihood at the estimate, prior excluded
	Iterations int      `json:"iterations"`
	Converged  bool     `json:"converged"`
	MaxChange  float64  `json:"max_change"` // the last iteration's largest parameter change
	Points     int      `json:"points"`
	PriorSD    float64  `json:"prior_sd"`
	Warnings   []string `json:"warnings"` // e.g. few respondents, extreme items, not converged
}
