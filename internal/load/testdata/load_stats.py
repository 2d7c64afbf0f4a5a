#!/usr/bin/python3
# Reference values for internal/load's statistics, computed with numpy and
# statsmodels, independently of assay's code.
#
# "steps": latency and time-to-first-token samples of a step (lognormal,
# like real latencies). Points: np.quantile (numpy's default, "linear").
# Intervals: the percentile bootstrap over requests (B = 2000 resamples,
# 2.5th and 97.5th percentiles of the replicate quantiles), run with SEEDS
# seeds; we record each endpoint's mean and standard deviation across
# seeds, so the Go test (its own single run, same B) allows for Monte Carlo
# error honestly.
#
# "wilson": statsmodels.stats.proportion.proportion_confint(method="wilson").
#
# "gate": two independent samples (base, candidate); the one-sided test of
# a p95 rise against an allowance: excess = p95(cand*) - p95(base*) -
# allowance(p95(base*)) over independent resamples of each side; the
# bounds are the alpha and 1-alpha quantiles of the excess (alpha 0.05).
# Same mean/sd over seeds.
#
# Regenerate (a few seconds):
#   /usr/bin/python3 internal/load/testdata/load_stats.py > internal/load/testdata/load_stats.json
import json

import numpy as np
from statsmodels.stats.proportion import proportion_confint

B = 2000
SEEDS = 30
data_rng = np.random.default_rng(2026)


def boot_quantile(xs, q, seed):
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(xs), (B, len(xs)))
    return np.quantile(xs[idx], q, axis=1)


def summary(vals):
    vals = np.asarray(vals)
    return {"mean": float(vals.mean()), "sd": float(vals.std(ddof=1))}


steps = []
for name, n, mu, sigma in (("lognormal 400", 400, np.log(200), 0.5), ("lognormal 150", 150, np.log(80), 0.8)):
    lat = np.round(data_rng.lognormal(mu, sigma, n), 3)
    ttft = np.round(lat * data_rng.uniform(0.1, 0.3, n), 3)
    measures = {}
    for mname, xs, qs in (("latency", lat, (0.5, 0.95, 0.99)), ("ttft", ttft, (0.5, 0.95))):
        for q in qs:
            los, his = [], []
            for s in range(SEEDS):
                reps = boot_quantile(xs, q, 1000 + s)
                lo, hi = np.percentile(reps, [2.5, 97.5])
                los.append(lo)
                his.append(hi)
            measures[f"{mname} {q}"] = {"point": float(np.quantile(xs, q)), "lo": summary(los), "hi": summary(his)}
    steps.append({"name": name, "latency": lat.tolist(), "ttft": ttft.tolist(), "measures": measures})

wilson = []
for k, n in ((0, 50), (3, 200), (17, 400), (120, 130), (1, 1)):
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    wilson.append({"k": k, "n": n, "lo": float(lo), "hi": float(hi)})

gate = []
base = np.round(data_rng.lognormal(np.log(300), 0.4, 300), 3)
for name, scale, rel in (("same", 1.0, 0.2), ("slower by 10%", 1.1, 0.2), ("slower by 60%", 1.6, 0.2)):
    cand = np.round(data_rng.lognormal(np.log(300 * scale), 0.4, 250), 3)
    los, his = [], []
    for s in range(SEEDS):
        rb = boot_quantile(base, 0.95, 5000 + s)
        rc = boot_quantile(cand, 0.95, 9000 + s)
        excess = rc - rb - rel * rb
        lo, hi = np.quantile(excess, [0.05, 0.95])
        los.append(lo)
        his.append(hi)
    gate.append({"name": name, "base": base.tolist(), "cand": cand.tolist(), "max_rise": f"{int(rel * 100)}%",
                 "base_p95": float(np.quantile(base, 0.95)), "cand_p95": float(np.quantile(cand, 0.95)),
                 "lo": summary(los), "hi": summary(his)})

print(json.dumps({"B": B, "seeds": SEEDS, "steps": steps, "wilson": wilson, "gate": gate}, indent=1))
