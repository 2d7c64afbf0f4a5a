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
#   rate max_drop     McNemar score test p (z = (b - c)/sqrt(b + c), scipy
#                     norm); Tango's score interval (Tango 1998) found here
#                     by brentq on the score statistic with the restricted
#                     MLE in closed form as Fagerland, Lydersen & Laake
#                     (2013, Stat Med 33:2850, eq. for the Tango interval)
#                     write it; its ends at 2*alpha are the one-sided
#                     bounds; the one-sided p-values at the limit are
#                     Phi(+-Z(edge)). The old exact McNemar p and Newcombe
#                     interval are kept (exact_p, newcombe) and checked
#                     against the published example.
#   rate min          statsmodels proportion_confint(method="wilson"), at
#                     2*alpha for the one-sided bounds; the one-sided score
#                     test of the rate at the floor (scipy norm).
#   slice             the same on the cases with tier == "hard".
#   loud_rate         the same on "was the result loud" (lower is better).
#   cost max_rise     scipy ttest_rel (candidate, baseline) and Student's t
#                     interval of the mean difference (scipy t.ppf, sd n-1);
#                     one-sided t tests at the limit (scipy t.sf / t.cdf).
#   cost max          Student's t interval of the candidate's mean cost, and
#                     the one-sided t tests at the ceiling.
#   latency p95       numpy.percentile (linear), the point values only: the
#                     bootstrap intervals depend on the generator.
#   epochs (3)        per-case means of the epochs; scipy ttest_rel on them
#                     and the t interval.
#   clustered         cases in 20 clusters (a "cluster" tag): statsmodels
#                     OLS of the per-case differences on a constant,
#                     fit(cov_type="cluster", use_t=True) (CR1, t on G - 1
#                     df): the interval, the two-sided p, the one-sided
#                     bounds (the interval at 2*alpha) and the one-sided t
#                     tests at the limit (primary max_drop=3pt).
import json
import math

import numpy as np
from scipy import optimize, stats
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


def tango_z(n12, n21, n, d0):
    """Tango's score statistic for H0: (p12 - p21) = d0 (Fagerland et al.)."""
    w = -n12 - n21 + (2 * n - n12 + n21) * d0
    p21 = (math.sqrt(w * w - 8 * n * (-n21 * d0 * (1 - d0))) - w) / (4 * n)
    var = n * (2 * p21 + d0 * (1 - d0))
    return (n12 - n21 - n * d0) / math.sqrt(var)


def tango_ci(n12, n21, n, alpha):
    z = stats.norm.ppf(1 - alpha / 2)
    est = (n12 - n21) / n
    eps = 1e-12
    lo = -1.0 if tango_z(n12, n21, n, -1 + eps) <= z else optimize.brentq(lambda d: tango_z(n12, n21, n, d) - z, -1 + eps, est, xtol=1e-14)
    hi = 1.0 if tango_z(n12, n21, n, 1 - eps) >= -z else optimize.brentq(lambda d: tango_z(n12, n21, n, d) + z, est, 1 - eps, xtol=1e-14)
    return lo, hi


def paired_rate(cand, base, edge, higher_better):
    est, lo, hi, b, c = newcombe(cand, base, ALPHA)
    n = len(cand)
    exact_p = float(mcnemar([[0, b], [c, 0]], exact=True).pvalue)
    p = float(2 * stats.norm.sf(abs(b - c) / math.sqrt(b + c)))
    z = tango_z(b, c, n, edge)
    below, above = float(stats.norm.cdf(z)), float(stats.norm.sf(z))
    p_fail, p_pass = (below, above) if higher_better else (above, below)
    return {"baseline": float(base.mean()), "candidate": float(cand.mean()), "delta": est,
            "ci": list(tango_ci(b, c, n, ALPHA)), "bounds": list(tango_ci(b, c, n, 2 * ALPHA)),
            "p": p, "p_fail": p_fail, "p_pass": p_pass,
            "exact_p": exact_p, "newcombe": [lo, hi], "n": int(n)}


def wilson(x, bound, floor):
    k, n = int(x.sum()), len(x)
    lo, hi = proportion_confint(k, n, alpha=ALPHA, method="wilson")
    blo, bhi = proportion_confint(k, n, alpha=2 * ALPHA, method="wilson")
    z = (k / n - bound) / math.sqrt(bound * (1 - bound) / n)
    below, above = float(stats.norm.cdf(z)), float(stats.norm.sf(z))
    p_fail, p_pass = (below, above) if floor else (above, below)
    return {"candidate": float(x.mean()), "ci": [float(lo), float(hi)], "bounds": [float(blo), float(bhi)],
            "p_fail": p_fail, "p_pass": p_pass, "n": int(n)}


