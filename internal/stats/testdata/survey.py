#!/usr/bin/python3
# Golden values for WeightedMean (survey.go): a stratified sample drawn
# without replacement, each stratum h of N_h units sampled n_h times, every
# sampled unit weighted N_h/n_h. Computed here independently, with the
# textbook stratified formulas rather than survey.go's linearised residuals:
#   mean  = sum_h (N_h/N) * ybar_h
#   var   = sum_h (N_h/N)^2 * (1 - n_h/N_h) * s_h^2 / n_h    (s_h^2: ddof=1)
#           a single-draw stratum adds (N_h/N)^2 * (1 - 1/N_h) * (y - mean)^2
#   kish  = N^2 / sum_h N_h^2/n_h
#   nb    = min(N, 1 / sum_h (N_h/N)^2 (1 - n_h/N_h) / n_h); when that sum
#           is 0 every stratum was drawn whole and the interval is the mean
#   n*    = mean(1-mean)/var, at most nb for 0/1 values; nb when that is
#           undefined (var 0 or mean 0, 1)
#   interval: Wilson's score formula at n* with scipy's t quantile on
#           n - H degrees of freedom (at least 1); mean -/+ t*se for values
#           outside [0, 1].
# Regenerate: /usr/bin/python3 internal/stats/testdata/survey.py > internal/stats/testdata/survey.json
import json
import numpy as np
from scipy import stats

rng = np.random.default_rng(20261203)


def binary(n, k):
    ys = [1.0] * k + [0.0] * (n - k)
    rng.shuffle(ys)
    return ys


def estimate(strata, alpha):
    N = sum(s["N"] for s in strata)
    n = sum(len(s["ys"]) for s in strata)
    H = len(strata)
    mean = sum(s["N"] / N * np.mean(s["ys"]) for s in strata)
    var = 0.0
    for s in strata:
        ys = np.array(s["ys"], dtype=float)
        nh, Nh = len(ys), s["N"]
        if nh == 1:
            var += (Nh / N) ** 2 * (1 - 1 / Nh) * (ys[0] - mean) ** 2
        else:
            var += (Nh / N) ** 2 * (1 - nh / Nh) * ys.var(ddof=1) / nh
    kish = N ** 2 / sum(s["N"] ** 2 / len(s["ys"]) for s in strata)
    df = max(1, n - H)
    t = stats.t.ppf(1 - alpha / 2, df)
    unit = all(0 <= y <= 1 for s in strata for y in s["ys"])
    se = np.sqrt(var)
    out = {"mean": mean, "se": se, "kish": kish, "df": df, "population": N, "n": n}
    if not unit:
        out.update(method="t", effective=0.0, lo=mean - t * se, hi=mean + t * se)
        return out
    pq = mean * (1 - mean)
    b = sum((s["N"] / N) ** 2 * (1 - len(s["ys"]) / s["N"]) / len(s["ys"]) for s in strata)
    if b == 0:  # drawn whole: known
        out.update(method="wilson_neff", effective=float(N), lo=mean, hi=mean)
        return out
    nb = min(N, 1 / b)
    neff = pq / var if pq > 0 and var > 1e-18 * pq / n else nb
    if all(y in (0.0, 1.0) for s in strata for y in s["ys"]):
        neff = min(neff, nb)
    den = 1 + t * t / neff
    centre = (mean + t * t / (2 * neff)) / den
    half = t / den * np.sqrt(pq / neff + t * t / (4 * neff * neff))
    out.update(method="wilson_neff", effective=neff,
               lo=max(0.0, centre - half), hi=min(1.0, centre + half))
    return out


sets = [
    ("three models", 0.05, [
        {"name": "model=a", "N": 1200, "ys": binary(50, 41)},
        {"name": "model=b", "N": 300, "ys": binary(50, 12)},
        {"name": "model=c", "N": 40, "ys": binary(40, 30)},  # drawn whole
    ]),
    ("three models at 90%", 0.10, [
        {"name": "model=a", "N": 1200, "ys": binary(50, 41)},
        {"name": "model=b", "N": 300, "ys": binary(50, 12)},
        {"name": "model=c", "N": 40, "ys": binary(40, 30)},
    ]),
    ("near zero", 0.05, [
        {"name": "model=a", "N": 5000, "ys": binary(50, 0)},
        {"name": "model=b", "N": 800, "ys": binary(50, 1)},
    ]),
    ("near one", 0.05, [
        {"name": "route=x", "N": 700, "ys": binary(30, 30)},
        {"name": "route=y", "N": 90, "ys": binary(30, 29)},
        {"name": "route=z", "N": 2500, "ys": binary(30, 30)},
    ]),
    ("all pass", 0.05, [
        {"name": "a", "N": 1000, "ys": binary(20, 20)},
        {"name": "b", "N": 50, "ys": binary(20, 20)},
    ]),
    ("uniform strata", 0.05, [
        {"name": "a", "N": 400, "ys": binary(25, 25)},
        {"name": "b", "N": 100, "ys": binary(25, 0)},
    ]),
    ("a single draw", 0.05, [
        {"name": "a", "N": 100, "ys": binary(20, 13)},
        {"name": "b", "N": 30, "ys": binary(1, 0)},
    ]),
    ("drawn whole", 0.05, [
        {"name": "a", "N": 12, "ys": binary(12, 7)},
        {"name": "b", "N": 5, "ys": binary(5, 5)},
    ]),
    ("simple sample", 0.05, [
        {"name": "", "N": 10000, "ys": binary(200, 37)},
    ]),
    ("scores", 0.05, [
        {"name": "a", "N": 600, "ys": [float(x) for x in np.round(rng.beta(5, 2, 40), 3)]},
        {"name": "b", "N": 150, "ys": [float(x) for x in np.round(rng.beta(2, 3, 25), 3)]},
    ]),
    ("latencies", 0.05, [
        {"name": "a", "N": 900, "ys": [float(x) for x in np.round(rng.gamma(2, 300, 30), 1)]},
        {"name": "b", "N": 60, "ys": [float(x) for x in np.round(rng.gamma(3, 500, 15), 1)]},
    ]),
]

out = []
for name, alpha, strata in sets:
    out.append({"name": name, "alpha": alpha, "strata": strata, "want": estimate(strata, alpha)})
print(json.dumps(out, indent=1))
