// Package gate owns the regression gate: its rules (from the spec's gate:
// section or --rule flags; a baseline carries the rules of its spec, and
// CompareGates lists what a candidate's spec changed in them and which
// changes relax the gate: basegate.go), and their evaluation on two views
// of runs (runview.View: a stored run or a baseline file) into a Result
// whose checks carry their numbers and a one-line reason (with the unit
// formatters the reasons are written with). A check is decided by
// one-sided paired tests at the limit its rule sets (limit.go): fail when
// the data show the limit crossed, with the fail decisions Holm-adjusted
// over every check of the run; pass when they show it is within; else
// inconclusive. Its percentiles are stats.Quantile's (through
// stats.RankQuantile), the report's. It also measures what `assay plan
// --gate` needs of a run (plan.go). Rendering a Result as text, Markdown,
// JSON or JUnit is the report package's (report.Gate). It reads views and
// never calls a model. It must not import the runner, providers, cli,
// analysis or report.
package gate
