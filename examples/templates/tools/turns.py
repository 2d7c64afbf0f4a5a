"""Replays a recorded agent conversation, one model turn per call.

assay runs agent.yaml's loop itself: it calls this program (an exec target)
once per turn, with the messages so far, and answers each tool call the
reply makes through the handlers of agent.yaml. Each call replies with the
recorded model's next turn for the case: the turn is the number of
assistant messages already in the request. Usage:

    python3 turns.py conversations.jsonl model_a

To measure a live model instead, make the target `provider: openai` (or
anthropic) with a `model:`; the loop and the handlers stay as they are.
"""
import json
import sys


def main():
    path, model = sys.argv[1], sys.argv[2]
    req = json.load(sys.stdin)
    turns = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            if rec["id"] == req["case_id"]:
                turns = rec[model]
                break
    if turns is None:
        json.dump({"output": "", "error": "no recorded conversation for case %s" % req["case_id"]}, sys.stdout)
        return
    turn = sum(1 for m in req["messages"] if m["role"] == "assistant")
    if turn >= len(turns):
        json.dump({"output": "", "error": "case %s: %s has no turn %d recorded" % (req["case_id"], model, turn + 1)}, sys.stdout)
        return
    json.dump(turns[turn], sys.stdout)


if __name__ == "__main__":
    main()
