#!/usr/bin/python3
# Golden vectors for stats.Quantile (and QuantileSorted, RankQuantile): the
# linear-interpolation quantile, Hyndman and Fan type 7, as numpy.quantile
# computes it by default (Debian python3-numpy 1.24), checked against
# Python's own statistics.quantiles(method="inclusive") at the levels it can
# give (k/100), two implementations independent of ours.
#
# Regenerate:
#   /usr/bin/python3 internal/stats/testdata/quantile.py > internal/stats/testdata/quantile.json
import json
import statistics

import numpy as np

rng = np.random.default_rng(13)
datasets = {
    "one value": [412.0],
    "two values": [100.0, 300.0],
    "ties": [5, 1, 5, 5, 1, 5, 5, 5, 1, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 1, 5],
    "integers 0..19 shuffled": [float(x) for x in rng.permutation(20)],
    "latencies lognormal 37": [round(float(x), 3) for x in rng.lognormal(6.5, 0.6, 37)],
    "latencies lognormal 1000": [round(float(x), 1) for x in rng.lognormal(6.0, 0.8, 1000)],
    "exponential 101": [float(x) for x in rng.exponential(250.0, 101)],
    "negative and positive 64": [float(x) for x in rng.normal(0, 3, 64)],
}
levels = [0, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1]

out = []
for name, xs in datasets.items():
    xs = [float(x) for x in xs]
    want = [float(v) for v in np.quantile(np.array(xs), levels)]
    if len(xs) >= 2:
        cuts = statistics.quantiles(xs, n=100, method="inclusive")  # levels 0.01 … 0.99
        for q, v in zip(levels, want):
            k = round(q * 100)
            if 1 <= k <= 99 and abs(cuts[k - 1] - v) > 1e-9 * max(1.0, abs(v)):
                raise SystemExit(f"{name} q={q}: numpy {v} statistics {cuts[k - 1]}")
    out.append({"name": name, "xs": xs, "q": levels, "want": want})
print(json.dumps(out, indent=1))
