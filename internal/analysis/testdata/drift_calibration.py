#!/usr/bin/python3
# Reference numbers for the calibrated tests of `assay drift`, computed by
# statsmodels (Debian python3-statsmodels), independently of assay: the
# one-sided two-sample z test of two proportions with the pooled variance,
# statsmodels.stats.proportion.proportions_ztest, the canary's count first
# and the calibration's second:
#   - identical outputs: alternative "smaller" (fewer identical than the
#     model's own self-agreement);
#   - verdict flips: alternative "larger" (more flips than its own).
# Cross-checked against scipy.stats.norm on the z statistic.
# Regenerate: /usr/bin/python3 internal/analysis/testdata/drift_calibration.py > internal/analysis/testdata/drift_calibration.json
import json
from scipy.stats import norm
from statsmodels.stats.proportion import proportions_ztest

scenarios = [
    # canary x, n; calibration x, n; alternative
    (170, 200, 172, 200, "smaller"),
    (120, 200, 172, 200, "smaller"),
    (28, 30, 30, 30, "smaller"),
    (6, 200, 5, 200, "larger"),
    (30, 200, 6, 200, "larger"),
    (9, 152, 3, 152, "larger"),
    (1300, 1319, 1310, 1319, "smaller"),
    (40, 400, 12, 380, "larger"),
]
out = []
for x1, n1, x0, n0, alt in scenarios:
    z, p = proportions_ztest([x1, x0], [n1, n0], value=0, alternative=alt)
    q = norm.cdf(z) if alt == "smaller" else norm.sf(z)
    assert abs(p - q) <= 1e-12, (p, q)
    out.append({"x1": x1, "n1": n1, "x0": x0, "n0": n0, "alternative": alt, "z": z, "p_value": p})
print(json.dumps(out, indent=1))
