#!/usr/bin/python3
# Golden vectors for selftest's decision rule, from statsmodels'
# proportion_confint (Debian python3-statsmodels), an implementation
# independent of ours. The rule: the Wilson interval at alpha = 0.05 / tests
# (Bonferroni over a scorer's null-model x mode cells); a cell is clearly
# above chance when the interval's lower end exceeds chance + 0.02.
#
# Cases: junk models (chance 0) on GSM8K-sized and small sets, a single
# coincidental pass, the quickstart's constant model (majority class,
# 7 of 26) and the labels fixture (20 of 40), and counts just either side of
# the threshold.
#
# Regenerate:
#   /usr/bin/python3 internal/selftest/testdata/decide.py > internal/selftest/testdata/decide.json
import json

from statsmodels.stats.proportion import proportion_confint

MARGIN = 0.02
cases = [
    # k, n, chance, tests
    (0, 1319, 0.0, 26), (1, 1319, 0.0, 26), (5, 1319, 0.0, 26), (40, 1319, 0.0, 26),
    (60, 1319, 0.0, 26), (80, 1319, 0.0, 26), (1319, 1319, 0.0, 26),
    (40, 1319, 40 / 1319, 26), (11, 1319, 11 / 1319, 26), (100, 1319, 40 / 1319, 26),
    (0, 95, 0.0, 26), (95, 95, 0.0, 26),
    (7, 26, 7 / 26, 28), (26, 26, 7 / 26, 28), (24, 26, 7 / 26, 14), (2, 26, 2 / 26, 28),
    (20, 40, 0.5, 28), (30, 40, 0.5, 28), (40, 40, 0.5, 28), (14, 40, 0.35, 28), (40, 40, 0.0, 28),
    (1, 5, 0.0, 28), (3, 5, 0.0, 28), (5, 5, 0.0, 28),
    (1, 10, 0.0, 1), (2, 10, 0.0, 1), (3, 10, 0.0, 1), (10, 10, 0.9, 1),
    (1, 1, 0.0, 1), (1, 1, 0.0, 28), (0, 1, 0.0, 1),
    (500, 1000, 0.45, 10), (540, 1000, 0.45, 10), (600, 1000, 0.45, 10),
]
out = []
for k, n, chance, tests in cases:
    alpha = 0.05 / tests
    lo, hi = proportion_confint(k, n, alpha=alpha, method="wilson")
    out.append({"k": k, "n": n, "chance": chance, "tests": tests, "alpha": alpha,
                "lo": lo, "hi": hi, "above": bool(lo > chance + MARGIN)})
print(json.dumps(out, indent=1))
