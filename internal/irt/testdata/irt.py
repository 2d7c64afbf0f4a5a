#!/usr/bin/python3
"""Independent reference for internal/irt: marginal maximum likelihood of the
Rasch and 2PL models maximised directly (scipy.optimize, no EM), abilities'
posterior moments by adaptive numerical integration (scipy.integrate.quad),
standard errors from a finite-difference Hessian of the marginal
log-likelihood. Writes irt_golden.json beside this file.

Run: /usr/bin/python3 internal/irt/testdata/irt.py
"""
import json
import os

import numpy as np
from numpy.polynomial.hermite_e import hermegauss
from scipy import integrate, optimize, stats

HERE = os.path.dirname(os.path.abspath(__file__))
LSAT = os.path.join(HERE, "..", "..", "..", "..", "shared", "data", "lsat", "lsat.dat")


def nodes(k):
    # probabilists' Gauss-Hermite: weight exp(-x^2/2); normalised to N(0,1)
    x, w = hermegauss(k)
    return x, w / np.sqrt(2 * np.pi)


def loglik(a, b, right, trials, k):
    """Marginal log-likelihood: right, trials are persons x items arrays."""
    x, w = nodes(k)
    eta = a[None, :] * (x[:, None] - b[None, :])  # nodes x items
    lp = -np.logaddexp(0, -eta)
    lq = -np.logaddexp(0, eta)
    # persons x nodes
    ll = right @ lp.T + (trials - right) @ lq.T
    return float(np.sum(np.logaddexp.reduce(ll + np.log(w)[None, :], axis=1)))


def unpack(theta, model, n_items, fixed_a):
    if model == "2pl":
        la, b = theta[:n_items], theta[n_items:]
        return np.exp(la), b, la
    if fixed_a:
        return np.full(n_items, fixed_a), theta, None
    return np.full(n_items, np.exp(theta[0])), theta[1:], np.array([theta[0]])


def fit(right, trials, model, k=21, prior_sd=0.0, fixed_a=0.0):
    n_items = right.shape[1]
    p = (right.sum(0) + 0.5) / (trials.sum(0) + 1)
    b0 = np.log((1 - p) / p)
    if model == "2pl":
        start = np.concatenate([np.zeros(n_items), b0])
    elif fixed_a:
        start = b0
    else:
        start = np.concatenate([[0.0], b0])

    def neg(theta):
        a, b, la = unpack(theta, model, n_items, fixed_a)
        v = loglik(a, b, right, trials, k)
        if prior_sd > 0:
            v += -np.sum(b ** 2) / (2 * prior_sd ** 2)
            if la is not None:
                v += -np.sum(la ** 2) / (2 * (prior_sd / 4) ** 2)
        return -v

    res = optimize.minimize(neg, start, method="BFGS", options={"gtol": 1e-9, "maxiter": 10000})
    res = optimize.minimize(neg, res.x, method="Nelder-Mead",
                            options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 200000, "maxfev": 200000})
    res = optimize.minimize(neg, res.x, method="BFGS", options={"gtol": 1e-10, "maxiter": 10000})
    th = res.x
    # Hessian by central differences of neg
    n = len(th)
    h = 1e-4
    H = np.zeros((n, n))
    for i in range(n):
        for j in range(i, n):
            ei = np.zeros(n); ei[i] = h
            ej = np.zeros(n); ej[j] = h
            v = (neg(th + ei + ej) - neg(th + ei - ej) - neg(th - ei + ej) + neg(th - ei - ej)) / (4 * h * h)
            H[i, j] = H[j, i] = v
    cov = np.linalg.inv(H)
    a, b, la = unpack(th, model, n_items, fixed_a)
    se_b = np.sqrt(np.diag(cov))[-n_items:]
    if model == "2pl":
        se_a = a * np.sqrt(np.diag(cov))[:n_items]
    elif fixed_a:
        se_a = np.zeros(n_items)
    else:
        se_a = np.full(n_items, a[0] * np.sqrt(cov[0, 0]))
    ll = loglik(a, b, right, trials, k)
    return {"a": a.tolist(), "b": b.tolist(), "se_a": se_a.tolist(), "se_b": se_b.tolist(), "loglik": ll}


