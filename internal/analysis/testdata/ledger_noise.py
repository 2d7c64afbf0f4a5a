#!/usr/bin/python3
# Reference values for the selection ledger and the epoch-noise figures,
# from scipy, numpy and statsmodels (Debian python3-scipy 1.10.1, numpy
# 1.24, statsmodels 0.13.5): implementations independent of ours.
#
# "expected_max": E[max of N independent standard normals], by
#   scipy.integrate.quad of x·N·φ(x)·Φ(x)^(N−1) over the real line.
# "noise": per-epoch rates over the cases scored in every epoch, their
#   sample standard deviation (numpy ddof=1), the mean within-case variance
#   (ddof=1 per case), the variance of every verdict (ddof=1) and the
#   within-case share (their ratio).
# "ledger": fixed variants (pass/fail per case and epoch) compared with the
#   reference variant 0: McNemar exact p (statsmodels mcnemar, exact=True)
#   with one epoch, paired t p (scipy ttest_rel on per-case means) with
#   several; Holm over the N−1 comparisons (statsmodels multipletests);
#   σ = the root mean square of the variants' standard errors (sample sd of
#   the per-case means, ddof=1, over √cases); the inflation σ·E[max of N];
#   the chosen rate less the inflation.
#
# Regenerate:
#   /usr/bin/python3 internal/analysis/testdata/ledger_noise.py > internal/analysis/testdata/ledger_noise.json
import json
import math

import numpy as np
from scipy import integrate, stats
from statsmodels.sandbox.stats.multicomp import multipletests
from statsmodels.stats.contingency_tables import mcnemar


def expected_max(n):
    if n == 1:
        return 0.0
    f = lambda x: x * n * stats.norm.pdf(x) * stats.norm.cdf(x) ** (n - 1)
    v, err = integrate.quad(f, -np.inf, np.inf, epsabs=1e-13, epsrel=1e-12, limit=500)
    assert err < 1e-9, (n, err)
    return v


out = {"expected_max": [{"n": n, "e": expected_max(n)} for n in (1, 2, 3, 4, 5, 7, 10, 20, 50, 100, 1000, 10000)]}

rng = np.random.default_rng(20240606)

# Noise: a few verdict matrices (cases × epochs).
noise = []
for name, cases, epochs, p in [("20 cases × 2 epochs", 20, 2, 0.6), ("50 cases × 5 epochs", 50, 5, 0.7),
                               ("200 cases × 3 epochs", 200, 3, 0.35), ("12 cases × 10 epochs", 12, 10, 0.5)]:
    # Each case has its own difficulty, so there is between-case variance.
    q = np.clip(p + rng.normal(0, 0.25, cases), 0.02, 0.98)
    m = (rng.uniform(0, 1, (cases, epochs)) < q[:, None]).astype(int)
    rates = m.mean(axis=0)
    within = m.var(axis=1, ddof=1).mean()
    total = m.reshape(-1).var(ddof=1)
    noise.append({"name": name, "verdicts": m.tolist(), "epoch_rates": rates.tolist(),
                  "between_run_sd": float(np.std(rates, ddof=1)), "within_case_variance": float(within),
                  "total_variance": float(total), "within_case_share": float(min(1.0, within / total))})
out["noise"] = noise

# Ledger: N variants on the same cases; variant 0 is the reference.
ledgers = []
for name, n_var, cases, epochs, rates, chosen in [
    ("6 variants, 1 epoch", 6, 80, 1, [0.55, 0.6, 0.5, 0.72, 0.58, 0.62], 3),
    ("4 variants, 3 epochs", 4, 40, 3, [0.5, 0.55, 0.7, 0.52], 2),
]:
    vs = [(rng.uniform(0, 1, (cases, epochs)) < r).astype(int) for r in rates]
    means = [v.mean(axis=1) for v in vs]
    ses = [float(np.std(m, ddof=1) / math.sqrt(cases)) for m in means]
    ps = []
    for i in range(1, n_var):
        if epochs == 1:
            a, b = vs[i][:, 0], vs[0][:, 0]
            table = [[int(((a == 1) & (b == 1)).sum()), int(((a == 1) & (b == 0)).sum())],
                     [int(((a == 0) & (b == 1)).sum()), int(((a == 0) & (b == 0)).sum())]]
            ps.append(float(mcnemar(table, exact=True).pvalue))
        else:
            ps.append(float(stats.ttest_rel(means[i], means[0]).pvalue))
    adj = multipletests(ps, method="holm")[1].tolist()
    sigma = math.sqrt(sum(s * s for s in ses) / n_var)
    e = expected_max(n_var)
    ledgers.append({"name": name, "epochs": epochs, "chosen": chosen,
                    "verdicts": [v.tolist() for v in vs],
                    "rates": [float(m.mean()) for m in means], "ses": ses,
                    "deltas": [float(means[i].mean() - means[0].mean()) for i in range(1, n_var)],
                    "p_values": ps, "p_adjusted": adj, "sigma": sigma, "expected_max_z": e,
                    "inflation": sigma * e, "deflated_rate": float(means[chosen].mean()) - sigma * e})
out["ledger"] = ledgers

print(json.dumps(out, indent=1))
