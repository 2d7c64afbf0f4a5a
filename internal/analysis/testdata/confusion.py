#!/usr/bin/python3
# Reference values for the confusion matrix that analysis builds from a
# store (confusion_test.go), computed here by hand-written arithmetic in the
# way sklearn.metrics.precision_recall_fscore_support(y_true, y_pred,
# labels=LABELS, zero_division=0) defines them (sklearn is not installed:
# precision = TP/predicted, recall = TP/support, F1 = 2PR/(P+R), macro-F1
# the unweighted mean over LABELS; the "(other)" and "(none)" columns are
# predictions but not labels), with Wilson intervals from statsmodels
# proportion_confint(method="wilson") and, per class and pair of targets,
# the McNemar score test (statsmodels mcnemar(exact=False,
# correction=False)) on the class's cases, Holm-adjusted over the classes
# (multipletests(method="holm")).
#
# Each target's matrix has a row per expected label and a column per
# predicted label, then (other) and (none). Within a row, the cases are
# numbered in order and each target's predictions are laid out column by
# column (the first m[r][0] cases predicted column 0, and so on): the Go
# test builds its store with the same rule, so the pairs below are its.
#
# Regenerate (from the module root):
#   /usr/bin/python3 internal/analysis/testdata/confusion.py > internal/analysis/testdata/confusion.json
import json

from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

LABELS = ["billing", "technical", "<img src=x onerror=alert(1)>|@team"]
MATRICES = {
    "a": [[30, 5, 2, 2, 1],
          [4, 25, 1, 0, 0],
          [1, 2, 17, 0, 0]],
    "b": [[35, 3, 0, 1, 1],
          [6, 20, 2, 1, 1],
          [0, 0, 20, 0, 0]],
}
ALPHA = 0.05


def expand(row):
    out = []
    for col, n in enumerate(row):
        out += [col] * n
    return out


out = {"labels": LABELS, "alpha": ALPHA, "targets": {}, "comparisons": []}
K = len(LABELS)
for name, m in MATRICES.items():
    classes = []
    f1s = []
    for i, label in enumerate(LABELS):
        tp = m[i][i]
        support = sum(m[i])
        predicted = sum(m[r][i] for r in range(K))
        precision = tp / predicted if predicted else 0.0
        recall = tp / support if support else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        f1s.append(f1)
        plo, phi = proportion_confint(tp, predicted, alpha=ALPHA, method="wilson")
        rlo, rhi = proportion_confint(tp, support, alpha=ALPHA, method="wilson")
        classes.append({"label": label, "tp": tp, "support": support, "predicted": predicted,
                        "precision": precision, "recall": recall, "f1": f1,
                        "precision_ci": [plo, phi], "recall_ci": [rlo, rhi]})
    out["targets"][name] = {"matrix": m, "classes": classes, "macro_f1": sum(f1s) / K}

ps, rows = [], []
for i, label in enumerate(LABELS):
    pa, pb = expand(MATRICES["a"][i]), expand(MATRICES["b"][i])
    both = sum(1 for x, y in zip(pa, pb) if x == i and y == i)
    a_only = sum(1 for x, y in zip(pa, pb) if x == i and y != i)
    b_only = sum(1 for x, y in zip(pa, pb) if x != i and y == i)
    neither = len(pa) - both - a_only - b_only
    if a_only + b_only:
        p = mcnemar([[both, a_only], [b_only, neither]], exact=False, correction=False).pvalue
    else:
        p = 1.0
    ps.append(p)
    rows.append({"a": "a", "b": "b", "label": label, "n": len(pa), "a_only": a_only, "b_only": b_only,
                 "recall_a": (both + a_only) / len(pa), "recall_b": (both + b_only) / len(pa), "p_value": p})
adj = multipletests(ps, method="holm")[1]
for r, q in zip(rows, adj):
    r["p_adjusted"] = q
out["comparisons"] = rows
print(json.dumps(out, indent=1))
