#!/usr/bin/python3
# Golden vectors for the McNemar score test with Tango's score interval,
# the cluster-robust paired comparison and clustered mean, the epoch-rate
# interval and the gate's non-inferiority power (tango.go, clustered.go,
# power.go), computed by implementations independent of ours: statsmodels
# 0.13.5 and scipy 1.10.1 (Debian python3-statsmodels / python3-scipy).
#
# Regenerate (from the module root):
#   /usr/bin/python3 internal/stats/testdata/tango.py > internal/stats/testdata/tango.json
#
# Sources, per block:
#   tango      Tango (1998, Stat Med 17:891) score statistic for H0: delta = d0
#              with the restricted MLE of the B-only probability found by
#              maximising the constrained multinomial likelihood numerically
#              (scipy.optimize.minimize_scalar, bounded), NOT by the closed-form
#              root the Go code uses; the interval bounds are scipy brentq roots
#              of T(d0) = +-z on each side of the estimate. The two-sided score
#              p-value is statsmodels mcnemar(exact=False, correction=False).
#              Checked below against the published Cavo et al. (2012) example
#              (Fagerland, Lydersen & Laake 2017, ch. 8: -0.1240 to -0.0054)
#              before anything is written.
#   cluster    per-case differences regressed on a constant:
#              statsmodels OLS(d, ones).fit(cov_type="cluster",
#              cov_kwds={"groups": g}, use_t=True): params, bse (CR1), the t
#              interval and two-sided p on G-1 df; one-sided p-values at d0 from
#              scipy's t on (estimate - d0)/bse. statsmodels' small-sample
#              factor is G/(G-1) * (N-1)/(N-K); with K = 1 regressor the second
#              factor is exactly 1, so it is the CR1 G/(G-1) of clustered.go
#              (asserted below against a sandwich computed by hand).
#   cmean      ClusteredMeanCI: the same OLS fit on the values; for values in
#              [0, 1] Wilson's score formula written out here with the t(G-1)
#              quantile and n_eff = mean(1-mean)/bse^2 (capped at n for 0/1
#              values; G when bse = 0).
#   epoch      EpochRateCI: deff = K*var(case means, ddof=1)/(p(1-p)) clipped to
#              [1, K] (K when p is 0 or 1), n_eff = n*K/deff, and Wilson's
#              formula on (p, n_eff) with the t(n-1) quantile (z for one epoch);
#              the formula is first checked against statsmodels
#              proportion_confint(p*n_eff, n_eff, method="wilson") at z.
#   scorepower the exact power of the two-sided McNemar score test: the
#              trinomial enumerated (discordant m ~ Binomial(n, psi), A-only
#              b | m ~ Binomial(m, (psi + delta)/(2 psi)), reject when
#              |2b - m| > z sqrt(m)) with scipy's binomial pmf, at Connor's n
#              and at other n; the Go code's normal approximation is held to
#              it within a tolerance, and the exact power at the sample size
#              it returns must reach the target.
#   niexact    the exact rejection probability of the gate's one-sided fail
#              decision (Tango's T at d0 = -L below -z_{1-alpha}) by the same
#              enumeration over (b, c), with T from the closed-form restricted
#              MLE (checked above against the numerical one).
#   nipower    NonInferiorityPower: Phi((sqrt(n)(-L - delta) - z_{1-a} sqrt(v0))
#              / sqrt(psi - delta^2)), v0 = 2 q + d0(1-d0) with q the restricted
#              MLE at the true cell probabilities (numerical maximisation again).
import json
import math
import sys

import numpy as np
from scipy import optimize, stats
import statsmodels.api as sm
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint


def restricted_q(b, c, n, d0):
    """MLE of p21 (B only) under p12 - p21 = d0, by numerical maximisation of
    b log(q + d0) + c log q + (n - b - c) log(1 - 2q - d0)."""
    lo = max(0.0, -d0)
    hi = (1.0 - d0) / 2.0
    if hi <= lo:
        return lo
    m = n - b - c

    def negll(q):
        s = 0.0
        for cnt, pr in ((b, q + d0), (c, q), (m, 1.0 - 2.0 * q - d0)):
            if cnt > 0:
                if pr <= 0:
                    return 1e300
                s -= cnt * math.log(pr)
        return s

    eps = 1e-15
    r = optimize.minimize_scalar(negll, bounds=(lo + eps, hi - eps), method="bounded",
                                 options={"xatol": 1e-14, "maxiter": 2000})
    # The likelihood may be maximised at a boundary (a zero count).
    best = min((negll(x), x) for x in (r.x, lo + eps, hi - eps))
    return best[1]


