#!/usr/bin/python3
# Golden values for the end-to-end sample → score-traces test
# (sample_test.go), computed independently of assay's Go code:
#   1. the fixture's traces, by the rule the test uses to store them;
#   2. the draw: in each model's stratum the PER traces with the smallest
#      rank = splitmix64(fnv1a64(id) ^ splitmix64(seed ^ 0x9e3779b97f4a7c15))
#      (ties by ID), as docs/sampling.md describes it;
#   3. each drawn trace's is_json verdict (Python's json module; a failed
#      call fails), and the weighted rate per model and over all models by
#      the textbook stratified formulas (numpy), with Wilson's interval on
#      the effective n (scipy's t quantile on n - H degrees of freedom).
# Regenerate: /usr/bin/python3 internal/cli/testdata/sample_rates.py > internal/cli/testdata/sample_rates.json
import json
import numpy as np
from scipy import stats

MASK = (1 << 64) - 1
SEED = 12345
PER = 20
LEVEL = 0.95
MODELS = [("alpha", 240), ("beta", 45), ("gamma", 12)]


def fnv1a64(s):
    h = 0xCBF29CE484222325
    for b in s.encode():
        h ^= b
        h = (h * 0x100000001B3) & MASK
    return h


def splitmix(z):
    z = (z + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def output(model, i):
    """The fixture's rule (sample_test.go's fixtureTraces)."""
    fail = {"alpha": i % 9 == 0, "beta": i % 3 == 0, "gamma": i % 4 == 1}[model]
    if model == "alpha" and i % 50 == 7:
        return "", "500"  # a failed call
    if fail:
        return "Sure! {\"ok\": tru", ""
    return json.dumps({"ok": True, "n": i}), ""


def is_json(text, err):
    if err:
        return False
    try:
        json.loads(text)
        return True
    except ValueError:
        return False


seed = splitmix(SEED ^ 0x9E3779B97F4A7C15)
strata = []
for model, n in MODELS:
    ids = ["%s-%04d" % (model, i) for i in range(n)]
    ranked = sorted(ids, key=lambda x: (splitmix(fnv1a64(x) ^ seed), x))
    drawn = ranked[:PER]
    ys = []
    for tid in drawn:
        text, err = output(model, int(tid.split("-")[1]))
        ys.append(1.0 if is_json(text, err) else 0.0)
    strata.append({"model": model, "N": n, "drawn": drawn, "ys": ys})


def estimate(ss):
    N = sum(s["N"] for s in ss)
    n = sum(len(s["ys"]) for s in ss)
    mean = sum(s["N"] / N * np.mean(s["ys"]) for s in ss)
    var = sum((s["N"] / N) ** 2 * (1 - len(s["ys"]) / s["N"]) * np.var(s["ys"], ddof=1) / len(s["ys"]) for s in ss)
    b = sum((s["N"] / N) ** 2 * (1 - len(s["ys"]) / s["N"]) / len(s["ys"]) for s in ss)
    unweighted = sum(sum(s["ys"]) for s in ss) / n
    if b == 0:
        return dict(rate=mean, se=0.0, lo=mean, hi=mean, n=n, population=N, unweighted=unweighted)
    pq = mean * (1 - mean)
    nb = min(N, 1 / b)
    neff = min(nb, pq / var) if pq > 0 and var > 1e-18 * pq / n else nb
    t = stats.t.ppf(1 - (1 - LEVEL) / 2, max(1, n - len(ss)))
    den = 1 + t * t / neff
    centre = (mean + t * t / (2 * neff)) / den
    half = t / den * np.sqrt(pq / neff + t * t / (4 * neff * neff))
    return dict(rate=mean, se=float(np.sqrt(var)), lo=max(0.0, centre - half), hi=min(1.0, centre + half),
                n=n, population=N, unweighted=unweighted)


rates = []
for s in strata:
    rates.append(dict(model=s["model"], **estimate([s])))
rates.append(dict(model="(all)", **estimate(strata)))
print(json.dumps({"seed": SEED, "per": PER, "level": LEVEL,
                  "strata": [{"key": "model=" + s["model"], "population": s["N"], "drawn": s["drawn"]} for s in strata],
                  "rates": rates}, indent=1))
