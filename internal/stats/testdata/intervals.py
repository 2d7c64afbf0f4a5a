#!/usr/bin/python3
# Golden vectors for the proportion intervals (Wilson, Clopper–Pearson,
# Jeffreys), computed by statsmodels' proportion_confint (Debian
# python3-statsmodels 0.13.5 on scipy 1.10.1), an implementation independent
# of ours. statsmodels calls Clopper–Pearson "beta"; we call it
# "clopper_pearson".
#
# Regenerate:
#   /usr/bin/python3 internal/stats/testdata/intervals.py > internal/stats/testdata/intervals.json
import json
import math

from statsmodels.stats.proportion import proportion_confint

# Edge cases first: no successes, all successes, a single trial, tiny and
# large n; then ordinary counts (GSM8K-sized and a 100,000-case run).
cases = [
    (0, 1), (1, 1),
    (0, 2), (1, 2), (2, 2),
    (0, 5), (5, 5), (2, 5),
    (5, 7),
    (0, 20), (1, 20), (10, 20), (19, 20), (20, 20),
    (3, 10), (50, 100), (151, 200),
    (286, 1319), (742, 1319), (1318, 1319),
    (999, 1000),
    (0, 2000), (1, 2000), (1000, 2000), (1999, 2000), (2000, 2000),
    (0, 100000), (7, 100000), (70123, 100000), (100000, 100000),
]
methods = {"wilson": "wilson", "clopper_pearson": "beta", "jeffreys": "jeffreys"}

out = []
for method, sm_method in methods.items():
    for k, n in cases:
        for alpha in (0.05, 0.1, 0.01):
            lo, hi = proportion_confint(k, n, alpha=alpha, method=sm_method)
            lo, hi = float(lo), float(hi)
            assert math.isfinite(lo) and math.isfinite(hi), (method, k, n, alpha)
            out.append({"method": method, "k": k, "n": n, "alpha": alpha, "lo": lo, "hi": hi})
print(json.dumps(out, indent=0))
