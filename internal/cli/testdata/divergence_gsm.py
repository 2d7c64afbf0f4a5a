#!/usr/bin/python3
"""Reference values for divergence_test.go: the GSM8K replay run's cases
(example_model_solutions.jsonl, 1,319 problems) as the benchmark against
the 50 public GSM1K problems as the workload.

Run: /usr/bin/python3 divergence_gsm.py ../../../../shared/data > divergence_gsm.json

Per GSM8K problem its question and its tier (the number of "<<" in its
ground truth, as the replay spec's tag counts); the KS statistic of the
question lengths (characters) by scipy.stats.ks_2samp, the medians by
numpy, and the Jensen-Shannon divergence (scipy, base 2, squared) and the
unseen share on lower-cased runs of letters and digits after GSM8K is
thinned to 50 problems (the i-th kept is problem i*1319//50), as
internal/difficulty/rubric.go documents.
"""
import collections
import csv
import json
import os
import re
import sys

import numpy as np
from scipy.spatial.distance import jensenshannon
from scipy.stats import ks_2samp

data = sys.argv[1]
g8 = [json.loads(l) for l in open(os.path.join(data, "gsm8k", "example_model_solutions.jsonl"), encoding="utf-8")]
bench = [r["question"] for r in g8]
tiers = collections.Counter(str(r["ground_truth"].count("<<")) for r in g8)
with open(os.path.join(data, "gsm1k", "gsm1k_public_50.csv"), newline="", encoding="utf-8") as f:
    work = [r["question"] for r in csv.DictReader(f)]


def words(texts):
    return [w for t in texts for w in re.findall(r"[^\W_]+", t.lower())]


lb, lw = [len(t) for t in bench], [len(t) for t in work]
k = len(work)
thinned = [bench[i * len(bench) // k] for i in range(k)]
cb, cw = collections.Counter(words(thinned)), collections.Counter(words(work))
keys = sorted(set(cb) | set(cw))
p = np.array([cb[x] for x in keys], float)
q = np.array([cw[x] for x in keys], float)
print(json.dumps({
    "bench_cases": len(bench),
    "work_cases": len(work),
    "tiers": dict(sorted(tiers.items())),
    "ks": float(ks_2samp(lb, lw).statistic),
    "median_bench": float(np.median(lb)),
    "median_work": float(np.median(lw)),
    "js": float(jensenshannon(p / p.sum(), q / q.sum(), base=2) ** 2),
    "unseen": sum(c for w, c in cw.items() if w not in cb) / sum(cw.values()),
}, indent=1))
