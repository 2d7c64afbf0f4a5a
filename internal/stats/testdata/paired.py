#!/usr/bin/python3
# Golden vectors for paired comparisons, McNemar, multiplicity adjustment and
# power (paired.go, mcnemar.go, multiple.go, power.go), computed by
# implementations independent of ours: statsmodels 0.13.5 and scipy 1.10.1
# (Debian python3-statsmodels / python3-scipy) and exact rational arithmetic.
#
# Regenerate (from the module root):
#   /usr/bin/python3 internal/stats/testdata/paired.py > internal/stats/testdata/paired.json
#
# Sources, per block:
#   mcnemar    exact p: statsmodels.stats.contingency_tables.mcnemar(exact=True),
#              cross-checked against an exact big-integer sum of C(n,x)/2^n;
#              mid-p: the same exact sums, 2*P(X<k) + P(X=k) (Fagerland,
#              Lydersen & Laake 2013, BMC Med Res Methodol 13:91).
#   holm, bh   statsmodels.stats.multitest.multipletests(method='holm'/'fdr_bh').
#   binary     paired SE and Wald interval: statsmodels DescrStatsW of the
#              per-case differences (std_mean, i.e. sd with n-1, /sqrt(n);
#              zconfint_mean); Newcombe (1998) method 10 square-and-add
#              interval transcribed from the R package contingencytables
#              (Fagerland, Lydersen & Laake), checked below against that
#              package's published test values before anything is written.
#   means      DescrStatsW(d).std_mean / tconfint_mean and scipy ttest_rel.
#   gsm8k      the four recorded configurations of
#              ../shared/data/gsm8k/example_model_solutions.jsonl, all six
#              pairs; Holm and BH over the six McNemar exact p-values.
#   mcnemar_n  Connor (1987, Biometrics 43:207-211) sample size, written
#              from the published formula with scipy's normal quantiles;
#              checked against Connor's worked example (n = 23).
#   mdd        the minimum detectable difference: scipy brentq root of
#              Connor's n(delta) = n (our Go code inverts it in closed form).
#   two_prop   statsmodels NormalIndPower().solve_power with
#              proportion_effectsize (Cohen's h), per group, two-sided.
import json
import math
import os
import sys
from fractions import Fraction
from itertools import combinations

import numpy as np
from scipy import optimize, stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import proportion_confint, proportion_effectsize
from statsmodels.stats.weightstats import DescrStatsW

HERE = os.path.dirname(os.path.abspath(__file__))
GSM8K = os.path.join(HERE, "..", "..", "..", "..", "shared", "data", "gsm8k", "example_model_solutions.jsonl")


def exact_tails(b, c):
    """Exact two-sided McNemar p and mid-p from big-integer binomial sums."""
    n = b + c
    if n == 0:
        return 1.0, 1.0
    k = min(b, c)
    below, term = 0, 1  # term = C(n, x), exact integers
    for x in range(k):
        below += term
        term = term * (n - x) // (x + 1)
    point = term  # C(n, k); below = 2^n * P(X < k)
    denom = 2 ** n
    exact = min(Fraction(1), Fraction(2 * (below + point), denom))
    midp = min(Fraction(1), Fraction(2 * below + point, denom))
    return float(exact), float(midp)


def sm_mcnemar(b, c):
    return float(mcnemar([[0, b], [c, 0]], exact=True).pvalue)


def newcombe_paired(n11, n12, n21, n22, alpha):
    """Newcombe square-and-add CI for pi_1+ - pi_+1 (contingencytables)."""
    N = n11 + n12 + n21 + n22
    r1, r2 = n11 + n12, n21 + n22  # row sums: target A passed / failed
    c1, c2 = n11 + n21, n12 + n22  # column sums: target B passed / failed
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
    return est, L, U


def check_published():
    # contingencytables tests/testthat/test-ch8.R, Cavo et al. (2012):
    # cavo_2012 <- rbind(c(59, 6), c(16, 80)).
    est, L, U = newcombe_paired(59, 6, 16, 80, 0.05)
    assert round(est, 4) == -0.0621 and round(L, 4) == -0.1186 and round(U, 4) == -0.0046, (est, L, U)
    assert round(exact_tails(6, 16)[0], 6) == 0.052479
    assert round(exact_tails(6, 16)[1], 6) == 0.034690
    # Fagerland et al. (2013), Bentur et al. data: n12 = 1, n21 = 7.
    assert round(exact_tails(1, 7)[0], 3) == 0.070 and round(exact_tails(1, 7)[1], 3) == 0.039
    # Connor (1987) p. 209 as worked by common calculators: p01 = .45,
    # p10 = .05, two-sided alpha .05, power .80 -> 23 pairs.
    assert math.ceil(connor_n(0.5, 0.4, 0.05, 0.8)) == 23


