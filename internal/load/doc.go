// Package load owns `assay load`'s engine and its analysis: it sends a
// target's rendered prompts at a schedule — an open loop of seeded Poisson
// (or evenly spaced) arrivals that never wait for replies, or a closed loop
// at a fixed concurrency — one step after another, measures every request
// (latency, time to first token, inter-token latency, tokens, cost, the
// provider error's kind) and the harness's own health (its CPU and how late
// it started requests), and hands both to a Sink (the store, through the
// caller). Analyse reads stored steps and requests back into per-step
// findings with intervals, each target's knee against an SLO, and Gate holds
// one load test against another.
//
// It calls providers already built by the caller (without retries or
// cache: a 429 under load is a finding), renders nothing and stores
// nothing itself; it must not import internal/store, internal/cli,
// internal/report, internal/engine or internal/runner.
package load
