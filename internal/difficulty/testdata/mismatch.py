#!/usr/bin/python3
# Golden values for difficulty.Compare (internal/difficulty/mismatch.go),
# computed independently of the Go code:
#
# - Wasserstein-1 from scipy.stats.wasserstein_distance (with the
#   workload's weights where it has them); Kolmogorov-Smirnov from
#   scipy.stats.ks_2samp's statistic (unweighted sets only); total variation
#   on bins as 0.5 * sum |p - q| of numpy histogram shares.
# - Permutation p-values of the three distances (unweighted sets) from
#   scipy.stats.permutation_test (independent samples, B = 4000, "greater").
# - Bootstrap percentile intervals of the three distances, each side
#   resampled independently with numpy (B = 4000); the Go test, with its
#   own generator, allows for Monte Carlo error.
# - Post-stratified rates: the mean of case means (right/trials over
#   epochs) per bin, weighted by the workload's share of the bin; SE from
#   the stratified variance sum W_h^2 s_h^2 / n_h (ddof 1; a bin with one
#   case takes the pooled variance of every bin); Kish n = 1 / sum W_h^2/n_h;
#   a t interval (scipy.stats.t) on Satterthwaite's degrees of freedom
#   (sum a_h s_h^2)^2 / sum (a_h s_h^2)^2/(n_h - 1), a_h = W_h^2/n_h.
#   Raw: the same with each bin weighted by its own share of the target's
#   cases (that is, the plain mean of case means).
# - Paired comparisons: the same estimator on per-case differences of case
#   means (cases both targets have), two-sided t p-value on the same
#   degrees of freedom, Holm over
#   the pairs from statsmodels.stats.multitest.multipletests, and the
#   verdict rule of stats.Verdict written out again here; per bin, the
#   paired differences' mean with scipy.stats.ttest_1samp's p-value and
#   interval.
# - Covered-only: the same estimators (scores and pairs) under the
#   workload's shares restricted to the bins where the target (or pair)
#   has cases, renormalised to sum 1; Holm over the pairs' covered
#   comparisons as a family of its own; the covered ranking (rate, then
#   name) and how many covered verdicts differ from the raw ones;
#   "comparable" only when no re-weighted score or comparison is missing.
#
# Regenerate:
#   /usr/bin/python3 internal/difficulty/testdata/mismatch.py > internal/difficulty/testdata/mismatch.json
import itertools
import json

import numpy as np
from scipy.stats import ks_2samp, norm, permutation_test, ttest_1samp, wasserstein_distance
from scipy.stats import t as student_t
from statsmodels.stats.multitest import multipletests

ALPHA = 0.05
MARGIN = 0.02
B = 4000


def verdict(delta, lo, hi, padj):
    if MARGIN > 0 and lo > -MARGIN and hi < MARGIN:
        return "equivalent"
    if padj < ALPHA:
        if lo > 0:
            return "a_better"
        if hi < 0:
            return "b_better"
    return "inconclusive"


def results(rng, values, abilities, epochs, missing):
    """Per target, right and trials per case: P(right) falls with difficulty."""
    out = []
    for name, (theta, slope) in abilities.items():
        p = 1 / (1 + np.exp(-(theta - slope * values)))
        trials = np.full(len(values), epochs)
        trials[rng.uniform(size=len(values)) < missing] = 0
        right = rng.binomial(trials, p)
        out.append({"name": name, "right": right.tolist(), "trials": trials.tolist()})
    return out


def stratified(strata, W):
    """[estimate, SE, Kish n, n, Satterthwaite df, t interval clipped to [0, 1]]."""
    allv = np.concatenate([s for s in strata if len(s)])
    pooled = allv.var(ddof=1) if len(allv) > 1 else 0.0
    est = var = ksum = dden = 0.0
    n = 0
    for s, w in zip(strata, W):
        if w == 0 or len(s) == 0:
            continue
        s2, dfh = (s.var(ddof=1), len(s) - 1) if len(s) > 1 else (pooled, len(allv) - 1)
        term = w * w * s2 / len(s)
        est += w * s.mean()
        var += term
        if term > 0:
            dden += term * term / dfh
        ksum += w * w / len(s)
        n += len(s)
    df = var * var / dden if var > 0 and dden > 0 else np.inf
    se = np.sqrt(var)
    q = student_t.ppf(1 - ALPHA / 2, df) if np.isfinite(df) else norm.ppf(1 - ALPHA / 2)
    return [est, se, 1 / ksum, n, df if np.isfinite(df) else 0.0, max(0.0, est - q * se), min(1.0, est + q * se)]


