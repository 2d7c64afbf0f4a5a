#!/usr/bin/python3
# Golden vectors for Wilson score intervals, computed by statsmodels (Debian
# python3-statsmodels), an implementation independent of ours.
# Regenerate: /usr/bin/python3 internal/stats/testdata/wilson.py > internal/stats/testdata/wilson.json
import json
from statsmodels.stats.proportion import proportion_confint
cases = [(151, 200), (0, 20), (20, 20), (1, 20), (286, 1319), (515, 1319), (458, 1319), (742, 1319), (5, 7), (1, 1), (999, 1000), (1000, 2000)]
out = []
for k, n in cases:
    for alpha in (0.05, 0.1):
        lo, hi = proportion_confint(k, n, alpha=alpha, method="wilson")
        out.append({"k": k, "n": n, "alpha": alpha, "lo": lo, "hi": hi})
print(json.dumps(out, indent=1))
