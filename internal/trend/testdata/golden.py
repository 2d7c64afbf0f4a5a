#!/usr/bin/python3
"""Independent reference values for internal/trend's golden test.

Writes observations.csv (a seeded stratified sample of scored traces: two
models, five ISO weeks, two strata of unequal weights, a drop planted in
model alpha's fourth week) and golden.json: each model × week's weighted
rate and its stratified standard error (the textbook formula
sum_h (N_h/N)^2 s_h^2 / n_h, with N_h = n_h * w_h, without the finite
population correction: trend's inference is about the model, of which a
week's calls are a draw; the rate's
interval is stats.WeightedMean's, checked by internal/stats), and each
week's change against the week before: the
one-sided p-value norm.cdf(z) with z = d / se0, se0 the pooled standard
error under no change (each stratum's rate pooled over both weeks,
p_h(1 - p_h) * sum w^2 / (sum w)^2 per week), Holm-adjusted by statsmodels;
the change's interval d -/+ norm.ppf(0.975) * sqrt(se1^2 + se0^2) uses the
weeks' own standard errors.

Run: /usr/bin/python3 golden.py (from this directory).
"""
import csv
import datetime as dt
import json
import math

import numpy as np
from scipy import stats
from statsmodels.stats.multitest import multipletests

LEVEL = 0.95
ALPHA = 1 - LEVEL
rng = np.random.default_rng(20261203)

# (stratum, weight, draws per week)
STRATA = [("route=a", 4.0, 30), ("route=b", 1.5, 20)]
MODELS = {
    # model: per week, per stratum pass probability
    "alpha": [(0.92, 0.85), (0.90, 0.86), (0.93, 0.84), (0.62, 0.60), (0.66, 0.62)],
    "beta": [(0.80, 0.70), (0.82, 0.72), (0.79, 0.69), (0.81, 0.71), (0.80, 0.74)],
}
MONDAY = dt.datetime(2026, 11, 2, tzinfo=dt.timezone.utc)  # 2026-W45

rows = []
for model, weeks in MODELS.items():
    for wk, probs in enumerate(weeks):
        for (stratum, w, n), p in zip(STRATA, probs):
            ys = rng.random(n) < p
            for i, y in enumerate(ys):
                t = MONDAY + dt.timedelta(days=7 * wk, seconds=int(rng.integers(0, 7 * 86400)))
                rows.append({"id": f"{model}-{wk}-{stratum}-{i}", "model": model,
                             "time": t.strftime("%Y-%m-%dT%H:%M:%SZ"),
                             "stratum": stratum, "weight": w, "pass": int(y)})

with open("observations.csv", "w", newline="") as f:
    wr = csv.DictWriter(f, fieldnames=["id", "model", "time", "stratum", "weight", "pass"])
    wr.writeheader()
    wr.writerows(rows)


def week_of(s):
    t = dt.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ")
    y, w, _ = t.isocalendar()
    return f"{y:04d}-W{w:02d}"


def estimate(obs):
    """obs: list of (stratum, weight, y)."""
    strata = sorted({s for s, _, _ in obs})
    N = sum(w for _, w, _ in obs)
    p = sum(w * y for _, w, y in obs) / N
    var = 0.0
    for h in strata:
        ys = np.array([y for s, _, y in obs if s == h], dtype=float)
        ws = [w for s, w, _ in obs if s == h]
        n_h = len(ys)
        N_h = sum(ws)
        s2 = ys.var(ddof=1)
        var += (N_h / N) ** 2 * s2 / n_h
    return {"n": len(obs), "passed": int(sum(y for _, _, y in obs)), "population": N,
            "rate": p, "se": math.sqrt(var)}


weeks = sorted({week_of(r["time"]) for r in rows})
golden = {"level": LEVEL, "weeks": weeks, "models": {}}
tests = []
for model in sorted(MODELS):
    pts = []
    for wk in weeks:
        obs = [(r["stratum"], r["weight"], r["pass"]) for r in rows if r["model"] == model and week_of(r["time"]) == wk]
        pts.append(dict(window=wk, **estimate(obs)))
    zq = stats.norm.ppf(1 - ALPHA / 2)
    for a, b in zip(pts, pts[1:]):
        d = b["rate"] - a["rate"]
        se = math.hypot(a["se"], b["se"])
        both = [r for r in rows if r["model"] == model and week_of(r["time"]) in (a["window"], b["window"])]
        pooled = {}
        for h, _, _ in STRATA:
            ws = np.array([r["weight"] for r in both if r["stratum"] == h])
            ys = np.array([r["pass"] for r in both if r["stratum"] == h])
            pooled[h] = float((ws * ys).sum() / ws.sum())
        v0 = 0.0
        for wk in (a["window"], b["window"]):
            sel = [r for r in both if week_of(r["time"]) == wk]
            total = sum(r["weight"] for r in sel)
            v0 += sum(r["weight"] ** 2 * pooled[r["stratum"]] * (1 - pooled[r["stratum"]]) for r in sel) / total ** 2
        se0 = math.sqrt(v0)
        z = d / se0
        b["change"] = {"against": a["window"], "delta": d, "se": se, "lo": d - zq * se, "hi": d + zq * se,
                       "se0": se0, "z": z, "p": stats.norm.cdf(z)}
        tests.append(b["change"])
    golden["models"][model] = pts
reject, padj, _, _ = multipletests([c["p"] for c in tests], alpha=ALPHA, method="holm")
for c, r, pa in zip(tests, reject, padj):
    c["p_adjusted"] = float(pa)
    c["drop"] = bool(r)
golden["drops"] = int(sum(reject))

with open("golden.json", "w") as f:
    json.dump(golden, f, indent=1, sort_keys=True)
    f.write("\n")