def connor_n(pdisc, delta, alpha, power):
    za = stats.norm.ppf(1 - alpha / 2)
    zb = stats.norm.ppf(power)
    return ((za * math.sqrt(pdisc) + zb * math.sqrt(pdisc - delta ** 2)) / delta) ** 2


def table_of(a, b):
    n11 = sum(1 for x, y in zip(a, b) if x and y)
    n12 = sum(1 for x, y in zip(a, b) if x and not y)
    n21 = sum(1 for x, y in zip(a, b) if not x and y)
    n22 = sum(1 for x, y in zip(a, b) if not x and not y)
    return n11, n12, n21, n22


def binary_vector(a, b, alpha):
    n11, n12, n21, n22 = table_of(a, b)
    d = np.array(a, dtype=float) - np.array(b, dtype=float)
    ds = DescrStatsW(d)
    wlo, whi = ds.zconfint_mean(alpha=alpha)
    est, L, U = newcombe_paired(n11, n12, n21, n22, alpha)
    return {
        "delta": float(d.mean()), "se": float(ds.std_mean),
        "wald": [float(wlo), float(whi)], "newcombe": [L, U],
        "a_only": n12, "b_only": n21, "both": n11, "neither": n22,
        "p_exact": sm_mcnemar(n12, n21), "p_midp": exact_tails(n12, n21)[1],
    }