def scenario(name, bench, bweights, work, wweights, targets, edges=None, discrete=None):
    bench, work = np.asarray(bench, float), np.asarray(work, float)
    bw = np.ones(len(bench)) if bweights is None else np.asarray(bweights, float)
    ww = np.ones(len(work)) if wweights is None else np.asarray(wweights, float)
    if discrete is not None:
        centres = np.asarray(discrete, float)
        binof = lambda xs: np.searchsorted(centres, xs)
        nb = len(centres)
    else:
        binof = lambda xs: np.clip(np.searchsorted(edges, xs, side="right") - 1, 0, len(edges) - 2)
        nb = len(edges) - 1
    bb, wb = binof(bench), binof(work)
    bshare = np.bincount(bb, weights=bw, minlength=nb) / bw.sum()
    wshare = np.bincount(wb, weights=ww, minlength=nb) / ww.sum()
    bcount = np.bincount(bb, minlength=nb)
    wcount = np.bincount(wb, minlength=nb)
    out = {
        "name": name,
        "input": {
            "bench": bench.tolist(), "bench_weights": bweights, "work": work.tolist(), "work_weights": wweights,
            "targets": targets, "edges": None if edges is None else list(edges), "discrete": discrete is not None,
        },
        "bench_count": bcount.tolist(), "work_count": wcount.tolist(),
        "bench_share": bshare.tolist(), "work_share": wshare.tolist(),
        "gap": [bool(wcount[h] > 0 and bcount[h] == 0) for h in range(nb)],
        "uncovered_share": float(sum(wshare[h] for h in range(nb) if wcount[h] > 0 and bcount[h] == 0)),
        "w1": wasserstein_distance(bench, work, bw, ww),
        "tv": 0.5 * np.abs(bshare - wshare).sum(),
    }
    if bweights is None and wweights is None:
        out["ks"] = ks_2samp(bench, work).statistic
    # Bootstrap: each side resampled independently.
    rng = np.random.default_rng(11)
    reps = {"w1": [], "ks": [], "tv": []}
    for _ in range(B):
        i = rng.integers(0, len(bench), len(bench))
        j = rng.integers(0, len(work), len(work))
        u, v, uw, vw = bench[i], work[j], bw[i], ww[j]
        reps["w1"].append(wasserstein_distance(u, v, uw, vw))
        if bweights is None and wweights is None:
            reps["ks"].append(ks_2samp(u, v).statistic)
        p = np.bincount(bb[i], weights=uw, minlength=nb) / uw.sum()
        q = np.bincount(wb[j], weights=vw, minlength=nb) / vw.sum()
        reps["tv"].append(0.5 * np.abs(p - q).sum())
    # Permutation p-values (unweighted sets): scipy.stats.permutation_test.
    if bweights is None and wweights is None:
        def tv_of(x, y):
            p = np.bincount(binof(x), minlength=nb) / len(x)
            q = np.bincount(binof(y), minlength=nb) / len(y)
            return 0.5 * np.abs(p - q).sum()
        stats = {"w1": lambda x, y: wasserstein_distance(x, y), "ks": lambda x, y: ks_2samp(x, y).statistic, "tv": tv_of}
        out["perm"] = {k: permutation_test((bench, work), f, permutation_type="independent", vectorized=False,
                                           n_resamples=B, alternative="greater", random_state=5).pvalue
                       for k, f in stats.items()}
    out["boot"] = {k: {"lo": float(np.percentile(r, 2.5)), "hi": float(np.percentile(r, 97.5)), "sd": float(np.std(r))}
                   for k, r in reps.items() if r}

    means = {}
    scores = []
    for t in targets:
        r, n = np.asarray(t["right"], float), np.asarray(t["trials"], float)
        m = np.where(n > 0, r / np.maximum(n, 1), np.nan)
        means[t["name"]] = m
        strata = [m[(bb == h) & ~np.isnan(m)] for h in range(nb)]
        own = np.array([len(s) for s in strata], float)
        raw = stratified(strata, own / own.sum())
        needed_missing = [h for h in range(nb) if wshare[h] > 0 and len(strata[h]) == 0]
        rw = None if needed_missing else stratified(strata, wshare)
        cov_w = np.array([wshare[h] if len(strata[h]) else 0.0 for h in range(nb)])
        cov_share = cov_w.sum()
        cov = stratified(strata, cov_w / cov_share)
        per_bin = [{"passed": int(r[bb == h].sum()), "n": int(n[bb == h].sum())} for h in range(nb)]
        scores.append({"target": t["name"], "raw": raw, "reweighted": rw, "covered": cov,
                       "covered_share": cov_share, "per_bin": per_bin})
    out["scores"] = scores
    pairs = []
    for a, b in itertools.combinations([t["name"] for t in targets], 2):
        d = means[a] - means[b]
        strata = [d[(bb == h) & ~np.isnan(d)] for h in range(nb)]
        own = np.array([len(s) for s in strata], float)
        res = {"a": a, "b": b, "per_bin": []}
        for s in strata:
            if len(s) < 2:
                res["per_bin"].append({"n": len(s)})
                continue
            r = ttest_1samp(s, 0)
            ci = r.confidence_interval(1 - ALPHA)
            res["per_bin"].append({"n": len(s), "delta": s.mean(), "se": s.std(ddof=1) / np.sqrt(len(s)),
                                   "lo": max(-1.0, ci.low), "hi": min(1.0, ci.high),
                                   "p": None if np.isnan(r.pvalue) else r.pvalue})
        # Covered: the workload's shares over the bins where the pair has
        # paired cases, renormalised (the measurable part of the mix).
        cov_w = np.array([wshare[h] if len(strata[h]) else 0.0 for h in range(nb)])
        res["covered_share"] = float(cov_w.sum())
        for kind, W in (("raw", own / own.sum()), ("reweighted", wshare), ("covered", cov_w / cov_w.sum())):
            if any(W[h] > 0 and len(strata[h]) == 0 for h in range(nb)):
                res[kind] = None
                continue
            est, se, _, n, df, _, _ = stratified(strata, W)
            q = student_t.ppf(1 - ALPHA / 2, df)
            p = 2 * student_t.sf(abs(est) / se, df)
            res[kind] = {"delta": est, "se": se, "df": df, "lo": max(-1.0, est - q * se), "hi": min(1.0, est + q * se), "p": p, "n": n}
        pairs.append(res)
    for kind in ("raw", "reweighted", "covered"):
        idx = [k for k, p in enumerate(pairs) if p[kind] is not None]
        if not idx:
            continue
        ps = [pairs[k][kind]["p"] for k in idx] + [1.0] * (len(pairs) - len(idx))
        adj = multipletests(ps, method="holm")[1]
        for k, a in zip(idx, adj):
            c = pairs[k][kind]
            c["padj"] = float(a)
            c["verdict"] = verdict(c["delta"], c["lo"], c["hi"], a)
    out["pairs"] = pairs
    # Rankings (highest rate first, ties by name) and what changes against
    # the raw ones; the whole mix is comparable only without a gap.
    def rank(kind):
        xs = [(-s[kind][0], s["target"]) for s in scores if s[kind] is not None]
        return [t for _, t in sorted(xs)]
    out["comparable"] = bool(scores) and all(s["reweighted"] is not None for s in scores) and \
        all(p["reweighted"] is not None for p in pairs)
    out["ranking_raw"], out["ranking_covered"] = rank("raw"), rank("covered")
    out["ranking_covered_changed"] = len(out["ranking_covered"]) > 1 and out["ranking_raw"] != out["ranking_covered"]
    out["verdicts_changed_covered"] = sum(1 for p in pairs if p["raw"] is not None and p["covered"] is not None
                                          and p["raw"]["verdict"] != p["covered"]["verdict"])
    return out


