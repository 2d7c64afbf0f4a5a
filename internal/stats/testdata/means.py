#!/usr/bin/python3
# Golden vectors for MeanSE, ClusteredMeanSE and EpochMeans.
#
# Sources, all independent of our Go code:
#   mean_se    statsmodels OLS(y, ones).fit() (the non-robust standard error
#              of an intercept-only regression is s/sqrt(n)), cross-checked
#              here against scipy.stats.sem and Python's exact-rational
#              statistics.stdev;
#   clustered  statsmodels OLS(y, ones).fit(cov_type="cluster",
#              cov_kwds={"groups": g}) with its default small-sample
#              correction (CR1, G/(G-1));
#   epochs     numpy: per-case np.mean, and np.var(ddof=1) averaged over the
#              cases with at least two epochs.
# For data far from zero (a 1e9 offset), where the float algorithms of
# statsmodels lose digits, the golden value is computed exactly with
# fractions.Fraction instead and the "source" field says so.
# NaN (undefined results) is written as null.
#
# Debian python3-statsmodels 0.13.5, python3-scipy 1.10.1, numpy 1.24.
# Regenerate:
#   /usr/bin/python3 internal/stats/testdata/means.py > internal/stats/testdata/means.json
import json
import math
import statistics
from fractions import Fraction

import numpy as np
import scipy.stats
import statsmodels.api as sm

rng = np.random.default_rng(20241101)


def num(x):
    x = float(x)
    return None if math.isnan(x) else x


def exact_mean_se(xs):
    fx = [Fraction(x) for x in xs]
    n = len(fx)
    m = sum(fx) / n
    var = sum((x - m) ** 2 for x in fx) / (n - 1)
    return float(m), math.sqrt(var / n)


def exact_cluster_se(xs, groups):
    fx = [Fraction(x) for x in xs]
    n = len(fx)
    m = sum(fx) / n
    sums = {}
    for x, g in zip(fx, groups):
        sums[g] = sums.get(g, 0) + (x - m)
    G = len(sums)
    var = Fraction(G, G - 1) * sum(s * s for s in sums.values()) / (n * n)
    return float(m), math.sqrt(var)


def ols(xs, **fit):
    y = np.asarray(xs, dtype=float)
    res = sm.OLS(y, np.ones((len(y), 1))).fit(**fit)
    return float(res.params[0]), float(res.bse[0])


mean_se = []


def add_mean_se(name, xs, offset=False):
    xs = [float(x) for x in xs]
    if len(xs) == 0:
        mean_se.append({"name": name, "xs": xs, "mean": None, "se": None, "source": "convention: no data"})
        return
    if len(xs) == 1:
        mean_se.append({"name": name, "xs": xs, "mean": xs[0], "se": None, "source": "convention: one value"})
        return
    em, ese = exact_mean_se(xs)
    assert abs(statistics.stdev(xs) / math.sqrt(len(xs)) - ese) <= 1e-12 * ese + 1e-300
    if offset:
        mean_se.append({"name": name, "xs": xs, "mean": em, "se": ese, "source": "exact rational arithmetic"})
        return
    m, se = ols(xs)
    assert abs(float(scipy.stats.sem(xs)) - se) <= 1e-12 * se + 1e-15, name
    assert abs(se - ese) <= 1e-10 * ese + 1e-15, name
    mean_se.append({"name": name, "xs": xs, "mean": m, "se": se, "source": "statsmodels OLS nonrobust"})


add_mean_se("empty", [])
add_mean_se("one value", [0.7])
add_mean_se("two values", [0.0, 1.0])
add_mean_se("pass/fail", [1, 0, 1, 1, 0, 1, 1, 1])
add_mean_se("constant", [3, 3, 3, 3])
add_mean_se("uniform 50", rng.uniform(0, 1, 50))
add_mean_se("bernoulli 200", (rng.uniform(0, 1, 200) < 0.3).astype(float))
add_mean_se("normal 1000", rng.normal(5, 2, 1000))
add_mean_se("offset 1e9", 1e9 + rng.uniform(0, 1, 100), offset=True)

clustered = []


def add_clustered(name, xs, labels, offset=False):
    # "" means the case has no cluster: it is its own cluster.
    xs = [float(x) for x in xs]
    codes, seen = [], {}
    for i, lab in enumerate(labels):
        key = ("solo", i) if lab == "" else ("tag", lab)
        codes.append(seen.setdefault(key, len(seen)))
    em, ese = exact_cluster_se(xs, codes)
    if offset:
        clustered.append({"name": name, "xs": xs, "clusters": labels, "mean": em, "se": ese,
                          "source": "exact rational arithmetic, CR1"})
        return
    m, se = ols(xs, cov_type="cluster", cov_kwds={"groups": np.asarray(codes)})
    assert abs(se - ese) <= 1e-10 * ese, name
    clustered.append({"name": name, "xs": xs, "clusters": labels, "mean": m, "se": se,
                      "source": "statsmodels OLS cov_type=cluster"})


add_clustered("4 clusters of 3",
              [1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1],
              ["a", "a", "a", "b", "b", "b", "c", "c", "c", "d", "d", "d"])
add_clustered("interleaved labels",
              [0.2, 0.9, 0.4, 0.8, 0.1, 0.7, 0.3],
              ["x", "y", "x", "y", "z", "y", "z"])
add_clustered("two clusters", [1, 0, 1, 1, 0], ["p", "p", "q", "q", "q"])


def grouped(n_clusters, max_size, effect, binary):
    xs, labels = [], []
    for c in range(n_clusters):
        size = int(rng.integers(1, max_size + 1))
        shift = rng.normal(0, effect)
        for _ in range(size):
            v = 0.6 + shift + rng.normal(0, 0.2)
            xs.append(float(rng.uniform() < min(max(v, 0), 1)) if binary else v)
            labels.append("passage-%d" % c)
    return xs, labels


xs, labels = grouped(60, 8, 0.25, True)
add_clustered("pass/fail, 60 passages", xs, labels)
xs, labels = grouped(150, 25, 0.5, False)
add_clustered("continuous, 150 unbalanced clusters", xs, labels)
xs = list(rng.normal(0, 1, 200))
add_clustered("untagged (all singletons)", xs, [""] * 200)
xs, labels = grouped(30, 5, 0.3, True)
labels = ["" if i % 4 == 0 else lab for i, lab in enumerate(labels)]
add_clustered("some untagged", xs, labels)
xs, labels = grouped(40, 6, 0.3, False)
add_clustered("offset 1e9", [1e9 + x for x in xs], labels, offset=True)

epochs = []


def add_epochs(name, scores):
    scores = [[float(x) for x in s] for s in scores]
    means = [num(np.mean(s)) if len(s) else None for s in scores]
    multi = [np.var(s, ddof=1) for s in scores if len(s) >= 2]
    within = num(np.mean(multi)) if multi else None
    epochs.append({"name": name, "scores": scores, "case_means": means, "within_var": within,
                   "source": "numpy mean, var(ddof=1)"})


add_epochs("pass/fail, 3 epochs", (rng.uniform(0, 1, (40, 3)) < 0.6).astype(float).tolist())
add_epochs("continuous, 5 epochs", rng.beta(2, 3, (25, 5)).tolist())
add_epochs("ragged with single and empty cases", [[1, 0, 1], [0.5], [], [0.2, 0.4], [1, 1, 1, 1]])
add_epochs("one epoch each", [[1], [0], [1]])

print(json.dumps({"mean_se": mean_se, "clustered": clustered, "epochs": epochs}))
