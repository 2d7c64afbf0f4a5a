#!/usr/bin/python3
# Golden values for judge calibration (internal/stats/kappa.go,
# calibration.go), computed independently of the Go code:
#
# - Cohen's kappa, its asymptotic standard error and 95% interval from
#   statsmodels.stats.inter_rater.cohens_kappa (kappa, std_kappa, kappa_low,
#   kappa_upp); null where statsmodels gives nan (chance agreement 1).
# - Per-class precision, recall, F1 written out from their definitions.
# - The Rogan-Gladen corrected rate p = (q + TNR - 1)/(TPR + TNR - 1),
#   clipped to [0, 1]; its delta-method standard error from a numerical
#   gradient (central differences) of that function, with the variances
#   q(1-q)/N and r(1-r)/n at r = (x + 1/2)/(n + 1) for TPR and TNR; its
#   Fieller interval found by root finding (scipy.optimize.brentq) on the
#   test statistic over a fine grid of p, not by the closed form the Go
#   code uses.
# - The labels needed for a target width: the continuous optimum of
#   n_pos + n_neg subject to the delta-method width (n_neg in closed form
#   for each n_pos, the sum minimised by scipy.optimize.minimize_scalar), and at random the smallest whole number of labels found by
#   counting up.
# - The bootstrap over both samples (labels resampled with numpy, the judged
#   outputs as a binomial draw), B = 20,000, repeated over SEEDS seeds: the
#   mean endpoints and their standard deviation, so the Go test allows for
#   Monte Carlo error honestly.
#
# Regenerate (a minute):
#   /usr/bin/python3 internal/stats/testdata/calibration.py > internal/stats/testdata/calibration.json
import json
import math
import warnings

import numpy as np
from scipy.optimize import brentq, minimize_scalar
from scipy.stats import norm
from statsmodels.stats.inter_rater import cohens_kappa

warnings.simplefilter("ignore")

ALPHA = 0.05
Z = norm.ppf(1 - ALPHA / 2)
B = 20000
SEEDS = 8
WIDTH = 0.10

# name, (TP, FN, FP, TN) with the truth (the label) in rows, the judge in
# columns, pass first; the run's judged passes and judged outputs.
SETS = [
    ("typical", (30, 4, 5, 11), 700, 1000),
    ("passes everything", (40, 0, 10, 0), 1000, 1000),
    ("fails everything", (0, 40, 0, 10), 0, 1000),
    ("perfect", (35, 0, 0, 15), 700, 1000),
    ("worse than chance", (10, 25, 10, 5), 400, 1000),
    ("lenient", (38, 2, 6, 4), 880, 1000),
    ("small", (8, 1, 1, 3), 150, 200),
    ("no fails labeled", (45, 5, 0, 0), 900, 1000),
    ("one cell", (50, 0, 0, 0), 1000, 1000),
    ("large", (300, 20, 30, 150), 6500, 10000),
    ("strict", (20, 15, 1, 14), 450, 1000),
    ("moderate", (33, 3, 3, 11), 70000, 100000),
    ("many passes labeled", (200, 10, 4, 6), 80000, 100000),
]


def num(x):
    x = float(x)
    return None if math.isnan(x) or math.isinf(x) else x


def div(a, b):
    return a / b if b else float("nan")


def measures(hit, false_hit, miss):
    p = div(hit, hit + false_hit)
    r = div(hit, hit + miss)
    if math.isnan(p) or math.isnan(r):
        f = float("nan")
    elif hit == 0:
        f = 0.0
    else:
        f = 2 * p * r / (p + r)
    return {"precision": num(p), "recall": num(r), "f1": num(f)}


def plus_half(x, n):
    return (x + 0.5) / (n + 1)


def variances(tp, fn, fp, tn, qp, qn):
    q = qp / qn
    t = plus_half(tp, tp + fn)
    s = plus_half(tn, tn + fp)
    return q * (1 - q) / qn, t * (1 - t) / (tp + fn), s * (1 - s) / (tn + fp)


def rg(q, t, s):
    return (q + s - 1) / (t + s - 1)


def corrected(tp, fn, fp, tn, qp, qn):
    P, F = tp + fn, fp + tn
    if P == 0 or F == 0:
        return None
    q, t, s = qp / qn, tp / P, tn / F
    J = t + s - 1
    if J <= 0:
        return None
    raw = rg(q, t, s)
    p = min(1.0, max(0.0, raw))
    vq, vt, vs = variances(tp, fn, fp, tn, qp, qn)
    # Numerical gradient of rg at (q, t, s); the partials in t and s are
    # taken at the clipped p by the chain of the formula itself: d/dt =
    # -p/J, d/ds = (1-p)/J. The numerical gradient gives them at the raw
    # value, so it is evaluated at a q that makes rg equal the clipped p.
    q_eff = p * J - s + 1
    h = 1e-6
    g = []
    for i in range(3):
        x = [q_eff, t, s]
        x1, x2 = list(x), list(x)
        x1[i] += h
        x2[i] -= h
        g.append((rg(*x1) - rg(*x2)) / (2 * h))
    se = math.sqrt(g[0] ** 2 * vq + g[1] ** 2 * vt + g[2] ** 2 * vs)
    # Fieller: the p in [0, 1] where (a - pJ)^2 <= z^2 Var(a - pJ).
    a = q + s - 1

    def stat(pp):
        return (a - pp * J) ** 2 - Z**2 * (vq + pp**2 * vt + (1 - pp) ** 2 * vs)

    unbounded = J**2 - Z**2 * (vt + vs) <= 0
    if unbounded:
        lo, hi = 0.0, 1.0
    else:
        grid = np.linspace(-3, 4, 70001)
        inside = [pp for pp in grid if stat(pp) <= 0]
        if not inside:
            lo, hi = 0.0, 1.0
            unbounded = True
        else:
            g0, g1 = min(inside), max(inside)
            step = grid[1] - grid[0]
            lo = brentq(stat, g0 - step, g0) if stat(g0 - step) > 0 else g0
            hi = brentq(stat, g1, g1 + step) if stat(g1 + step) > 0 else g1
            lo, hi = min(1.0, max(0.0, lo)), min(1.0, max(0.0, hi))
    return {"estimate": p, "raw": raw, "q": q, "tpr": t, "tnr": s, "j": J, "se": se,
            "ci": [float(lo), float(hi)], "unbounded": bool(unbounded),
            "needed": needed(p, J, vq, vt * P, vs * F, P, F)}