def ability(a, b, right, trials, level=0.95):
    """EAP, posterior SD and equal-tailed interval under N(0,1)."""
    def logpost(t):
        eta = a * (t - b)
        return stats.norm.logpdf(t) + np.sum(right * -np.logaddexp(0, -eta) + (trials - right) * -np.logaddexp(0, eta))
    m = optimize.minimize_scalar(lambda t: -logpost(t), bounds=(-10, 10), method="bounded").x
    c = logpost(m)
    dens = lambda t: np.exp(logpost(t) - c)
    z = integrate.quad(dens, -np.inf, np.inf, epsabs=0, epsrel=1e-12, limit=200)[0]
    mean = integrate.quad(lambda t: t * dens(t), -np.inf, np.inf, epsabs=1e-14, epsrel=1e-12, limit=200)[0] / z
    m2 = integrate.quad(lambda t: t * t * dens(t), -np.inf, np.inf, epsabs=1e-14, epsrel=1e-12, limit=200)[0] / z
    cdf = lambda x: integrate.quad(dens, -np.inf, x, epsabs=0, epsrel=1e-12, limit=200)[0] / z
    tail = (1 - level) / 2
    lo = optimize.brentq(lambda x: cdf(x) - tail, -12, 12, xtol=1e-12)
    hi = optimize.brentq(lambda x: cdf(x) - (1 - tail), -12, 12, xtol=1e-12)
    return {"theta": mean, "sd": float(np.sqrt(m2 - mean * mean)), "lo": lo, "hi": hi}


def small_data():
    """A small, fixed table of 3 epochs per cell, as 0/1 responses with
    missing epochs (NaN): some cells missing entirely, some with one epoch."""
    rng = np.random.default_rng(17)
    n_p, n_i, n_e = 60, 6, 3
    theta = rng.standard_normal(n_p)
    a = np.array([0.6, 0.9, 1.2, 1.5, 0.8, 1.1])
    b = np.array([-1.5, -0.7, 0.0, 0.4, 1.0, 1.6])
    pr = 1 / (1 + np.exp(-a[None, :] * (theta[:, None] - b[None, :])))
    y = (rng.random((n_p, n_i, n_e)) < pr[:, :, None]).astype(float)
    y[rng.random((n_p, n_i)) < 0.2, 1:] = np.nan  # one epoch only
    y[rng.random((n_p, n_i)) < 0.15, :] = np.nan  # missing
    return y


def expanded_loglik(a, b, y, k):
    """The marginal log-likelihood of 0/1 responses, every epoch its own
    Bernoulli term given the ability (no counts anywhere)."""
    x, w = nodes(k)
    n_p, n_i, n_e = y.shape
    total = 0.0
    for p in range(n_p):
        lv = np.log(w).copy()
        for i in range(n_i):
            for e in range(n_e):
                v = y[p, i, e]
                if np.isnan(v):
                    continue
                eta = a[i] * (x - b[i])
                lv += -np.logaddexp(0, -eta) if v == 1 else -np.logaddexp(0, eta)
        total += np.logaddexp.reduce(lv)
    return total


def main():
    rows = np.loadtxt(LSAT, dtype=int)
    right = rows.astype(float)
    trials = np.ones_like(right)
    out = {"lsat": {}}
    for name, kw in [("2pl", dict(model="2pl", k=21)),
                     ("rasch", dict(model="rasch", k=21)),
                     ("rasch_a1", dict(model="rasch", k=21, fixed_a=1.0)),
                     ("2pl_prior", dict(model="2pl", k=21, prior_sd=2.0))]:
        out["lsat"][name] = fit(right, trials, **kw)
    f = out["lsat"]["2pl"]
    a, b = np.array(f["a"]), np.array(f["b"])
    out["lsat_abilities_2pl"] = [dict(pattern=pat, **ability(a, b, np.array(pat, float), np.ones(5)))
                                 for pat in ([0, 0, 0, 0, 0], [1, 0, 1, 0, 1], [1, 1, 1, 1, 1])]
    y = small_data()
    r, t = np.nansum(y, axis=2), np.sum(~np.isnan(y), axis=2).astype(float)
    small = {"epochs": [[[None if np.isnan(v) else int(v) for v in cell] for cell in row] for row in y]}
    for name, kw in [("2pl_prior", dict(model="2pl", k=21, prior_sd=2.0)), ("rasch", dict(model="rasch", k=21))]:
        f = fit(r, t, **kw)
        # The counts' likelihood is the expanded 0/1 one: checked here.
        ll = expanded_loglik(np.array(f["a"]), np.array(f["b"]), y, 21)
        assert abs(ll - f["loglik"]) < 1e-9, (ll, f["loglik"])
        small[name] = f
    out["small"] = small
    with open(os.path.join(HERE, "irt_golden.json"), "w") as fh:
        json.dump(out, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
