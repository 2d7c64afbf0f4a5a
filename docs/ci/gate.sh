#!/usr/bin/env bash
# gate.sh: run an assay eval on a change and gate it against a committed
# baseline, the way a CI job does. Plain bash; needs only the assay binary.
#
#   usage: gate.sh SPEC BASELINE [SUMMARY_FILE]
#
#   SPEC          the eval spec (assay.yaml)
#   BASELINE      a baseline file (assay baseline export RUN -o baseline.json)
#                 committed beside the spec, or a run ID in $ASSAY_DB
#   SUMMARY_FILE  where the markdown summary goes (default gate-summary.md)
#
# Environment:
#   ASSAY             the assay binary (default: assay on PATH)
#   ASSAY_DB          the store (default: a fresh one in a temporary directory,
#                     so a clean CI checkout needs no database)
#   ASSAY_GATE_FLAGS  extra flags for assay gate, e.g. "--strict"
#   ASSAY_POST        a command that receives the markdown summary on stdin,
#                     e.g. 'gh pr comment 42 --body-file -' (optional)
#   GITHUB_STEP_SUMMARY  when set (GitHub Actions), the summary is appended to it
#
# Exit status: 0 the change passes; 3 a regression (or an exploitable grader);
# 4 the spec is invalid; anything else an error. The summary is written and
# posted whatever the verdict.
set -uo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
	echo "usage: $0 SPEC BASELINE [SUMMARY_FILE]" >&2
	exit 2
fi
spec=$1
baseline=$2
summary=${3:-gate-summary.md}
assay=${ASSAY:-assay}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -z "${ASSAY_DB:-}" ]; then
	export ASSAY_DB="$work/assay.db"
fi

post() {
	if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
		cat "$summary" >>"$GITHUB_STEP_SUMMARY"
	fi
	if [ -n "${ASSAY_POST:-}" ]; then
		bash -c "$ASSAY_POST" <"$summary" || echo "gate.sh: posting the summary failed" >&2
	fi
}

# 1. The spec and dataset are valid (nothing is called otherwise).
"$assay" validate "$spec" || exit $?

# 2. The grader cannot be passed by a null model (no model is called).
"$assay" selftest "$spec" >"$work/selftest.txt"
status=$?
if [ $status -ne 0 ]; then
	{
		echo "## assay: the grader is exploitable"
		echo
		echo '```'
		cat "$work/selftest.txt"
		echo '```'
	} >"$summary"
	post
	exit $status
fi

# 3. Run the eval; every result is stored as it completes.
"$assay" run "$spec" --json >"$work/run.json" || exit $?
run_id=$(sed -n 's/.*"run_id": *"\([^"]*\)".*/\1/p' "$work/run.json" | head -n 1)
if [ -z "$run_id" ]; then
	echo "gate.sh: no run_id in the output of assay run" >&2
	exit 1
fi

# 4. Gate against the baseline: exit 3 is a regression.
# shellcheck disable=SC2086 # ASSAY_GATE_FLAGS is a list of flags
"$assay" gate "$run_id" --baseline "$baseline" --summary "$summary" ${ASSAY_GATE_FLAGS:-}
status=$?
post
exit $status
