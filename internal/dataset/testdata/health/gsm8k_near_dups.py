#!/usr/bin/python3
"""Reference near-duplicate figures for the GSM8K test set.

Compares every pair of the 1,319 questions (868,821 pairs) by the Jaccard
similarity of their token sets, after the normalisation documented for
dataset.NormalizeText (NFKC, lower case, punctuation removed except between
two digits, control characters and white space runs made one space). Run
from the module root:

    /usr/bin/python3 internal/dataset/testdata/health/gsm8k_near_dups.py \
        ../shared/data/gsm8k/test.jsonl > internal/dataset/testdata/health/gsm8k_near_dups.json
"""
import json
import sys
import unicodedata


def normalize(s):
    s = unicodedata.normalize("NFKC", s).lower()
    out, space = [], False
    for i, c in enumerate(s):
        cat = unicodedata.category(c)
        if c.isspace() or cat == "Cc":
            space = len(out) > 0
            continue
        if cat.startswith("P") and not (0 < i < len(s) - 1 and s[i - 1].isdigit() and s[i + 1].isdigit()):
            continue
        if space:
            out.append(" ")
            space = False
        out.append(c)
    return "".join(out)


def main(path):
    rows = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    sets = [frozenset(normalize(r["question"]).split()) for r in rows]
    pairs = []
    for i in range(len(sets)):
        a = sets[i]
        for j in range(i + 1, len(sets)):
            b = sets[j]
            inter = len(a & b)
            if inter == 0:
                continue
            jac = inter / (len(a) + len(b) - inter)
            if jac >= 0.5 - 1e-9:
                pairs.append((jac, i + 1, j + 1))
    pairs.sort(key=lambda p: (-p[0], p[1], p[2]))
    out = {
        "source": "GSM8K test.jsonl, field question; lines are 1-based",
        "pairs_at_threshold": {str(t): sum(1 for p in pairs if p[0] >= t - 1e-9) for t in (0.9, 0.8, 0.7, 0.6, 0.5)},
        "pairs_at_0.5": [{"a": a, "b": b, "similarity": round(j, 4)} for j, a, b in pairs],
    }
    json.dump(out, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
