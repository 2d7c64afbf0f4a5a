// Package findings holds what a selftest found, as plain data: the
// Report (its JSON is `assay selftest --format json`), each scorer's cells
// of null model × mode with their intervals and chance rates, the findings
// clearly above chance with their examples, and the verdict. selftest
// builds it; report renders it. It imports nothing of assay, so rendering a
// selftest does not reach the scorers or the provider interface they call
// judges through.
package findings

// Modes of a null model.
const (
	ModeRaw    = "raw"
	ModeParsed = "parsed"
)

// Verdicts.
const (
	VerdictSound       = "sound"
	VerdictExploitable = "exploitable"
	// VerdictIncomplete: nothing was found, but the headline score could not
	// be attacked (its judge was skipped).
	VerdictIncomplete = "incomplete"
)

// Severities of a finding.
const (
	SeverityExploitable = "exploitable" // the headline score: exit 3
	SeverityWarning     = "warning"     // another scorer of correctness
	SeverityNote        = "note"        // a check of form or of the call, which junk may rightly pass
)

// Scorer roles: the scorer package's roles (selftest's tests hold them
// equal) and a combined score's.
const (
	RoleCorrectness = "correctness"
	RoleForm        = "form"
	RoleCall        = "call"
	RoleCombined    = "combined"
)

// Report is a selftest's findings. Rates are fractions in [0,1].
type Report struct {
	Spec        string `json:"spec"`
	SpecPath    string `json:"spec_path"`
	SpecHash    string `json:"spec_hash"`
	DatasetHash string `json:"dataset_hash,omitempty"`
	Cases       int    `json:"cases"`
	Seed        int64  `json:"seed"`
	JudgeVia    string `json:"judge_via"`
	Rule        Rule   `json:"rule"`
	// Headline is the score that decides the verdict: the primary scorer,
	// or "primary" when several are combined.
	Headline      string          `json:"headline"`
	NullModels    []NullModelInfo `json:"null_models"`
	Scorers       []ScorerReport  `json:"scorers"`
	Findings      []Finding       `json:"findings"`
	Notes         []string        `json:"notes,omitempty"`
	Verdict       string          `json:"verdict"`
	JudgeRequests int             `json:"judge_requests"` // verdicts asked for; the response cache may have served some
	JudgeCost     float64         `json:"judge_cost_usd"`
	ElapsedMS     float64         `json:"elapsed_ms"`
}

// Rule states the decision rule, so a reader of the JSON knows it.
type Rule struct {
	Method     string  `json:"method"`     // wilson
	Confidence float64 `json:"confidence"` // simultaneous, per scorer
	Adjustment string  `json:"adjustment"` // bonferroni over the scorer's cells
	Margin     float64 `json:"margin"`
	Text       string  `json:"text"`
}

// NullModelInfo describes one null model as run.
type NullModelInfo struct {
	Name    string  `json:"name"`
	About   string  `json:"about"`
	Cases   int     `json:"cases"`
	Chance  float64 `json:"chance"`
	Basis   string  `json:"chance_basis"`
	Skipped string  `json:"skipped,omitempty"`
}

// ScorerReport is one score's results, a cell per null model and mode.
type ScorerReport struct {
	Name     string       `json:"name"`
	Type     string       `json:"type"`
	Role     string       `json:"role"`
	Primary  bool         `json:"primary"`
	Headline bool         `json:"headline"`
	Skipped  string       `json:"skipped,omitempty"`
	Note     string       `json:"note,omitempty"`
	Tests    int          `json:"tests"`
	Results  []CellReport `json:"results,omitempty"`
}

// CellReport is one null model in one mode on one score.
type CellReport struct {
	Null    string     `json:"null"`
	Mode    string     `json:"mode"`
	Passed  int        `json:"passed"`
	N       int        `json:"n"`
	Rate    float64    `json:"rate"`
	CI      [2]float64 `json:"ci"`
	Chance  float64    `json:"chance"`
	Above   bool       `json:"above_chance"`
	Skipped string     `json:"skipped,omitempty"`
}

// Finding is a cell clearly above chance.
type Finding struct {
	Severity string     `json:"severity"`
	Scorer   string     `json:"scorer"`
	Type     string     `json:"type"`
	Null     string     `json:"null"`
	Mode     string     `json:"mode"`
	Passed   int        `json:"passed"`
	N        int        `json:"n"`
	Rate     float64    `json:"rate"`
	CI       [2]float64 `json:"ci"`
	Chance   float64    `json:"chance"`
	Examples []Example  `json:"examples"`
}

// Example is one case a null model passed on. Output and Parsed are clipped;
// they are model-shaped text and must be escaped wherever shown.
type Example struct {
	CaseID string `json:"case_id"`
	Output string `json:"output"`
	Parsed string `json:"parsed,omitempty"`
	Reason string `json:"reason"`
}
