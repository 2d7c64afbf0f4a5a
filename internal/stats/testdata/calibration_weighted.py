#!/usr/bin/python3
# Golden values for judge calibration over weighted labels
# (internal/stats/weighted_calibration.go), computed independently of the
# Go code from each label as a row (human verdict, judge verdict, weight,
# design):
#
# - The weighted cells are sums of the rows' weights (numpy); TPR, TNR,
#   precision, recall and F1 from those sums by their definitions.
# - Kish's effective sizes (sum w)^2 / sum w^2 over the passes, the fails
#   and all labels.
# - Cohen's kappa of the weighted table from
#   statsmodels.stats.inter_rater.cohens_kappa, given the table of weighted
#   shares scaled to Kish's effective number of labels (statsmodels
#   divides by the table's sum, so its n is the effective one).
# - The Rogan-Gladen rate from the weighted TPR and TNR; its variance by
#   the delta method with a numerical gradient (central differences) of
#   (q + s - 1)/(t + s - 1) in (q, t, s), the covariance matrix of (t, s)
#   from the linearized values of the labels: each label's weight times
#   its influence on (TPR, TNR), summed stratum by stratum (a stratum is a
#   design and a judge verdict) as n * (the values' second moments - the
#   square of their mean), with half a pseudo-label of each human class
#   at the stratum's mean weight (mean squared weight for the second
#   moment) in both; Var q = q(1-q)/N, independent of the labels. Its
#   Fieller interval is found by root finding (scipy.optimize.brentq) on a
#   grid, not by the closed form.
# - The bootstrap within strata (numpy): each replicate redraws each
#   stratum's labels with replacement and q as a binomial, B = 20,000,
#   over SEEDS seeds: mean endpoints and their standard deviation.
#
# Regenerate (a minute):
#   /usr/bin/python3 internal/stats/testdata/calibration_weighted.py > internal/stats/testdata/calibration_weighted.json
import json
import math
import warnings

import numpy as np
from scipy.optimize import brentq
from scipy.stats import norm
from statsmodels.stats.inter_rater import cohens_kappa

warnings.simplefilter("ignore")

ALPHA = 0.05
Z = norm.ppf(1 - ALPHA / 2)
B = 20000
SEEDS = 6