def main():
    check_published()
    out = {}

    pairs = [(0, 0), (0, 1), (1, 0), (1, 1), (1, 7), (6, 16), (5, 5), (10, 11), (3, 12),
             (100, 130), (130, 100), (400, 480), (2000, 3000), (2400, 2600), (2499, 2501),
             (2500, 2500), (10, 4990), (0, 60), (0, 5000), (60000, 61000)]
    mc = []
    for b, c in pairs:
        ex, mid = exact_tails(b, c)
        sm = sm_mcnemar(b, c)
        if ex > 1e-300:
            assert abs(sm - ex) <= 1e-12 * ex + 1e-300, (b, c, sm, ex)
        mc.append({"b": b, "c": c, "exact": ex, "midp": mid, "statsmodels": sm})
    out["mcnemar"] = mc

    families = [
        [0.01, 0.04, 0.03, 0.005],
        [0.01, 0.01, 0.02, 0.02, 0.5],
        [1.0, 1.0, 0.9],
        [0.0, 0.2, 1.0, 0.04, 0.04, 0.04],
        [0.3],
        [0.049, 0.051, 0.001, 0.0001, 0.8, 0.6, 0.049],
        [1e-12, 3e-9, 0.7, 0.02, 0.011, 0.011, 0.3, 0.25, 0.025, 0.99],
    ]
    out["holm"] = [{"p": f, "adj": multipletests(f, method="holm")[1].tolist()} for f in families]
    out["bh"] = [{"p": f, "adj": multipletests(f, method="fdr_bh")[1].tolist()} for f in families]

    rng = np.random.default_rng(20240601)
    binary = []
    for n, pa, pb, rho, alpha in [(20, 0.6, 0.5, 0.3, 0.05), (50, 0.9, 0.8, 0.5, 0.05), (200, 0.75, 0.7, 0.4, 0.05),
                                  (200, 0.5, 0.5, 0.0, 0.1), (500, 0.3, 0.35, 0.6, 0.05), (40, 0.97, 0.97, 0.9, 0.05)]:
        # correlated pass/fail through a shared latent normal
        z0 = rng.standard_normal(n)
        za = math.sqrt(rho) * z0 + math.sqrt(1 - rho) * rng.standard_normal(n)
        zb = math.sqrt(rho) * z0 + math.sqrt(1 - rho) * rng.standard_normal(n)
        a = (za < stats.norm.ppf(pa)).tolist()
        b = (zb < stats.norm.ppf(pb)).tolist()
        v = binary_vector(a, b, alpha)
        v.update({"a": "".join("1" if x else "0" for x in a), "b": "".join("1" if x else "0" for x in b), "alpha": alpha})
        binary.append(v)
    # all concordant, and a fixed table with both targets near the ceiling
    for a, b in [([True] * 12 + [False] * 8, [True] * 12 + [False] * 8),
                 ([True] * 30, [True] * 29 + [False])]:
        v = binary_vector(a, b, 0.05)
        v.update({"a": "".join("1" if x else "0" for x in a), "b": "".join("1" if x else "0" for x in b), "alpha": 0.05})
        binary.append(v)
    out["binary"] = binary

    means = []
    for n, shift, alpha in [(2, 0.1, 0.05), (10, 0.05, 0.05), (30, 0.0, 0.05), (100, -0.03, 0.1), (1000, 0.01, 0.05)]:
        base = rng.uniform(0, 1, n)
        a = np.clip(base + rng.normal(shift, 0.1, n), 0, 1)
        b = np.clip(base + rng.normal(0, 0.1, n), 0, 1)
        d = a - b
        ds = DescrStatsW(d)
        lo, hi = ds.tconfint_mean(alpha=alpha)
        t = stats.ttest_rel(a, b)
        means.append({"a": a.tolist(), "b": b.tolist(), "alpha": alpha, "delta": float(d.mean()),
                      "se": float(ds.std_mean), "t_ci": [float(lo), float(hi)], "p": float(t.pvalue)})
    out["means"] = means

    configs = ["6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification"]
    cols = {c: [] for c in configs}
    with open(GSM8K) as f:
        for line in f:
            rec = json.loads(line)
            for c in configs:
                cols[c].append(bool(rec[c]["is_correct"]))
    g = {"configs": configs, "n": len(cols[configs[0]]),
         "passed": {c: sum(cols[c]) for c in configs}, "alpha": 0.05, "pairs": []}
    for x, y in combinations(configs, 2):
        v = binary_vector(cols[x], cols[y], 0.05)
        v.update({"a": x, "b": y})
        g["pairs"].append(v)
    ps = [p["p_exact"] for p in g["pairs"]]
    for p, h, bh in zip(g["pairs"], multipletests(ps, method="holm")[1], multipletests(ps, method="fdr_bh")[1]):
        p["holm"], p["bh"] = float(h), float(bh)
    out["gsm8k"] = g

    mn = []
    for pdisc, delta, alpha, power in [(0.5, 0.4, 0.05, 0.8), (0.2, 0.1, 0.05, 0.9), (0.2, 0.02, 0.05, 0.8),
                                       (0.1, 0.03, 0.05, 0.8), (0.3, -0.05, 0.01, 0.9), (0.05, 0.05, 0.05, 0.8),
                                       (0.25, 0.02, 0.1, 0.5)]:
        nr = connor_n(pdisc, abs(delta), alpha, power)
        mn.append({"p_disc": pdisc, "delta": delta, "alpha": alpha, "power": power, "n_real": nr, "n": math.ceil(nr)})
    out["mcnemar_n"] = mn

    mdd = []
    for n, pdisc, alpha, power in [(1319, 0.15, 0.05, 0.8), (200, 0.2, 0.05, 0.8), (100, 0.3, 0.05, 0.9),
                                   (5000, 0.05, 0.05, 0.8), (23, 0.5, 0.05, 0.8)]:
        root = optimize.brentq(lambda d: connor_n(pdisc, d, alpha, power) - n, 1e-9, pdisc, xtol=1e-15, rtol=4 * np.finfo(float).eps)
        mdd.append({"n": n, "p_disc": pdisc, "alpha": alpha, "power": power, "mdd": root})
    out["mdd"] = mdd

    tp = []
    for p1, p2, alpha, power in [(0.8, 0.75, 0.05, 0.8), (0.5, 0.6, 0.05, 0.9), (0.9, 0.95, 0.01, 0.8),
                                 (0.2, 0.1, 0.05, 0.8), (0.02, 0.05, 0.05, 0.8), (0.5, 0.51, 0.05, 0.8)]:
        es = proportion_effectsize(p1, p2)
        nr = float(NormalIndPower().solve_power(effect_size=es, alpha=alpha, power=power, ratio=1, alternative="two-sided"))
        tp.append({"p1": p1, "p2": p2, "alpha": alpha, "power": power, "n_real": nr, "n": math.ceil(nr)})
    out["two_prop"] = tp

    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