def t_tests(est, se, df, edge, higher_better):
    t = (est - edge) / se
    below, above = float(stats.t.cdf(t, df)), float(stats.t.sf(t, df))
    return (below, above) if higher_better else (above, below)


def paired_t(cand, base, edge=None, higher_better=True):
    d = cand - base
    n = len(d)
    se = d.std(ddof=1) / math.sqrt(n)
    tq = stats.t.ppf(1 - ALPHA / 2, n - 1)
    t1 = stats.t.ppf(1 - ALPHA, n - 1)
    res = stats.ttest_rel(cand, base)
    out = {"baseline": float(base.mean()), "candidate": float(cand.mean()), "delta": float(d.mean()),
           "ci": [float(d.mean() - tq * se), float(d.mean() + tq * se)],
           "bounds": [float(d.mean() - t1 * se), float(d.mean() + t1 * se)], "p": float(res.pvalue), "n": n}
    if edge is not None:
        out["p_fail"], out["p_pass"] = t_tests(d.mean(), se, n - 1, edge, higher_better)
    return out


def t_mean(x, ceiling):
    n = len(x)
    se = x.std(ddof=1) / math.sqrt(n)
    tq = stats.t.ppf(1 - ALPHA / 2, n - 1)
    t1 = stats.t.ppf(1 - ALPHA, n - 1)
    p_fail, p_pass = t_tests(x.mean(), se, n - 1, ceiling, False)
    return {"candidate": float(x.mean()), "ci": [float(x.mean() - tq * se), float(x.mean() + tq * se)],
            "bounds": [float(x.mean() - t1 * se), float(x.mean() + t1 * se)], "p_fail": p_fail, "p_pass": p_pass, "n": n}


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
        # The rules of the Go test: primary max_drop=5% min=70%,
        # correct[tier=hard] max_drop=2pt, loud_rate max_rise=2pt max=10%,
        # cost_per_case max_rise=5% max=0.001.
        "rate": paired_rate(cand, base, -0.05 * base.mean(), True),
        "rate_floor": wilson(cand, 0.70, True),
        "slice_hard": paired_rate(cand[hard], base[hard], -0.02, True),
        "loud": paired_rate(cand_loud, base_loud, 0.02, False),
        "loud_ceiling": wilson(cand_loud, 0.10, False),
        "cost": paired_t(cand_cost, base_cost, 0.05 * base_cost.mean(), False),
        "cost_ceiling": t_mean(cand_cost, 0.001),
        "latency_p95": {"baseline": float(np.percentile(base_lat, 95)), "candidate": float(np.percentile(cand_lat, 95))},
    }

    # Three epochs: per-case means, compared by the paired t-test.
    m = 120
    p_case = rng.beta(2, 1, m)
    base3 = rng.rand(m, 3) < p_case[:, None]
    cand3 = rng.rand(m, 3) < (p_case[:, None] - 0.12)
    out["epochs"] = {
        "base_pass": base3.astype(int).tolist(), "cand_pass": cand3.astype(int).tolist(),
        "rate": paired_t(cand3.mean(axis=1), base3.mean(axis=1), -0.05 * base3.mean(), True),
    }
    # Clustered: 20 clusters of 3 to 8 cases whose drop varies by cluster.
    import statsmodels.api as sm
    g_sizes = rng.randint(3, 9, 20)
    cl, bp, cp = [], [], []
    for g, size in enumerate(g_sizes):
        p_g = rng.uniform(0.5, 0.9)
        d_g = 0.06 + rng.uniform(-0.15, 0.15)
        for _ in range(size):
            cl.append("doc-%d" % g)
            bp.append(int(rng.rand() < p_g))
            cp.append(int(rng.rand() < p_g - d_g))
    bp, cp = np.array(bp), np.array(cp)
    d = (cp - bp).astype(float)
    groups = np.unique(cl, return_inverse=True)[1]
    fit = sm.OLS(d, np.ones((len(d), 1))).fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
    G = len(g_sizes)
    est, se = float(fit.params[0]), float(fit.bse[0])
    lo, hi = fit.conf_int(alpha=ALPHA)[0]
    blo, bhi = fit.conf_int(alpha=2 * ALPHA)[0]
    tstat = (est + 0.03) / se
    out["clustered"] = {
        "cluster": cl, "base_pass": bp.tolist(), "cand_pass": cp.tolist(),
        "rate": {"baseline": float(bp.mean()), "candidate": float(cp.mean()), "delta": est,
                 "ci": [float(lo), float(hi)], "bounds": [float(blo), float(bhi)], "p": float(fit.pvalues[0]),
                 "p_fail": float(stats.t.cdf(tstat, G - 1)), "p_pass": float(stats.t.sf(tstat, G - 1)), "n": int(len(d))},
        "clusters": G,
    }
    json.dump(out, __import__("sys").stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
