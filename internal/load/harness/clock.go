package harness

import "time"

// The engine's one read of the wall clock. A load test measures real
// time — a schedule is kept by real timers, a latency is real elapsed
// time — so it cannot take a clock that tests fix; only the steps' start
// times come from Options.Now.

func wallNow() time.Time              { return time.Now() }
func since(t time.Time) time.Duration { return wallNow().Sub(t) }
func until(t time.Time) time.Duration { return t.Sub(wallNow()) }
