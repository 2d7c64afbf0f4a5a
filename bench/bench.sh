#!/usr/bin/env bash
# Benchmarks of the run engine through the real binary. Prints figures for
# bench/RESULTS.md. Needs GNU time (/usr/bin/time; Debian package "time").
#
#   bash bench/bench.sh            # both benchmarks
#   bash bench/bench.sh mock       # 2 targets × 2,000 cases against assay mock
#   bash bench/bench.sh replay     # replay 5,000 vs 50,000 cases
#   bash bench/bench.sh report     # the report on 1,000,000 stored results
#   bash bench/bench.sh stats      # bootstrap resampling of 100,000 cases
#   bash bench/bench.sh gate       # baseline export, gate, diff, drift: 10,000 and 100,000 cases × 2 targets
#                                  # (GATE_SHAPES="250000x4" for a million results)
#   bash bench/bench.sh selftest   # assay selftest on the recorded GSM8K spec (needs ../shared/data)
#   bash bench/bench.sh health     # assay validate --deep on 50,000 cases (HEALTH_CASES=N for N)
#   bash bench/bench.sh gobench    # the Go benchmarks of gate, selftest, dataset, analysis, probe
#   bash bench/bench.sh agent      # 1,000 cases × a 3-turn agent loop against assay mock (mock and exec handlers)
#   bash bench/bench.sh serve      # assay serve's pages on two runs of 1,000,000 results: first byte and total
#
# "all" runs mock, replay, report and stats; the last four are run by name.
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/out
mkdir -p "$out"
# ASSAY_BIN measures another build (say the previous commit's) by the same
# recipe, so two binaries can be compared in one session.
if [[ -n ${ASSAY_BIN:-} ]]; then
  A=$ASSAY_BIN
else
  CGO_ENABLED=0 go build -o "$out/assay" ./cmd/assay
  A="$out/assay"
fi
which=${1:-all}

measure() { # label, command...
  measure_rc 0 "$@"
}

measure_rc() { # expected exit code, label, command...
  local want=$1 label=$2 rc=0; shift 2
  /usr/bin/time -f '%e %U %S %M' -o "$out/time.txt" "$@" >"$out/stdout.txt" 2>"$out/stderr.txt" || rc=$?
  if [[ $rc != "$want" ]]; then echo "$label: exit $rc, want $want"; cat "$out/stderr.txt"; exit 1; fi
  # GNU time writes "Command exited with non-zero status N" first.
  tail -n1 "$out/time.txt" >"$out/time1.txt" && mv "$out/time1.txt" "$out/time.txt"
  read -r wall user sys rss <"$out/time.txt"
  echo "$label wall=${wall}s user=${user}s sys=${sys}s maxrss=$((rss/1024))MB"
}

if [[ $which == all || $which == mock ]]; then
  n=2000 conc=32 lat_ms=20
  python3 - "$out/mock" "$n" <<'PY'
import json, os, sys
d, n = sys.argv[1], int(sys.argv[2])
os.makedirs(d, exist_ok=True)
with open(f"{d}/cases.jsonl", "w") as f:
    for i in range(1, n + 1):
        f.write(json.dumps({"id": f"c{i}", "say": f"answer {i % 97}", "expected": f"answer {i % 97}"}) + "\n")
PY
  port=$((20000 + RANDOM % 20000))
  "$A" mock --addr 127.0.0.1:$port --latency ${lat_ms}ms >"$out/mock.log" 2>&1 &
  mockpid=$!
  trap 'kill $mockpid 2>/dev/null || true' EXIT
  sleep 0.5
  cat >"$out/mock/assay.yaml" <<YAML
