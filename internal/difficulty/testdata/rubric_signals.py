#!/usr/bin/python3
"""Reference values for the divergence rubric's signals (rubric_test.go).

Run from this directory: /usr/bin/python3 rubric_signals.py > rubric_signals.json

KS statistics by scipy.stats.ks_2samp, medians by numpy.median, the KS 1%
critical constant by scipy.stats.kstwobign, Jensen-Shannon divergences by
scipy.spatial.distance.jensenshannon (base 2, squared: scipy returns the
distance). Words are lower-cased runs of letters and digits (the regex
[^\\W_]+), as rubric.go tokenises. Total variation is half the L1 distance
of the two shares (by hand). The "rate" case thins the larger side to the
smaller's number of cases (the i-th kept is texts[i*n//k]), as rubric.go
documents, before the vocabulary signals.
"""
import collections
import json
import random
import re

import numpy as np
from scipy.spatial.distance import jensenshannon
from scipy.stats import ks_2samp, kstwobign


def words(texts):
    return [w for t in texts for w in re.findall(r"[^\W_]+", t.lower())]


def vocab(bench, work):
    cb, cw = collections.Counter(words(bench)), collections.Counter(words(work))
    keys = sorted(set(cb) | set(cw))
    p = np.array([cb[k] for k in keys], float)
    q = np.array([cw[k] for k in keys], float)
    js = float(jensenshannon(p / p.sum(), q / q.sum(), base=2) ** 2)
    nw = sum(cw.values())
    unseen = sum(c for w, c in cw.items() if w not in cb) / nw
    return js, unseen


def tv(a, b):
    ca, cb = collections.Counter(a), collections.Counter(b)
    return 0.5 * sum(abs(ca[k] / len(a) - cb[k] / len(b)) for k in set(ca) | set(cb))


def thin(texts, k):
    n = len(texts)
    return texts if n <= k else [texts[i * n // k] for i in range(k)]


out = {"ks_critical_01": float(kstwobign.isf(0.01))}

out["ks"] = []
for a, b in [
    ([1, 2, 3, 4, 5], [3, 4, 5, 6, 7, 8]),
    ([10, 10, 10, 20, 30], [10, 20, 20, 20]),  # ties across and within
    ([5.5, 1.0, 3.25, 9.0, 2.0, 7.5, 4.0], [100, 200]),  # disjoint
    ([1, 2, 3], [1, 2, 3]),  # identical
]:
    out["ks"].append({"a": a, "b": b, "d": float(ks_2samp(a, b).statistic)})

out["median"] = [{"xs": xs, "median": float(np.median(xs))} for xs in ([3, 1, 2], [4, 1, 3, 2], [7.5], [2, 2, 9, 1, 100, 3])]

out["vocab"] = []
for bench, work in [
    (["The cat sat on the mat.", "A cat, a hat!"], ["The dog sat; the DOG ran.", "Don't e-mail snake_case 42 times"]),
    (["Café au lait in Zürich", "naïve café"], ["café zürich naïve", "Straße 12"]),
    (["same words here"], ["same words here"]),
]:
    js, unseen = vocab(bench, work)
    out["vocab"].append({"bench": bench, "work": work, "js": js, "unseen": unseen})

out["tv"] = []
for a, b in [
    (["easy", "easy", "hard", "mid"], ["hard", "hard", "mid"]),
    (["1", "2", "3"], ["4", "5"]),
]:
    out["tv"].append({"a": a, "b": b, "tv": tv(a, b)})

# Two rated comparisons. "far": 24 benchmark cases of arithmetic word
# problems against 30 workload cases, longer, mostly support-ticket words;
# "near": both sides drawn alike.
rng = random.Random(17)
math_words = "Tom has apples and gives 3 of them to Ann. How many apples are left? Each box holds 12 eggs; she buys 4 boxes for the party.".split()
ticket_words = "My invoice was charged twice, please refund the order. The export button fails in Firefox since the update; café login resets.".split()


def draw(vocab_a, vocab_b, share_b, lo, hi, n):
    return [" ".join(rng.choice(vocab_b if rng.random() < share_b else vocab_a) for _ in range(rng.randint(lo, hi))) for _ in range(n)]


cases = {
    "far": (draw(math_words, ticket_words, 0.0, 8, 20, 24), draw(math_words, ticket_words, 0.7, 20, 50, 30)),
    "near": (draw(math_words, ticket_words, 0.2, 10, 30, 40), draw(math_words, ticket_words, 0.2, 10, 30, 25)),
}
out["rate"] = {}
for name, (bench, work) in cases.items():
    lb, lw = [len(t) for t in bench], [len(t) for t in work]
    mb, mw = float(np.median(lb)), float(np.median(lw))
    k = min(len(bench), len(work))
    js, unseen = vocab(thin(bench, k), thin(work, k))
    n, m = len(lb), len(lw)
    out["rate"][name] = {
        "bench": bench,
        "work": work,
        "ks": float(ks_2samp(lb, lw).statistic),
        "ks_threshold": max(0.30, float(kstwobign.isf(0.01)) * ((n + m) / (n * m)) ** 0.5),
        "median_bench": mb,
        "median_work": mw,
        "median_ratio": max(mb, mw, 1) / max(min(mb, mw), 1),
        "js": js,
        "unseen": unseen,
    }
print(json.dumps(out, indent=1, ensure_ascii=False))
