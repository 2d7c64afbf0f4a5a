#!/usr/bin/python3
# Reference numbers for `assay drift`, computed by statsmodels and scipy
# (Debian python3-statsmodels / python3-scipy), independently of assay.
# For each scenario of n paired results with p2f pass→fail flips, f2p
# fail→pass flips and `identical` byte-identical outputs, at temperature 0:
#   - the flip rate's Wilson 95% interval (statsmodels proportion_confint)
#   - McNemar's exact two-sided p (statsmodels mcnemar, exact=True; checked
#     against scipy's binomtest)
#   - the identical-output rate's Wilson 95% interval
#   - the verdict by the documented rule, uncalibrated: drifted when
#     p < 0.05 (fingerprints unchanged); the identical-output rate decides
#     nothing without a calibration.
# Regenerate: /usr/bin/python3 internal/cli/testdata/drift_reference.py > internal/cli/testdata/drift_reference.json
import json
from scipy.stats import binomtest
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

scenarios = [
    # n, pass→fail, fail→pass, identical
    (200, 23, 9, 160),
    (30, 6, 0, 21),
    (1319, 120, 45, 10),
    (50, 0, 0, 50),
    (100, 1, 0, 99),
    (400, 7, 3, 385),
    (60, 2, 9, 44),
]
out = []
for n, p2f, f2p, ident in scenarios:
    flipped = p2f + f2p
    both = n - flipped  # concordant pairs (how they split does not matter)
    table = [[both, p2f], [f2p, 0]]
    p = mcnemar(table, exact=True).pvalue
    if flipped:
        pb = binomtest(min(p2f, f2p), flipped, 0.5).pvalue
        assert abs(p - pb) <= 1e-12 * max(p, 1e-300), (p, pb)
    flo, fhi = proportion_confint(flipped, n, alpha=0.05, method="wilson")
    ilo, ihi = proportion_confint(ident, n, alpha=0.05, method="wilson")
    drifted = p < 0.05
    out.append({
        "n": n, "pass_to_fail": p2f, "fail_to_pass": f2p, "identical": ident,
        "flip_ci": [flo, fhi], "p_value": p, "identical_ci": [ilo, ihi],
        "verdict": "drifted" if drifted else "stable",
    })
print(json.dumps(out, indent=1))
