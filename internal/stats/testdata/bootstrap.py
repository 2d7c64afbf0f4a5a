#!/usr/bin/python3
# Golden vectors for the bootstrap intervals, from scipy.stats.bootstrap
# (Debian python3-scipy 1.10.1, numpy 1.24), an implementation independent
# of ours.
#
# "exact": deterministic pieces, to be matched to 1e-9. For a stored data set
# and a stored set of bootstrap replicates (drawn here with numpy), scipy's
# own BCa code (scipy.stats._resampling._bca_interval, private but stable in
# 1.10) gives the bias correction z0, the jackknife acceleration a and the
# adjusted levels; the intervals are np.percentile of the stored replicates
# at those levels, exactly as scipy.stats.bootstrap finishes. The percentile
# interval is np.percentile at alpha/2 and 1-alpha/2. Statistics: the mean,
# and for one set the median (to exercise a general jackknife).
#
# "monte_carlo": full scipy.stats.bootstrap runs (method "BCa" and
# "percentile", B = 20,000) repeated with SEEDS seeds; we record the mean
# endpoint and its standard deviation across seeds, so the Go test can allow
# for Monte Carlo error honestly (its own run has the same B).
#
# Regenerate (takes a few seconds):
#   /usr/bin/python3 internal/stats/testdata/bootstrap.py > internal/stats/testdata/bootstrap.json
import json

import numpy as np
from scipy.special import ndtri
from scipy.stats import bootstrap
from scipy.stats._resampling import _bca_interval, _jackknife_resample, _percentile_of_score

rng = np.random.default_rng(7)
B_EXACT = 1000
B_MC = 20000
SEEDS = 10

datasets = {
    "exponential 40": rng.exponential(1.0, 40),
    "pass/fail 30": (rng.uniform(0, 1, 30) < 0.7).astype(float),
    "normal 25": rng.normal(10, 3, 25),
    "lognormal 60": rng.lognormal(0, 1, 60),
}

exact = []
for name, xs in datasets.items():
    for stat_name, stat in (("mean", np.mean), ("median", np.median)):
        if stat_name == "median" and name != "lognormal 60":
            continue
        idx = rng.integers(0, len(xs), (B_EXACT, len(xs)))
        reps = stat(xs[idx], axis=-1)
        theta = float(stat(xs))
        jack = np.concatenate([stat(j, axis=-1) for j in _jackknife_resample(xs)])
        for alpha in (0.05, 0.1):
            a1, a2, a_hat = _bca_interval((xs,), lambda x, axis: stat(x, axis=axis), -1,
                                          alpha / 2, reps, None)
            z0 = float(ndtri(_percentile_of_score(reps, theta, axis=-1)))
            exact.append({
                "name": name, "stat": stat_name, "alpha": alpha,
                "xs": xs.tolist(), "reps": reps.tolist(), "theta": theta,
                "jack": jack.tolist(),
                "z0": z0, "accel": float(a_hat),
                "bca_levels": [float(a1), float(a2)],
                "bca": [float(np.percentile(reps, a1 * 100)), float(np.percentile(reps, a2 * 100))],
                "percentile": [float(np.percentile(reps, alpha / 2 * 100)),
                               float(np.percentile(reps, (1 - alpha / 2) * 100))],
            })

monte_carlo = []
for name, xs in datasets.items():
    for stat_name, stat in (("mean", np.mean), ("median", np.median)):
        if stat_name == "median" and name != "lognormal 60":
            continue
        for method in ("BCa", "percentile"):
            ends = []
            for seed in range(SEEDS):
                res = bootstrap((xs,), stat, n_resamples=B_MC, confidence_level=0.95,
                                method=method, random_state=np.random.default_rng(1000 + seed))
                ends.append([res.confidence_interval.low, res.confidence_interval.high])
            ends = np.array(ends)
            monte_carlo.append({
                "name": name, "stat": stat_name, "method": method.lower(), "alpha": 0.05,
                "b": B_MC, "seeds": SEEDS, "xs": xs.tolist(),
                "lo": float(ends[:, 0].mean()), "hi": float(ends[:, 1].mean()),
                "lo_sd": float(ends[:, 0].std(ddof=1)), "hi_sd": float(ends[:, 1].std(ddof=1)),
            })

print(json.dumps({"exact": exact, "monte_carlo": monte_carlo}))