def tango_z(b, c, n, d0):
    num = b - c - n * d0
    if num == 0:
        return 0.0
    q = restricted_q(b, c, n, d0)
    v = n * (2 * q + d0 * (1 - d0))
    if v <= 0:
        return math.copysign(math.inf, num)
    return num / math.sqrt(v)


def tango_ci(b, c, n, alpha):
    z = stats.norm.ppf(1 - alpha / 2)
    est = (b - c) / n
    eps = 1e-12
    lo = -1.0 if c == n else optimize.brentq(lambda d: tango_z(b, c, n, d) - z, -1 + eps, est, xtol=1e-13)
    hi = 1.0 if b == n else optimize.brentq(lambda d: tango_z(b, c, n, d) + z, est, 1 - eps, xtol=1e-13)
    return lo, hi


def score_p(b, c):
    if b + c == 0:
        return 1.0
    r = mcnemar(np.array([[0, b], [c, 0]]), exact=False, correction=False)
    return float(r.pvalue)


# Published check (Cavo et al. 2012; n12 = 6 A only, n21 = 16 B only).
lo, hi = tango_ci(6, 16, 161, 0.05)
assert (round(lo, 4), round(hi, 4)) == (-0.1240, -0.0054), (lo, hi)
assert abs(score_p(6, 16) - 0.033006) < 5e-7

tables = [
    # both, a_only, b_only, neither
    (59, 6, 16, 80),
    (1, 1, 7, 12),
    (10, 7, 2, 30),
    (0, 1, 9, 0),
    (0, 3, 4, 0),
    (12, 0, 0, 8),
    (0, 0, 0, 1),
    (0, 1, 0, 0),
    (5, 12, 0, 3),
    (5, 0, 12, 3),
    (0, 12, 0, 0),
    (0, 0, 5, 0),
    (500, 40, 41, 419),
    (4000, 130, 90, 5780),
    (30, 20, 20, 30),
]
tango = []
for both, b, c, neither in tables:
    n = both + b + c + neither
    for alpha in (0.05, 0.1, 0.01):
        lo, hi = tango_ci(b, c, n, alpha)
        d0s = [-0.5, -0.04, 0.0, 0.03, 0.2]
        tango.append({
            "table": [both, b, c, neither], "alpha": alpha,
            "ci": [lo, hi], "p": score_p(b, c),
            "d0": d0s, "z": [tango_z(b, c, n, d) for d in d0s],
        })

rng = np.random.default_rng(20261203)


def ols_cluster(y, groups, alpha):
    X = np.ones((len(y), 1))
    res = sm.OLS(y, X).fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
    G = len(np.unique(groups))
    # CR1 by hand: G/(G-1) * sum_g (sum_{i in g} e_i)^2 / n^2.
    e = y - y.mean()
    meat = sum(e[groups == g].sum() ** 2 for g in np.unique(groups))
    cr1 = math.sqrt(G / (G - 1) * meat / len(y) ** 2)
    assert abs(cr1 - res.bse[0]) <= 1e-12 * max(1.0, cr1), (cr1, res.bse[0])
    assert res.df_resid_inference == G - 1 if hasattr(res, "df_resid_inference") else True
    ci = res.conf_int(alpha)[0]
    return res, G, ci