# name, judged passes, judged outputs, strata: (design, judge verdict,
# weight of each label, human passes, human fails).
SETS = [
    ("judge-stratified queue", 950, 1000, [
        ("kb", True, 23.75, 36, 4),
        ("kb", False, 5.0, 2, 8),
    ]),
    ("targets pooled by verdict", 2600, 2659, [
        ("q", True, 75.0, 11, 1),
        ("q", True, 50.0, 14, 2),
        ("q", True, 100.0, 9, 0),
        ("q", False, 16.0, 0, 1),
        ("q", False, 22.0, 1, 0),
        ("q", False, 12.0, 0, 1),
        ("q", False, 9.0, 0, 1),
    ]),
    ("queue beside unweighted labels", 700, 1000, [
        ("kb", True, 35.0, 15, 3),
        ("kb", False, 20.0, 3, 9),
        ("", True, 1.0, 12, 2),
        ("", False, 1.0, 1, 5),
    ]),
    ("two queues", 3300, 4000, [
        ("a", True, 110.0, 25, 5),
        ("a", False, 35.0, 4, 16),
        ("b", True, 66.0, 40, 10),
        ("b", False, 70.0, 2, 8),
    ]),
    ("no fail among the judge's passes", 900, 1000, [
        ("kb", True, 22.5, 40, 0),
        ("kb", False, 10.0, 3, 7),
    ]),
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


def rows_of(strata):
    rows = []
    for design, judge, w, hp, hf in strata:
        rows += [(True, judge, w, design)] * hp + [(False, judge, w, design)] * hf
    human = np.array([r[0] for r in rows])
    judge = np.array([r[1] for r in rows])
    w = np.array([r[2] for r in rows], dtype=float)
    design = [r[3] for r in rows]
    return human, judge, w, design


def kish(w):
    return w.sum() ** 2 / (w ** 2).sum()


def rg(q, t, s):
    return (q + s - 1) / (t + s - 1)


def covariance(human, judge, w, design, t, s, P, F):
    # Each label's influence on (TPR, TNR).
    e = np.zeros((len(w), 2))
    e[:, 0] = np.where(human, (judge.astype(float) - t) / P, 0.0)
    e[:, 1] = np.where(~human, ((~judge).astype(float) - s) / F, 0.0)
    V = np.zeros((2, 2))
    for key in sorted(set(zip(design, judge.tolist()))):
        idx = [i for i in range(len(w)) if (design[i], bool(judge[i])) == key]
        n = len(idx)
        wi, ei = w[idx], e[idx]
        jv = key[1]
        ep = np.array([(1 - t) / P, 0.0]) if jv else np.array([-t / P, 0.0])
        ef = np.array([0.0, -s / F]) if jv else np.array([0.0, (1 - s) / F])
        wbar, w2bar = wi.mean(), (wi ** 2).mean()
        m = ((wi[:, None] * ei).sum(0) + 0.5 * wbar * (ep + ef)) / (n + 1)
        E2 = ((wi ** 2)[:, None, None] * (ei[:, :, None] * ei[:, None, :])).sum(0)
        E2 = (E2 + 0.5 * w2bar * (np.outer(ep, ep) + np.outer(ef, ef))) / (n + 1)
        V += n * (E2 - np.outer(m, m))
    return V


def corrected(human, judge, w, design, qp, qn):
    TP = w[human & judge].sum()
    FN = w[human & ~judge].sum()
    FP = w[~human & judge].sum()
    TN = w[~human & ~judge].sum()
    P, F = TP + FN, FP + TN
    if not human.any() or human.all():
        return None
    q, t, s = qp / qn, TP / P, TN / F
    J = t + s - 1
    if J <= 0:
        return None
    raw = rg(q, t, s)
    p = min(1.0, max(0.0, raw))
    V = covariance(human, judge, w, design, t, s, P, F)
    vq = q * (1 - q) / qn
    S = np.array([[vq, 0, 0], [0, V[0, 0], V[0, 1]], [0, V[1, 0], V[1, 1]]])
    q_eff = p * J - s + 1  # the gradient at the clipped estimate
    h = 1e-6
    g = []
    for i in range(3):
        x1, x2 = [q_eff, t, s], [q_eff, t, s]
        x1[i] += h
        x2[i] -= h
        g.append((rg(*x1) - rg(*x2)) / (2 * h))
    g = np.array(g)
    se = math.sqrt(g @ S @ g)
    a = q + s - 1

    def stat(pp):
        # Var(a - pJ) for (q, t, s) with S: the gradient of a - pJ is
        # (1, -p, 1 - p).
        d = np.array([1.0, -pp, 1 - pp])
        return (a - pp * J) ** 2 - Z ** 2 * (d @ S @ d)

    unbounded = J ** 2 - Z ** 2 * (V[0, 0] + V[1, 1] + 2 * V[0, 1]) <= 0
    if unbounded:
        lo, hi = 0.0, 1.0
    else:
        grid = np.linspace(-3, 4, 70001)
        inside = [pp for pp in grid if stat(pp) <= 0]
        step = grid[1] - grid[0]
        g0, g1 = min(inside), max(inside)
        lo = brentq(stat, g0 - step, g0)
        hi = brentq(stat, g1, g1 + step)
        lo, hi = min(1.0, max(0.0, lo)), min(1.0, max(0.0, hi))
    return {"estimate": p, "raw": raw, "tpr": t, "tnr": s, "j": J, "se": se,
            "var_tpr": V[0, 0], "var_tnr": V[1, 1], "cov": V[0, 1],
            "ci": [float(lo), float(hi)], "unbounded": bool(unbounded)}


def bootstrap(human, judge, w, design, qp, qn):
    q = qp / qn
    keys = sorted(set(zip(design, judge.tolist())))
    groups = [np.array([i for i in range(len(w)) if (design[i], bool(judge[i])) == k]) for k in keys]
    lows, highs = [], []
    for seed in range(SEEDS):
        rng = np.random.default_rng(2000 + seed)
        cells = np.zeros((B, 4))
        for g in groups:
            draw = g[rng.integers(0, len(g), size=(B, len(g)))]
            hw, jw, ww = human[draw], judge[draw], w[draw]
            cells[:, 0] += (ww * (hw & jw)).sum(1)
            cells[:, 1] += (ww * (hw & ~jw)).sum(1)
            cells[:, 2] += (ww * (~hw & jw)).sum(1)
            cells[:, 3] += (ww * (~hw & ~jw)).sum(1)
        qs = rng.binomial(qn, q, size=B) / qn
        P, F = cells[:, 0] + cells[:, 1], cells[:, 2] + cells[:, 3]
        ok = (P > 0) & (F > 0)
        t = np.where(ok, cells[:, 0] / np.where(P > 0, P, 1), 0)
        s = np.where(ok, cells[:, 3] / np.where(F > 0, F, 1), 0)
        J = t + s - 1
        ok &= J > 0
        reps = np.clip((qs[ok] + s[ok] - 1) / J[ok], 0, 1)
        lo, hi = np.percentile(reps, [100 * ALPHA / 2, 100 * (1 - ALPHA / 2)])
        lows.append(lo)
        highs.append(hi)
    return {"low": float(np.mean(lows)), "low_sd": float(np.std(lows, ddof=1)),
            "high": float(np.mean(highs)), "high_sd": float(np.std(highs, ddof=1))}


out = {"alpha": ALPHA, "b": B, "sets": []}
for name, qp, qn, strata in SETS:
    human, judge, w, design = rows_of(strata)
    TP = w[human & judge].sum()
    FN = w[human & ~judge].sum()
    FP = w[~human & judge].sum()
    TN = w[~human & ~judge].sum()
    total = w.sum()
    n_eff = kish(w)
    table = np.array([[TP, FN], [FP, TN]]) / total * n_eff
    k = cohens_kappa(table)
    se = math.sqrt(max(float(k.var_kappa), 0.0))
    out["sets"].append({
        "name": name, "judged_pass": qp, "judged": qn,
        "strata": [{"design": d, "judge": j, "weight": wt, "pass": hp, "fail": hf} for d, j, wt, hp, hf in strata],
        "cells": [float(TP), float(FN), float(FP), float(TN)],
        "kish": {"all": float(n_eff), "pass": float(kish(w[human])), "fail": float(kish(w[~human]))},
        "kappa": {"kappa": float(k.kappa), "se": se, "low": float(k.kappa) - Z * se, "high": float(k.kappa) + Z * se},
        "agreement": float((TP + TN) / total),
        "pass": measures(TP, FP, FN),
        "fail": measures(TN, FN, FP),
        "corrected": corrected(human, judge, w, design, qp, qn),
        "bootstrap": bootstrap(human, judge, w, design, qp, qn),
    })
print(json.dumps(out, indent=1))
