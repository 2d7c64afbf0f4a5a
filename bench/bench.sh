#!/usr/bin/env bash
# Benchmarks of the run engine through the real binary. Prints figures for
# bench/RESULTS.md. Needs GNU time (/usr/bin/time; Debian package "time").
#
#   bash bench/bench.sh            # both benchmarks
#   bash bench/bench.sh mock       # 2 targets × 2,000 cases against assay mock
#   bash bench/bench.sh replay     # replay 5,000 vs 50,000 cases
#   bash bench/bench.sh report     # the report on 1,000,000 stored results
#   bash bench/bench.sh stats      # bootstrap resampling of 100,000 cases
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/out
mkdir -p "$out"
CGO_ENABLED=0 go build -o "$out/assay" ./cmd/assay
A="$out/assay"
which=${1:-all}

measure() { # label, command...
  local label=$1; shift
  /usr/bin/time -f '%e %U %S %M' -o "$out/time.txt" "$@" >"$out/stdout.txt" 2>"$out/stderr.txt" || { cat "$out/stderr.txt"; exit 1; }
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
