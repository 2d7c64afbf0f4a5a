package analysis

// ResultRow is one result of a run as the primary scorer saw it: the
// per-case × target × epoch detail that the JUnit report lists (one test
// case per row). Analyze does not build these; a caller that wants them
// joins the run's stored results with the primary scorer's scores of the
// chosen scoring (store.Results × store.Scores on case, target and epoch).
type ResultRow struct {
	Target string
	CaseID string
	Epoch  int // 1-based
	Pass   bool
	// Shape is pass, loud or silent; Kind the failure kind (wrong, empty,
	// unparseable, timeout, …); Reason the scorer's explanation.
	Shape  string
	Kind   string
	Reason string
	// Raw is the model's output (or the call's error when there was none);
	// hostile: every renderer escapes it.
	Raw string
	// Expected is the case's reference answer, as text, when it has one.
	Expected  string
	LatencyMS float64
}