def needed(p, J, vq, a0, b0, P, F):
    # a0, b0: the per-label variances of TPR and TNR (r(1-r)).
    def width(npos, nneg):
        v = (vq + p**2 * a0 / npos + (1 - p) ** 2 * b0 / nneg) / J**2
        return 2 * Z * math.sqrt(v)

    now = width(P, F)
    out = {"width": now}
    if (WIDTH / (2 * Z)) ** 2 * J**2 - vq <= 0:
        out["unreachable"] = True
        return out
    if now <= WIDTH:
        out.update({"pass": 0.0, "fail": 0.0, "random": 0})
        return out
    # For each n_pos the fewest n_neg meeting the width is closed form; the
    # total is then minimised over n_pos (bounded, to 1e-9 labels).
    target = (WIDTH / (2 * Z)) ** 2 * J**2 - vq
    a, b = p**2 * a0, (1 - p) ** 2 * b0

    def nneg(npos):
        room = target - a / npos
        return max(F, b / room) if room > 0 else math.inf

    lo = max(P, a / target * (1 + 1e-12))
    res = minimize_scalar(lambda x: x + nneg(x), bounds=(lo, lo * 1e4 + 1e6),
                          method="bounded", options={"xatol": 1e-9, "maxiter": 10000})
    npos = float(res.x)
    if P + nneg(P) <= npos + nneg(npos):
        npos = float(P)
    out["pass"] = npos - P
    out["fail"] = nneg(npos) - F
    h = P / (P + F)
    m = 0
    while width(P + h * m, F + (1 - h) * m) > WIDTH:
        m += 1
    out["random"] = m
    return out


def bootstrap(tp, fn, fp, tn, qp, qn):
    cells = np.array([tp, fn, fp, tn])
    n = cells.sum()
    q = qp / qn
    lows, highs, drops = [], [], []
    for seed in range(SEEDS):
        rng = np.random.default_rng(1000 + seed)
        draws = rng.multinomial(n, cells / n, size=B)
        qs = rng.binomial(qn, q, size=B) / qn
        P = draws[:, 0] + draws[:, 1]
        F = draws[:, 2] + draws[:, 3]
        ok = (P > 0) & (F > 0)
        t = np.where(ok, draws[:, 0] / np.maximum(P, 1), 0)
        s = np.where(ok, draws[:, 3] / np.maximum(F, 1), 0)
        J = t + s - 1
        ok &= J > 0
        reps = np.clip((qs[ok] + s[ok] - 1) / J[ok], 0, 1)
        drops.append(int(B - ok.sum()))
        if len(reps) == 0:
            return None
        lo, hi = np.percentile(reps, [100 * ALPHA / 2, 100 * (1 - ALPHA / 2)])
        lows.append(lo)
        highs.append(hi)
    return {"low": float(np.mean(lows)), "low_sd": float(np.std(lows, ddof=1)),
            "high": float(np.mean(highs)), "high_sd": float(np.std(highs, ddof=1)),
            "dropped_share": float(np.mean(drops)) / B}


out = {"alpha": ALPHA, "width": WIDTH, "b": B, "sets": []}
for name, (tp, fn, fp, tn), qp, qn in SETS:
    table = np.array([[tp, fn], [fp, tn]])
    k = cohens_kappa(table)
    kappa = None
    if not math.isnan(float(k.kappa)):
        # statsmodels' var_kappa can come out a hair below 0 where it is 0
        # (a judge that puts everything in one class); its std_kappa and
        # interval are then nan. The standard error is 0 there.
        var = float(k.var_kappa)
        assert var > -1e-12, var
        se = math.sqrt(max(var, 0.0))
        kappa = {"kappa": float(k.kappa), "se": se,
                 "low": float(k.kappa) - Z * se, "high": float(k.kappa) + Z * se}
        if not math.isnan(float(k.std_kappa)):
            assert abs(kappa["low"] - float(k.kappa_low)) < 1e-12
            assert abs(kappa["high"] - float(k.kappa_upp)) < 1e-12
    entry = {
        "name": name, "tp": tp, "fn": fn, "fp": fp, "tn": tn,
        "judged_pass": qp, "judged": qn,
        "kappa": kappa,
        "pass": measures(tp, fp, fn),
        "fail": measures(tn, fn, fp),
        "corrected": corrected(tp, fn, fp, tn, qp, qn),
        "bootstrap": bootstrap(tp, fn, fp, tn, qp, qn),
    }
    out["sets"].append(entry)
print(json.dumps(out, indent=1))