name: bench-mock
dataset: {path: cases.jsonl, id: id, expected: expected}
prompt: {user: "{{.say}}"}
targets:
  - {name: a, provider: openai, model: m1, base_url: http://127.0.0.1:$port/v1, limits: {concurrency: $conc}}
  - {name: b, provider: openai, model: m2, base_url: http://127.0.0.1:$port/v1, limits: {concurrency: $conc}}
scorers:
  - {name: correct, type: equals, normalize: [trim]}
YAML
  rm -f "$out/mock.db"*
  measure "mock 2x$n c=$conc lat=${lat_ms}ms" "$A" run "$out/mock/assay.yaml" --db "$out/mock.db" --no-cache
  read -r wall user sys rss <"$out/time.txt"
  python3 -c "
reqs=2*$n; ideal=reqs*$lat_ms/1000/(2*$conc)
print(f'  requests={reqs} ideal={ideal:.3f}s ratio={$wall/ideal:.2f}x cpu/request={($user+$sys)/reqs*1000:.3f}ms')"
  kill $mockpid; trap - EXIT
fi

if [[ $which == all || $which == replay ]]; then
  for n in 5000 50000; do
    python3 - "$out/replay$n" "$n" <<'PY'
import json, os, sys
d, n = sys.argv[1], int(sys.argv[2])
os.makedirs(d, exist_ok=True)
with open(f"{d}/cases.jsonl", "w") as f, open(f"{d}/recorded.jsonl", "w") as g:
    for i in range(1, n + 1):
        q = f"Question {i}: what is {i} plus {i % 13}? " + "context " * 40
        f.write(json.dumps({"id": f"q{i}", "question": q, "answer": str(i + i % 13)}) + "\n")
        g.write(json.dumps({"question": q, "m": {"output": f"Working... A: {i + i % 13 if i % 5 else i}"}}) + "\n")
PY
    cat >"$out/replay$n/assay.yaml" <<YAML
name: bench-replay
dataset: {path: cases.jsonl, id: id, expected: answer}
prompt: {user: "{{.question}}"}
targets:
  - {name: m, provider: replay, replay: {path: recorded.jsonl, join: question, output: m.output}}
output: {extract: 'A:\s*(.+)$'}
scorers:
  - {name: correct, type: equals, normalize: [trim]}
YAML
    rm -f "$out/replay$n.db"*
    measure "replay n=$n" "$A" run "$out/replay$n/assay.yaml" --db "$out/replay$n.db"
    read -r wall user sys rss <"$out/time.txt"
    python3 -c "print(f'  results/s={$n/$wall:.0f}')"
  done
fi

if [[ $which == all || $which == report ]]; then
  rm -f "$out/big.db"*
  go run ./bench/fill -db "$out/big.db" -cases 250000 -targets 4 >/dev/null
  for f in json html text; do
    measure "report 1,000,000 results format=$f" "$A" report latest --db "$out/big.db" --format "$f"
  done
fi

if [[ $which == all || $which == stats ]]; then
  go test -run='^$' -bench='Bootstrap100k' -benchtime=3x ./internal/stats/ | grep Benchmark
fi

if [[ $which == gate ]]; then
  # A baseline run and a candidate that regressed (5 points lower pass
  # probability, 10% slower), paired case by case (same seed), at each
  # CASESxTARGETS shape of GATE_SHAPES (default 10,000 and 100,000 cases × 2
  # targets; GATE_SHAPES=250000x4 is the report's million results).
  echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
  for shape in ${GATE_SHAPES:-10000x2 100000x2}; do
    n=${shape%x*} k=${shape#*x}
    db="$out/gate$shape.db"
    rm -f "$db"*
    base=$(go run ./bench/fill -db "$db" -cases "$n" -targets "$k")
    cand=$(go run ./bench/fill -db "$db" -cases "$n" -targets "$k" -regress 0.05 -slower 1.1)
    for i in 1 2 3; do
      measure "baseline export $shape" "$A" baseline export "$base" --db "$db" -o "$out/baseline$shape.json"
    done
    echo "  baseline$shape.json: $(stat -c %s "$out/baseline$shape.json") bytes"
    for i in 1 2 3; do
      measure_rc 3 "gate $shape default rule, baseline file" "$A" gate "$cand" --baseline "$out/baseline$shape.json" --db "$db"
    done
    for i in 1 2 3; do
      measure_rc 3 "gate $shape default rule, baseline run" "$A" gate "$cand" --baseline "$base" --db "$db"
    done
    measure_rc 3 "gate $shape default+cost+p95, baseline file" "$A" gate "$cand" --baseline "$out/baseline$shape.json" --db "$db" \
      --rule 'primary max_drop=5%' --rule 'cost_per_case max_rise=10%' --rule 'latency_p95 max_rise=5%'
    measure "diff $shape" "$A" diff "$base" "$cand" --db "$db"
    measure_rc 3 "drift $shape" "$A" drift "$base" "$cand" --db "$db"
    measure "report $shape (for comparison)" "$A" report "$cand" --db "$db" --format json
  done
  echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
fi

if [[ $which == serve ]]; then
  # Two runs of 250,000 cases × 4 targets with their dataset (the second 5
  # points worse, paired case by case), then every page of assay serve
  # through the real binary: runs list, a run's report cold and cached,
  # the two runs compared, the case explorer and a case's page.
  db="$out/serve.db"
  rm -rf "$db"* "$out/serve-data"
  go run ./bench/fill -db "$db" -cases 250000 -targets 4 -dataset "$out/serve-data" >/dev/null
  go run ./bench/fill -db "$db" -cases 250000 -targets 4 -dataset "$out/serve-data" -regress 0.05 >/dev/null
  echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
  go run ./bench/serve -bin "$A" -db "$db"
  echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
fi

if [[ $which == selftest ]]; then
  data=$(cd "${ASSAY_SHARED_DATA:-../shared/data}" && pwd)/gsm8k/example_model_solutions.jsonl
  mkdir -p "$out/selftest"
  cat >"$out/selftest/gsm8k.yaml" <<YAML
name: gsm8k-recorded
dataset: {path: "$data", id: line, expected: ground_truth, expected_extract: 'A:\s*(.+)$'}
prompt: {user: "Q: {{.question}}"}
targets:
  - {name: m, provider: replay, replay: {path: "$data", join: question, output: 175b_verification.solution}}
output: {extract: 'A:\s*(.+)$'}
scorers:
  - {name: correct, type: equals, normalize: [trim, no_commas], primary: true}
YAML
  echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
  for i in 1 2 3; do
    measure "selftest gsm8k 1,319 cases" "$A" selftest "$out/selftest/gsm8k.yaml"
  done
  # The 50,000 synthetic cases of "health" (one equals scorer), when made.
  if [[ -f $out/health/assay.yaml ]]; then
    measure "selftest synthetic 50,000 cases" "$A" selftest "$out/health/assay.yaml"
  fi
fi

if [[ $which == health ]]; then
  # 50,000 (or $HEALTH_CASES) word problems shaped like GSM8K's questions (46 words on average,
  # sd 18, 15 to 164), words from a Zipf law (s = 1.1) over 30,000 words, one
  # in seven a number; 1% near duplicates (1 to 8 words replaced), 0.5%
  # exact ones (case and punctuation changed). The recipe of
  # internal/dataset/bench_test.go.
  hn=${HEALTH_CASES:-50000}
  python3 - "$out/health" "$hn" <<'PY'
import itertools, json, os, random, sys
d, n = sys.argv[1], int(sys.argv[2])
os.makedirs(d, exist_ok=True)
rng = random.Random(7)
syll = "ba ko ri mu te sa lo ven dor pi ka nel tu gra shi mo".split()
def name(i):
    s, x = "", i + 1
    while x > 0:
        s, x = s + syll[x % len(syll)], x // len(syll)
    return s
V = 30000
words = [name(i) for i in range(V)]
cum = list(itertools.accumulate((k + 1) ** -1.1 for k in range(V)))
def draw(k):
    return [str(rng.randrange(1000)) if rng.randrange(7) == 0 else w for w in rng.choices(words, cum_weights=cum, k=k)]
qs = []
for i in range(n):
    r = rng.random()
    if i > 100 and r < 0.01:
        toks = qs[rng.randrange(i)].split()
        for _ in range(1 + rng.randrange(8)):
            toks[rng.randrange(len(toks))] = draw(1)[0]
        qs.append(" ".join(toks))
    elif i > 100 and r < 0.015:
        q = qs[rng.randrange(i)]
        qs.append(q[:1].upper() + q[1:] + "!!")
    else:
        qs.append(" ".join(draw(min(max(round(rng.gauss(46, 18)), 15), 164))) + "?")
buckets = ["common", "edge", "hostile", "should-refuse"]
with open(f"{d}/cases.jsonl", "w") as f:
    for i, q in enumerate(qs):
        f.write(json.dumps({"id": f"q{i+1}", "question": q, "answer": str(i % 500), "bucket": buckets[i % 4], "tier": str(i % 9)}) + "\n")
PY
  cat >"$out/health/assay.yaml" <<'YAML'
name: bench-health
dataset: {path: cases.jsonl, id: id, expected: answer, tags: {bucket: bucket, tier: tier}}
prompt: {user: "Q: {{.question}}"}
targets:
  - {name: m, provider: openai, model: m, base_url: "http://127.0.0.1:9/v1"}
scorers:
  - {name: correct, type: equals, normalize: [trim]}
YAML
  echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
  measure "validate (not deep) $hn" "$A" validate "$out/health/assay.yaml"
  for t in 0.9 0.8; do
    for i in 1 2 3; do
      measure "validate --deep $hn threshold=$t" "$A" validate --deep --dup-threshold "$t" "$out/health/assay.yaml"
    done
    grep -i 'near-duplicate' "$out/stdout.txt" | head -1
  done
fi

if [[ $which == gobench ]]; then
  echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
  go test -p 1 -run='^$' -bench=. -benchtime=3x -timeout=60m ./internal/gate/ ./internal/selftest/ ./internal/dataset/ ./internal/analysis/ ./internal/probe/ | grep -E '^(Benchmark|ok|FAIL|---)'
  echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
fi

if [[ $which == agent ]]; then
  # 1,000 cases, each a 3-turn agent loop (lookup_order, then refund, then
  # the answer) against `assay mock --latency 20ms --tool-turns 2`, 32
  # conversations in flight; the handlers are mock (the loop's own cost)
  # or exec (a shell script per call, isolated like an exec target).
  # Ideal wall = 1,000 × 3 sequential turns × 20 ms ÷ 32 in flight.
  n=${AGENT_CASES:-1000} conc=32 lat_ms=20 turns=3
  mkdir -p "$out/agent"
  python3 - "$out/agent" "$n" <<'PY'
import json, sys
d, n = sys.argv[1], int(sys.argv[2])
with open(f"{d}/cases.jsonl", "w") as f:
    for i in range(1, n + 1):
        f.write(json.dumps({"id": f"c{i}", "ask": f"Refund order {i}", "plan": ["lookup_order", "refund"]}) + "\n")
with open(f"{d}/rules.jsonl", "w") as f:
    f.write(json.dumps({"match": "Refund order", "turn": 1, "tool_calls": [{"name": "lookup_order", "arguments": {"id": 7}}]}) + "\n")
    f.write(json.dumps({"match": "Refund order", "turn": 2, "tool_calls": [{"name": "refund", "arguments": {"id": 7}}]}) + "\n")
PY
  printf 'read -r call\necho "order 7: shipped"\n' >"$out/agent/lookup.sh"
  port=$((20000 + RANDOM % 20000))
  "$A" mock --addr 127.0.0.1:$port --latency ${lat_ms}ms --tool-turns 2 --rules "$out/agent/rules.jsonl" >"$out/agent-mock.log" 2>&1 &
  mockpid=$!
  trap 'kill $mockpid 2>/dev/null || true' EXIT
  sleep 0.5
  echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
  for handlers in mock exec; do
    if [[ $handlers == mock ]]; then
      lookup='{mock: {result: "order 7: shipped"}}'
    else
      lookup='{exec: [sh, lookup.sh]}'
    fi
    cat >"$out/agent/assay.yaml" <<YAML
name: bench-agent
dataset: {path: cases.jsonl, id: id, expected: plan}
prompt: {user: "{{.ask}}"}
tools:
  - {name: lookup_order, parameters: {type: object, properties: {id: {type: integer}}, required: [id]}}
  - {name: refund, parameters: {type: object, properties: {id: {type: integer}}, required: [id]}}
agent:
  max_turns: 5
  tools:
    lookup_order: $lookup
    refund: {mock: {result: refunded}}
targets:
  - {name: a, provider: openai, model: m1, base_url: http://127.0.0.1:$port/v1, limits: {concurrency: $conc}}
scorers:
  - {name: calls, type: tool_calls, match: exact}
  - {name: turns, type: cel, expr: 'size(trajectory) == 3'}
YAML
    for i in 1 2 3; do
      rm -f "$out/agent.db"*
      measure "agent $n cases x $turns turns, $handlers handlers, c=$conc lat=${lat_ms}ms" "$A" run "$out/agent/assay.yaml" --db "$out/agent.db" --no-cache
      read -r wall user sys rss <"$out/time.txt"
      python3 -c "
calls=$n*$turns; ideal=calls*$lat_ms/1000/$conc
print(f'  model calls={calls} ideal={ideal:.3f}s ratio={$wall/ideal:.2f}x cpu/model call={($user+$sys)/calls*1000:.3f}ms')"
      grep -E 'pass|calls|turns' "$out/stdout.txt" | head -3 || true
    done
  done
  kill $mockpid; trap - EXIT
  echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
