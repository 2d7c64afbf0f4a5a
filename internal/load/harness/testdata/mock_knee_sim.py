#!/usr/bin/python3
"""Where the must-show steps of mock_knee_test.go land, simulated apart from
the Go code (numpy, statsmodels): run with /usr/bin/python3.

1. `assay mock --capacity 8 --latency 50ms`: an M/D/8 FIFO queue fed by
   Poisson arrivals for a 0.5 s warm-up and a 2 s window; p95 of the latency
   of requests started in the window, over 200 runs per level, for service
   times of 50 ms (the mock) and longer (a busy machine's late timers), and
   how often it exceeds the test's 400 ms SLO.
2. `assay mock --rate 100 --burst 20`: a token bucket (golang.org/x/time/rate
   refills continuously, starts full) fed by Poisson arrivals for 2 s; the
   share refused and how often the Wilson 95% upper bound of the error rate
   exceeds the test's 5% SLO, over 200 runs per level.
"""
import heapq

import numpy as np
from statsmodels.stats.proportion import proportion_confint

rng = np.random.default_rng(20)


def arrivals(rate, span):
    t, out = 0.0, []
    while True:
        t += rng.exponential(1 / rate)
        if t > span:
            return out
        out.append(t)


def capacity_p95(rate, service, slots=8, warm=0.5, window=2.0):
    free = [0.0] * slots
    lat = []
    for a in arrivals(rate, warm + window):
        f = heapq.heappop(free)
        end = max(a, f) + service
        heapq.heappush(free, end)
        if a >= warm:
            lat.append(end - a)
    return np.quantile(lat, 0.95)


def bucket(rate, limit, burst, window=2.0):
    tokens, last, n, refused = float(burst), 0.0, 0, 0
    for a in arrivals(rate, window):
        tokens = min(burst, tokens + (a - last) * limit)
        last = a
        n += 1
        if tokens >= 1:
            tokens -= 1
        else:
            refused += 1
    hi = proportion_confint(refused, n, 0.05, method="wilson")[1]
    return refused / n, hi


print("capacity 8 x service: p95 (ms) over 200 runs; P(p95 > 400 ms)")
for service in (0.050, 0.053, 0.057, 0.062):
    for rate in (145, 180, 220):
        p = np.array([capacity_p95(rate, service) for _ in range(200)])
        print(f"  service {service*1e3:.0f} ms, {rate} req/s: median {np.median(p)*1e3:.0f}, "
              f"5%-95% {np.quantile(p, .05)*1e3:.0f}-{np.quantile(p, .95)*1e3:.0f}, P(>400) {(p > 0.4).mean():.2f}")

print("rate limit 100/s, burst 20: refused share; P(Wilson upper > 5%)")
for rate in (50, 90, 110, 140):
    r = [bucket(rate, 100, 20) for _ in range(200)]
    e = np.array([x[0] for x in r])
    hi = np.array([x[1] for x in r])
    print(f"  {rate} req/s: refused median {np.median(e):.3f}, max {e.max():.3f}; P(upper > 5%) {(hi > 0.05).mean():.2f}")
