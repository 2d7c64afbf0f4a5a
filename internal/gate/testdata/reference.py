#!/usr/bin/python3
# Reference values for the gate's rules (evaluate.go), computed by
# implementations independent of ours: statsmodels 0.13.5, scipy 1.10.1 and
# numpy (Debian python3-statsmodels / python3-scipy).
#
# Regenerate (from the module root):
#   /usr/bin/python3 internal/gate/testdata/reference.py > internal/gate/testdata/reference.json
#
# The data are drawn here with a fixed seed and written into the JSON, so the
# Go test builds its snapshots from exactly these vectors. Sources, per rule:
#   rate max_drop     McNemar exact p: statsmodels mcnemar(exact=True);
#                     Newcombe (1998) method 10 square-and-add interval from
#                     statsmodels' Wilson intervals (the formula as in the R
#                     package contingencytables), checked against its
#                     published example before anything is written.
#   rate min          statsmodels proportion_confint(method="wilson").
#   slice             the same on the cases with tier == "hard".
#   loud_rate         McNemar exact / Newcombe on "was the result loud".
#   cost max_rise     scipy ttest_rel (candidate, baseline) and Student's t
#                     interval of the mean difference (scipy t.ppf, sd n-1).
#   cost max          Student's t interval of the candidate's mean cost.
#   latency p95       numpy.percentile (linear), the point values only: the
#                     bootstrap intervals depend on the generator.
#   epochs (3)        per-case means of the epochs; scipy ttest_rel on them.
import json
import math

import numpy as np
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

ALPHA = 0.05


def newcombe(a, b, alpha):
    """Newcombe square-and-add CI for rate(a) - rate(b), paired."""
    n11 = int(np.sum(a & b))
    n12 = int(np.sum(a & ~b))
    n21 = int(np.sum(~a & b))
    n22 = int(np.sum(~a & ~b))
    N = n11 + n12 + n21 + n22
    r1, r2 = n11 + n12, n21 + n22
    c1, c2 = n11 + n21, n12 + n22
    p1, p2 = r1 / N, c1 / N
    est = p1 - p2
    l1, u1 = proportion_confint(r1, N, alpha=alpha, method="wilson")
    l2, u2 = proportion_confint(c1, N, alpha=alpha, method="wilson")
    if r1 == 0 or r2 == 0 or c1 == 0 or c2 == 0:
        psi = 0.0
    else:
        A = n11 * n22 - n12 * n21
        nprod = r1 * r2 * c1 * c2
        if A > N / 2:
            psi = (A - N / 2) / math.sqrt(nprod)
        elif A >= 0:
            psi = 0.0
        else:
            psi = A / math.sqrt(nprod)
    L = est - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2 - 2 * psi * (p1 - l1) * (u2 - p2))
    U = est + math.sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2 - 2 * psi * (p2 - l2) * (u1 - p1))
    return est, max(-1.0, L), min(1.0, U), n12, n21


def check_published():
    # contingencytables test-ch8.R, Cavo et al. (2012): rbind(c(59, 6), c(16, 80)).
    a = np.array([True] * 65 + [False] * 96)
    b = np.array([True] * 59 + [False] * 6 + [True] * 16 + [False] * 80)
    est, L, U, _, _ = newcombe(a, b, 0.05)
    assert round(est, 4) == -0.0621 and round(L, 4) == -0.1186 and round(U, 4) == -0.0046, (est, L, U)


def paired_rate(cand, base):
    est, lo, hi, b, c = newcombe(cand, base, ALPHA)
    p = float(mcnemar([[0, b], [c, 0]], exact=True).pvalue)
    return {"baseline": float(base.mean()), "candidate": float(cand.mean()), "delta": est,
            "ci": [lo, hi], "p": p, "n": int(len(cand))}


def wilson(x):
    lo, hi = proportion_confint(int(x.sum()), len(x), alpha=ALPHA, method="wilson")
    return {"candidate": float(x.mean()), "ci": [float(lo), float(hi)], "n": int(len(x))}


def paired_t(cand, base):
    d = cand - base
    n = len(d)
    se = d.std(ddof=1) / math.sqrt(n)
    tq = stats.t.ppf(1 - ALPHA / 2, n - 1)
    res = stats.ttest_rel(cand, base)
    return {"baseline": float(base.mean()), "candidate": float(cand.mean()), "delta": float(d.mean()),
            "ci": [float(d.mean() - tq * se), float(d.mean() + tq * se)], "p": float(res.pvalue), "n": n}


def t_mean(x):
    n = len(x)
    se = x.std(ddof=1) / math.sqrt(n)
    tq = stats.t.ppf(1 - ALPHA / 2, n - 1)
    return {"candidate": float(x.mean()), "ci": [float(x.mean() - tq * se), float(x.mean() + tq * se)], "n": n}


def main():
    check_published()
    rng = np.random.RandomState(20261202)
    n = 300
    tier = np.where(rng.rand(n) < 0.4, "hard", "easy")
    base = rng.rand(n) < np.where(tier == "hard", 0.6, 0.85)
    cand = base.copy()
    idx = rng.permutation(n)
    cand[idx[:40]] = False  # broken (where they passed)
    cand[idx[40:48]] = True  # fixed
    # Failure shapes: a failure is loud with probability 0.3 (baseline) and
    # 0.5 (candidate), else silent.
    base_loud = (~base) & (rng.rand(n) < 0.3)
    cand_loud = (~cand) & (rng.rand(n) < 0.5)
    base_cost = rng.lognormal(math.log(0.001), 0.5, n)
    cand_cost = base_cost * 1.08 + rng.normal(0, 0.0001, n).clip(-0.0005, None)
    cand_cost = cand_cost.clip(0, None)
    base_lat = rng.gamma(4.0, 200.0, n)
    cand_lat = base_lat * 1.1 + rng.normal(0, 30, n)
    cand_lat = cand_lat.clip(1, None)

    hard = tier == "hard"
    out = {
        "alpha": ALPHA,
        "data": {
            "tier": tier.tolist(),
            "base_pass": base.astype(int).tolist(), "cand_pass": cand.astype(int).tolist(),
            "base_loud": base_loud.astype(int).tolist(), "cand_loud": cand_loud.astype(int).tolist(),
            "base_cost": base_cost.tolist(), "cand_cost": cand_cost.tolist(),
            "base_latency": base_lat.tolist(), "cand_latency": cand_lat.tolist(),
        },
        "rate": paired_rate(cand, base),
        "rate_floor": wilson(cand),
        "slice_hard": paired_rate(cand[hard], base[hard]),
        "loud": paired_rate(cand_loud, base_loud),
        "loud_ceiling": wilson(cand_loud),
        "cost": paired_t(cand_cost, base_cost),
        "cost_ceiling": t_mean(cand_cost),
        "latency_p95": {"baseline": float(np.percentile(base_lat, 95)), "candidate": float(np.percentile(cand_lat, 95))},
    }

    # Three epochs: per-case means, compared by the paired t-test.
    m = 120
    p_case = rng.beta(2, 1, m)
    base3 = rng.rand(m, 3) < p_case[:, None]
    cand3 = rng.rand(m, 3) < (p_case[:, None] - 0.12)
    out["epochs"] = {
        "base_pass": base3.astype(int).tolist(), "cand_pass": cand3.astype(int).tolist(),
        "rate": paired_t(cand3.mean(axis=1), base3.mean(axis=1)),
    }
    json.dump(out, __import__("sys").stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
