#!/usr/bin/python3
# Golden vectors for the contamination probe's decision (decide.go),
# computed by implementations independent of ours: scipy 1.10.1 and
# statsmodels 0.13.5 (Debian python3-scipy / python3-statsmodels).
#
# Regenerate (from the module root):
#   /usr/bin/python3 internal/probe/testdata/decide.py > internal/probe/testdata/decide.json
#
# Each family is the paired tables of several targets probed together
# (both, original_only, twin_only, neither). Per target:
#   p_value      scipy.stats.binomtest(original_only, original_only + twin_only,
#                0.5, alternative="greater"): the exact one-sided McNemar test.
#   ci           Newcombe (1998) method 10 square-and-add interval for the
#                drop (original rate - twin rate) at level 1 - 2*alpha, so
#                that its lower end is the one-sided 1 - alpha bound;
#                transcribed from the R package contingencytables (as in
#                internal/stats/testdata/paired.py) and checked against its
#                published test value first.
#   original, twin   statsmodels proportion_confint(method="wilson") at 1 - alpha.
#   p_adjusted   statsmodels multipletests(method="holm") across the family.
#   verdict      the rule of docs/contamination.md: contaminated? when
#                drop > min_drop, ci[0] > 0 and p_adjusted < alpha;
#                inconclusive when drop > min_drop otherwise; clean when
#                drop <= min_drop.
import json
import math

from scipy.stats import binomtest
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint


def newcombe_paired(n11, n12, n21, n22, alpha):
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
    return est, max(-1.0, L), min(1.0, U)


def check_published():
    # contingencytables tests/testthat/test-ch8.R, Cavo et al. (2012).
    est, L, U = newcombe_paired(59, 6, 16, 80, 0.05)
    assert round(est, 4) == -0.0621 and round(L, 4) == -0.1186 and round(U, 4) == -0.0046, (est, L, U)


def one_sided(b, c):
    if b + c == 0:
        return 1.0
    return float(binomtest(b, b + c, 0.5, alternative="greater").pvalue)


def family(tables, alpha, min_drop):
    out = []
    ps = []
    for both, b, c, neither in tables:
        n = both + b + c + neither
        _, lo, hi = newcombe_paired(both, b, c, neither, 2 * alpha)
        est = (b - c) / n  # exactly as counted, so a drop at the minimum compares equal
        p = one_sided(b, c)
        ps.append(p)
        o_lo, o_hi = proportion_confint(both + b, n, alpha=alpha, method="wilson")
        t_lo, t_hi = proportion_confint(both + c, n, alpha=alpha, method="wilson")
        out.append({
            "table": [both, b, c, neither],
            "drop": est, "ci": [lo, hi], "p_value": p,
            "original": [(both + b) / n, o_lo, o_hi],
            "twin": [(both + c) / n, t_lo, t_hi],
        })
    adj = multipletests(ps, method="holm")[1]
    for f, pa in zip(out, adj):
        f["p_adjusted"] = float(pa)
        if f["drop"] <= min_drop:
            f["verdict"] = "clean"
        elif f["ci"][0] > 0 and pa < alpha:
            f["verdict"] = "contaminated?"
        else:
            f["verdict"] = "inconclusive"
    return {"alpha": alpha, "min_drop": min_drop, "targets": out}


def main():
    check_published()
    families = [
        # The planted pair of the CLI test: contaminated and clean.
        family([(10, 30, 0, 0), (24, 4, 4, 8)], 0.05, 0.05),
        # One target, a clear drop; a borderline one; a rise.
        family([(120, 30, 8, 42)], 0.05, 0.05),
        family([(60, 12, 4, 24)], 0.05, 0.05),
        family([(60, 2, 12, 26)], 0.05, 0.05),
        # A drop that is significant alone but not after Holm over four.
        family([(70, 14, 5, 11), (50, 5, 5, 40), (50, 6, 4, 40), (30, 3, 3, 64)], 0.05, 0.05),
        # Small but significant drop (below the minimum): clean.
        family([(4000, 300, 150, 1550)], 0.05, 0.05),
        # No discordant case; every case passed; every case failed.
        family([(30, 0, 0, 10), (40, 0, 0, 0), (0, 0, 0, 40)], 0.05, 0.05),
        # A stricter alpha and a larger minimum drop.
        family([(50, 20, 5, 25), (50, 9, 2, 39)], 0.01, 0.10),
        # Drop exactly at the minimum is clean.
        family([(80, 10, 5, 5)], 0.05, 0.05),
        # A big drop on few cases: its interval includes zero.
        family([(10, 4, 1, 5)], 0.05, 0.05),
    ]
    json.dump({"families": families}, __import__("sys").stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
