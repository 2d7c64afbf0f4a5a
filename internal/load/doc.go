// Package load owns `assay load`'s analysis: Analyse reads a load test's
// stored steps and requests back into per-step findings with intervals
// (throughput, latency and time-to-first-token percentiles with bootstrap
// intervals over requests, errors by kind with Wilson intervals, cost, the
// harness's health) and each target's knee against an SLO; Gate holds one
// load test against another. The engine that measures them is the
// harness sub-package, which shares PastKnee and Saturated from here.
//
// It imports no provider (report and gate render and judge its types), and
// must not import internal/store, internal/cli, internal/report,
// internal/engine or internal/runner.
package load
