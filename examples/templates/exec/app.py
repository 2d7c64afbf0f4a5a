"""An exec target for assay: one JSON request on stdin, one JSON reply on stdout.

The request carries the case ("case_id", "epoch" from 1, "vars": the case's
fields without the expected answer) and the rendered prompt ("messages").
Replace classify() with a call into your own pipeline.
"""
import json
import sys

RULES = [
    ("refuse", ["admin password", "another customer", "their billing"]),
    ("billing", ["charged", "invoice", "refund", "billed", "pricing", "vat"]),
    ("account", ["log in", "login", "email address", "two-factor", "locked out"]),
    ("bug", ["crash", "does nothing", "error", "broken", "500", "twice"]),
]


def classify(ticket):
    text = ticket.lower()
    for category, words in RULES:
        if any(w in text for w in words):
            return category
    return "feature"


def main():
    req = json.load(sys.stdin)
    ticket = req["vars"].get("ticket", "")
    if not ticket:
        json.dump({"output": "", "error": "case %s has no ticket" % req["case_id"]}, sys.stdout)
        return
    category = classify(ticket)
    # Diagnostics go to stderr; stdout carries nothing but the reply.
    print("case %s epoch %d: %s" % (req["case_id"], req["epoch"], category), file=sys.stderr)
    answer = "Category: " + category
    if category == "refuse":
        answer = "I can't help with that request."
    json.dump({"output": answer,
               "usage": {"input": len(ticket.split()), "output": 2},
               "model": "keyword-rules-v1"}, sys.stdout)


main()