cluster = []
for G, m, alpha, het in ((10, 30, 0.05, 0.15), (30, 10, 0.05, 0.1), (5, 4, 0.1, 0.3), (40, 3, 0.05, 0.0), (12, 1, 0.05, 0.2)):
    sizes = rng.integers(max(1, m // 2), m + m // 2 + 1, size=G)
    a, b, groups = [], [], []
    for g in range(G):
        shift = rng.normal(0, het)
        pa = min(0.95, max(0.05, 0.6 + shift))
        pb = min(0.95, max(0.05, 0.6 - shift / 2))
        for _ in range(sizes[g]):
            a.append(float(rng.random() < pa))
            b.append(float(rng.random() < pb))
            groups.append(g)
    a, b, groups = np.array(a), np.array(b), np.array(groups)
    d = a - b
    res, Gn, ci = ols_cluster(d, groups, alpha)
    df = Gn - 1
    est, se = float(res.params[0]), float(res.bse[0])
    t2 = float(res.pvalues[0])
    assert abs(t2 - 2 * stats.t.sf(abs(est / se), df)) < 1e-12
    d0s = [-0.1, -0.02, 0.0, 0.05]
    cluster.append({
        "a": a.tolist(), "b": b.tolist(), "clusters": ["c%d" % g for g in groups],
        "alpha": alpha, "delta": est, "se": se, "df": df, "clusters_n": Gn,
        "ci": [float(ci[0]), float(ci[1])], "p": t2, "d0": d0s,
        "below": [float(stats.t.cdf((est - x) / se, df)) for x in d0s],
        "above": [float(stats.t.sf((est - x) / se, df)) for x in d0s],
    })


def wilson_q(p, neff, q):
    denom = 1 + q * q / neff
    center = (p + q * q / (2 * neff)) / denom
    half = q / denom * math.sqrt(p * (1 - p) / neff + q * q / (4 * neff * neff))
    return [max(0.0, center - half), min(1.0, center + half)]


cmean = []
for kind, G, m in (("binary", 8, 5), ("binary", 25, 4), ("scores", 15, 3), ("latency", 10, 6), ("allpass", 6, 3)):
    xs, groups = [], []
    for g in range(G):
        lat = rng.random()
        for _ in range(m):
            if kind == "binary":
                xs.append(float(rng.random() < lat))
            elif kind == "scores":
                xs.append(float(np.clip(lat + rng.normal(0, 0.1), 0, 1)))
            elif kind == "latency":
                xs.append(float(200 + 900 * lat + rng.normal(0, 50)))
            else:
                xs.append(1.0)
            groups.append(g)
    xs, groups = np.array(xs), np.array(groups)
    alpha = 0.05
    mean = float(xs.mean())
    df = G - 1
    if kind == "allpass":
        se = 0.0
    else:
        res, _, ci = ols_cluster(xs, groups, alpha)
        se = float(res.bse[0])
    q = stats.t.ppf(1 - alpha / 2, df)
    if kind == "latency":
        ci = [float(ci[0]), float(ci[1])]
    else:
        v = mean * (1 - mean)
        neff = float(G)
        if se > 0 and v > 0:
            neff = v / se ** 2
            if kind == "binary":
                neff = min(neff, len(xs))
        ci = wilson_q(mean, neff, q)
    cmean.append({"xs": xs.tolist(), "clusters": ["g%d" % g for g in groups], "alpha": alpha,
                  "mean": mean, "se": se, "df": df, "ci": ci})

epoch = []
for n, K, p in ((30, 3, 0.05), (30, 3, 0.5), (100, 5, 0.9), (12, 4, 0.98), (20, 3, 1.0), (20, 2, 0.0), (50, 1, 0.3)):
    lat = rng.beta(2, 2 * (1 - p) / max(p, 1e-9) * 1.0 + 1e-9, size=n) if 0 < p < 1 else np.full(n, p)
    means = rng.binomial(K, lat) / K
    ph = float(means.mean())
    if 0 < ph < 1 and n > 1:
        deff = min(K, max(1.0, K * float(np.var(means, ddof=1)) / (ph * (1 - ph))))
    else:
        deff = float(K)
    neff = n * K / deff
    for alpha in (0.05, 0.1):
        # The Wilson formula written out, checked against statsmodels at z.
        z = stats.norm.ppf(1 - alpha / 2)
        lo, hi = proportion_confint(ph * neff, neff, alpha=alpha, method="wilson")
        w = wilson_q(ph, neff, z)
        assert abs(w[0] - lo) < 1e-12 and abs(w[1] - hi) < 1e-12, (w, lo, hi)
        q = stats.t.ppf(1 - alpha / 2, n - 1) if K > 1 and n > 1 else z
        epoch.append({"means": means.tolist(), "epochs": K, "alpha": alpha, "ci": wilson_q(ph, neff, q)})

nipower = []
for n, psi, delta, L, alpha in ((400, 0.2, -0.04, 0.04, 0.05), (400, 0.2, -0.08, 0.04, 0.05), (100, 0.3, -0.1, 0.05, 0.0125),
                                (1000, 0.1, -0.05, 0.02, 0.05), (50, 0.5, 0.0, 0.1, 0.05), (200, 0.15, -0.12, 0.06, 0.01)):
    p12, p21 = (psi + delta) / 2, (psi - delta) / 2
    d0 = -L
    # Restricted MLE at the true probabilities: scale the counts up (the
    # likelihood per case is what matters).
    scale = 1e6
    q = restricted_q(p12 * scale, p21 * scale, scale, d0)
    v0 = 2 * q + d0 * (1 - d0)
    z = stats.norm.ppf(1 - alpha)
    pw = stats.norm.cdf((math.sqrt(n) * (d0 - delta) - z * math.sqrt(v0)) / math.sqrt(psi - delta * delta))
    nipower.append({"n": n, "p_disc": psi, "delta": delta, "limit": L, "alpha": alpha, "power": float(pw)})

def score_power_exact(n, psi, delta, alpha):
    z = stats.norm.ppf(1 - alpha / 2)
    pi = (psi + delta) / (2 * psi)
    total = 0.0
    for m in range(1, n + 1):
        w = stats.binom.pmf(m, n, psi)
        if w < 1e-16:
            continue
        bs = np.arange(m + 1)
        rej = np.abs(2 * bs - m) > z * math.sqrt(m)
        total += w * stats.binom.pmf(bs[rej], m, pi).sum()
    return float(total)


def connor_n(psi, d, alpha, power):
    za, zb = stats.norm.ppf(1 - alpha / 2), stats.norm.ppf(power)
    return math.ceil((za * math.sqrt(psi) + zb * math.sqrt(psi - d * d)) ** 2 / d ** 2)


scorepower = []
for psi, d, alpha in ((0.2, 0.1, 0.05), (0.3, 0.1, 0.05), (0.1, 0.05, 0.05), (0.4, 0.1, 0.05 / 6), (0.15, -0.05, 0.05)):
    nc = connor_n(psi, abs(d), alpha, 0.8)
    for n in (nc, nc // 2, 40):
        scorepower.append({"n": n, "p_disc": psi, "delta": d, "alpha": alpha,
                           "power": score_power_exact(n, psi, d, alpha), "connor_n": nc})


def closed_q(b, c, n, d0):
    A = 2.0 * n
    B = -b - c + (2.0 * n - b + c) * d0
    C = -c * d0 * (1 - d0)
    return (math.sqrt(max(0.0, B * B - 4 * A * C)) - B) / (2 * A)


for b, c, n, d0 in ((6, 16, 161, -0.04), (1, 7, 21, 0.2), (40, 41, 1000, -0.3), (0, 0, 10, 0.1)):
    qn = restricted_q(b, c, n, d0)
    assert abs(qn - closed_q(b, c, n, d0)) < 1e-7, (b, c, n, d0, qn, closed_q(b, c, n, d0))


def ni_exact(n, psi, delta, L, alpha):
    z = stats.norm.ppf(1 - alpha)
    p12, p21 = (psi + delta) / 2, (psi - delta) / 2
    d0 = -L
    total = 0.0
    for m in range(0, n + 1):
        w = stats.binom.pmf(m, n, psi)
        if w < 1e-16:
            continue
        for b in range(m + 1):
            c = m - b
            num = b - c - n * d0
            if num >= 0:
                continue
            v = n * (2 * closed_q(b, c, n, d0) + d0 * (1 - d0))
            if num / math.sqrt(v) < -z:
                total += w * stats.binom.pmf(b, m, p12 / psi)
    return float(total)


niexact = []
for n, psi, delta, L, alpha in ((100, 0.2, -0.04, 0.04, 0.05), (100, 0.2, -0.08, 0.04, 0.05), (300, 0.15, -0.05, 0.05, 0.05),
                                (300, 0.15, -0.1, 0.05, 0.05), (60, 0.3, -0.2, 0.1, 0.0125), (200, 0.1, -0.02, 0.02, 0.05)):
    niexact.append({"n": n, "p_disc": psi, "delta": delta, "limit": L, "alpha": alpha,
                    "power": ni_exact(n, psi, delta, L, alpha)})

json.dump({"tango": tango, "cluster": cluster, "cmean": cmean, "epoch": epoch, "nipower": nipower,
           "scorepower": scorepower, "niexact": niexact},
          sys.stdout, indent=1)
sys.stdout.write("\n")
