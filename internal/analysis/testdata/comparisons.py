#!/usr/bin/python3
# Reference values for the report's paired comparisons as analysis makes
# them from a store (compare_store_test.go), and for the GSM8K report
# (internal/cli/gsm8k_report_test.go), from implementations independent of
# ours: statsmodels 0.13.5 and scipy 1.10.1 (Debian python3-statsmodels /
# python3-scipy), and the Tango interval of internal/stats/testdata/tango.py
# (scipy brentq on a numerically maximised restricted likelihood, itself
# checked there against a published example).
#
# Regenerate (from the module root):
#   /usr/bin/python3 internal/analysis/testdata/comparisons.py > internal/analysis/testdata/comparisons.json
#
# Blocks:
#   slices     three targets on 120 cases with a "tier" tag of four values,
#              one pass/fail per case. Per pair and per slice: the McNemar
#              score p (statsmodels mcnemar(exact=False, correction=False))
#              and Tango's interval; overall p-values Holm-adjusted over the
#              3 pairs, slice p-values over all 3 x 4 slice comparisons of
#              the tag (statsmodels multipletests(method="holm")); verdicts
#              by the rule written out below.
#   clustered  two targets on 10 clusters x 3 cases whose difference varies
#              by cluster: statsmodels OLS(a - b, ones).fit(cov_type="cluster",
#              use_t=True): delta, CR1 se, t interval and p on G - 1 = 9 df.
#   epochs     two targets on 40 cases x 3 epochs: scipy ttest_rel on the
#              per-case means and the t interval on n - 1 df.
#   gsm8k      the six GSM8K pairs of internal/stats/testdata/paired.json
#              (n = 1319): score p, Tango interval, Holm over the six.
import contextlib
import io
import json
import math
import os
import sys

import numpy as np
from scipy import stats
import statsmodels.api as sm
from statsmodels.stats.multitest import multipletests

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "stats", "testdata"))
with contextlib.redirect_stdout(io.StringIO()):
    import tango  # noqa: E402  (its own golden output is discarded)

ALPHA, MARGIN = 0.05, 0.02


def verdict(delta, lo, hi, padj):
    if lo > -MARGIN and hi < MARGIN:
        return "equivalent"
    if padj < ALPHA and lo > 0:
        return "a_better"
    if padj < ALPHA and hi < 0:
        return "b_better"
    return "inconclusive"


def binary(a, b):
    a, b = np.asarray(a), np.asarray(b)
    n = len(a)
    bb = int(np.sum((a == 1) & (b == 0)))
    cc = int(np.sum((a == 0) & (b == 1)))
    lo, hi = tango.tango_ci(bb, cc, n, ALPHA)
    return {"n": n, "a_only": bb, "b_only": cc, "delta": (bb - cc) / n, "ci": [lo, hi], "p": tango.score_p(bb, cc)}


rng = np.random.default_rng(20261203)
out = {}

# slices
n = 120
tiers = np.array(["easy", "medium", "hard", "expert"])[np.arange(n) % 4]
skill = {"easy": 0.9, "medium": 0.7, "hard": 0.45, "expert": 0.25}
boost = {"t1": 0.0, "t2": -0.12, "t3": -0.25}
passes = {}
for t, d in boost.items():
    p = np.array([min(0.99, max(0.01, skill[x] + d)) for x in tiers])
    passes[t] = (rng.uniform(size=n) < p).astype(int)
names = list(boost)
pairs, slices = [], []
for i in range(len(names)):
    for j in range(i + 1, len(names)):
        a, b = passes[names[i]], passes[names[j]]
        c = binary(a, b)
        c.update({"a": names[i], "b": names[j]})
        pairs.append(c)
        for v in ["easy", "medium", "hard", "expert"]:
            m = tiers == v
            s = binary(a[m], b[m])
            s.update({"a": names[i], "b": names[j], "value": v})
            slices.append(s)
for fam in (pairs, slices):
    adj = multipletests([c["p"] for c in fam], method="holm")[1]
    for c, pa in zip(fam, adj):
        c["p_adjusted"] = float(pa)
        c["verdict"] = verdict(c["delta"], c["ci"][0], c["ci"][1], pa)
out["slices"] = {"tiers": tiers.tolist(), "passes": {t: passes[t].tolist() for t in names},
                 "pairs": pairs, "slice_comparisons": slices}

# clustered
G, m = 10, 3
groups = np.repeat(np.arange(G), m)
shift = rng.normal(0, 0.3, G)
pa = np.clip(0.6 + shift[groups], 0.02, 0.98)
pb = np.clip(0.6 - shift[groups], 0.02, 0.98)
a = (rng.uniform(size=G * m) < pa).astype(int)
b = (rng.uniform(size=G * m) < pb).astype(int)
d = (a - b).astype(float)
fit = sm.OLS(d, np.ones_like(d)).fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
lo, hi = fit.conf_int(alpha=ALPHA)[0]
out["clustered"] = {"a": a.tolist(), "b": b.tolist(), "clusters": ["k%d" % g for g in groups],
                    "delta": float(fit.params[0]), "se": float(fit.bse[0]), "ci": [float(lo), float(hi)],
                    "p": float(fit.pvalues[0]), "df": int(fit.df_resid_inference) if hasattr(fit, "df_resid_inference") else G - 1}

# epochs
n, K = 40, 3
lat = rng.beta(2, 2, size=n)
ea = (rng.uniform(size=(n, K)) < np.clip(lat + 0.1, 0, 1)[:, None]).astype(int)
eb = (rng.uniform(size=(n, K)) < lat[:, None]).astype(int)
ma, mb = ea.mean(axis=1), eb.mean(axis=1)
tt = stats.ttest_rel(ma, mb)
dd = ma - mb
se = float(np.std(dd, ddof=1) / math.sqrt(n))
q = stats.t.ppf(1 - ALPHA / 2, n - 1)
out["epochs"] = {"a": ea.tolist(), "b": eb.tolist(), "delta": float(dd.mean()), "se": se,
                 "ci": [float(dd.mean() - q * se), float(dd.mean() + q * se)], "p": float(tt.pvalue), "df": n - 1}

# gsm8k
with open(os.path.join(here, "..", "..", "stats", "testdata", "paired.json")) as f:
    ref = json.load(f)["gsm8k"]["pairs"]
gs = []
for r in ref:
    nn = r["both"] + r["a_only"] + r["b_only"] + r["neither"]
    lo, hi = tango.tango_ci(r["a_only"], r["b_only"], nn, ALPHA)
    gs.append({"a": r["a"], "b": r["b"], "n": nn, "a_only": r["a_only"], "b_only": r["b_only"],
               "delta": (r["a_only"] - r["b_only"]) / nn, "ci": [lo, hi], "p": tango.score_p(r["a_only"], r["b_only"])})
adj = multipletests([g["p"] for g in gs], method="holm")[1]
for g, pa in zip(gs, adj):
    g["p_adjusted"] = float(pa)
    g["verdict"] = verdict(g["delta"], g["ci"][0], g["ci"][1], pa)
out["gsm8k"] = gs

json.dump(out, sys.stdout, indent=1)
sys.stdout.write("\n")