def main():
    rng = np.random.default_rng(2026)
    cases = []
    # 1. Continuous difficulties, unweighted: the workload sits higher.
    bench = np.round(rng.normal(0, 1, 300), 3)
    work = np.round(rng.normal(0.8, 1.2, 200), 3)
    targets = results(rng, bench, {"steady": (1.0, 0.3), "brittle": (1.6, 1.4), "weak": (0.2, 0.6)}, 3, 0.05)
    lo, hi = min(bench.min(), work.min()), max(bench.max(), work.max())
    cases.append(scenario("continuous", bench, None, work, None, targets, edges=np.linspace(lo, hi, 7)))
    # 2. The same with workload weights (W1 and TV only: ks_2samp has none).
    wweights = np.round(rng.uniform(0.2, 3.0, len(work)), 2).tolist()
    cases.append(scenario("weighted", bench, None, work, wweights, targets, edges=np.linspace(lo, hi, 7)))
    # 3. Discrete tiers 1..8; the benchmark has none of tiers 7 and 8, so the
    #    re-weighted scores cannot be computed; one epoch, pass/fail.
    bt = rng.choice([1, 2, 3, 4, 5, 6], 400, p=[.25, .25, .2, .15, .1, .05]).astype(float)
    wt = rng.choice([1, 2, 3, 4, 5, 6, 7, 8], 150, p=[.05, .05, .1, .1, .2, .2, .15, .15]).astype(float)
    targets = results(rng, bt, {"a": (4.0, 0.7), "b": (3.0, 0.4), "c": (5.0, 1.0)}, 1, 0.0)
    cases.append(scenario("tiers with a gap", bt, None, wt, None, targets, discrete=list(range(1, 9))))
    # 4. The same tiers, the workload without tiers 7 and 8: computable; tier
    #    6 holds a single benchmark case (its variance pooled).
    bt4 = bt.copy()
    bt4[bt4 == 6] = 5
    bt4[0] = 6
    wt4 = np.where(wt > 6, 6, wt)
    targets4 = results(rng, bt4, {"a": (4.0, 0.7), "b": (3.0, 0.4), "c": (5.0, 1.0)}, 2, 0.1)
    cases.append(scenario("tiers covered", bt4, None, wt4, None, targets4, discrete=list(range(1, 7))))
    # 5. Two samples of nearly one distribution, no results: moderate
    #    permutation p-values.
    alike_b = np.round(rng.normal(0, 1, 80), 3)
    alike_w = np.round(rng.normal(0.15, 1, 60), 3)
    lo, hi = min(alike_b.min(), alike_w.min()), max(alike_b.max(), alike_w.max())
    cases.append(scenario("alike", alike_b, None, alike_w, None, [], edges=np.linspace(lo, hi, 5)))
    json.dump(cases, __import__("sys").stdout, indent=1, default=float)


main()
