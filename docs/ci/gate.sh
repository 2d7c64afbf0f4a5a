#!/usr/bin/env bash
# gate.sh: run an assay eval on a change and gate it against a committed
# baseline, the way a CI job does. Plain bash; needs only the assay binary.
#
#   usage: gate.sh [--targets LIST] SPEC BASELINE [SUMMARY_FILE]
#
#   --targets LIST  run and gate only these targets (comma-separated names)
#   SPEC            the eval spec (assay.yaml)
#   BASELINE        a baseline file (assay baseline export RUN -o baseline.json)
#                   committed beside the spec, or a run ID in $ASSAY_DB
#   SUMMARY_FILE    where the markdown summary goes (default gate-summary.md)
#
# Environment:
#   ASSAY             the assay binary (default: assay on PATH)
#   ASSAY_DB          the store (default: a fresh one in a temporary directory,
#                     so a clean CI checkout needs no database)
#   ASSAY_RUN_FLAGS   extra flags for assay run, e.g. "--epochs 2"
#   ASSAY_GATE_FLAGS  extra flags for assay gate, e.g. "--strict"
#   ASSAY_REPORT      when set, the run's HTML report is written to this file
#                     (e.g. assay-report.html, to upload as an artifact)
#   ASSAY_POST        a command that receives the markdown summary on stdin,
#                     e.g. 'gh pr comment 42 --body-file -' (optional)
#   GITHUB_STEP_SUMMARY  when set (GitHub Actions), the summary is appended to it
#
# Exit status: 0 the change passes; 3 a regression (or an exploitable grader);
# 4 the spec is invalid; 5 the run is unhealthy (too many provider calls
# failed: no verdict); 2 a usage error; 1 any other error. The summary is
# written and posted whatever happens: on an error it says which step failed,
# with the error's text (HTML-escaped, so nothing in it is rendered).
set -uo pipefail

summary=gate-summary.md
assay=${ASSAY:-assay}
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT

post() {
	if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
		cat "$summary" >>"$GITHUB_STEP_SUMMARY"
	fi
	if [ -n "${ASSAY_POST:-}" ]; then
		bash -c "$ASSAY_POST" <"$summary" || echo "gate.sh: posting the summary failed" >&2
	fi
}

# escape prints its input safe to show in a Markdown <pre> block: control
# characters dropped, & < > and @ (no mentions) as HTML entities, at most
# 60,000 bytes (a pull-request comment holds 65,536 characters).
escape() {
	LC_ALL=C tr -d '\000-\010\013-\037\177' | head -c 60000 |
		sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' -e 's/@/\&#64;/g'
}

# fail STATUS WHAT [LOG]: write and post a summary saying the gate reached
# no verdict because WHAT, with LOG's text, and exit with STATUS.
fail() {
	{
		echo "## assay gate: error (exit $1)"
		echo
		printf '**No verdict:** %s\n' "$(printf '%s' "$2" | escape)"
		if [ -n "${3:-}" ] && [ -s "$3" ]; then
			echo
			echo "<pre>"
			escape <"$3"
			echo
			echo "</pre>"
			if [ "$(wc -c <"$3")" -gt 60000 ]; then
				echo
				echo "(cut at 60,000 bytes: the job's log has all of it)"
			fi
		fi
	} >"$summary"
	post
	exit "$1"
}

# step LOG CMD...: run CMD with its output in LOG (and on stderr, for the
# job's log); its exit status is step's.
step() {
	local log=$1 status
	shift
	"$@" >"$log" 2>&1
	status=$?
	cat "$log" >&2
	return $status
}

targets=
args=()
while [ $# -gt 0 ]; do
	case $1 in
	--targets)
		if [ $# -lt 2 ]; then
			args=()
			break
		fi
		targets=$2
		shift 2
		;;
	--targets=*)
		targets=${1#--targets=}
		shift
		;;
	--)
		shift
		args+=("$@")
		break
		;;
	-*)
		echo "gate.sh: unknown flag $1" >"$work/usage.txt"
		args=()
		break
		;;
	*)
		args+=("$1")
		shift
		;;
	esac
done
if [ ${#args[@]} -ge 3 ]; then
	summary=${args[2]}
fi
rm -f "$summary"
if [ ${#args[@]} -lt 2 ] || [ ${#args[@]} -gt 3 ]; then
	echo "usage: gate.sh [--targets LIST] SPEC BASELINE [SUMMARY_FILE]" >>"$work/usage.txt"
	cat "$work/usage.txt" >&2
	fail 2 "gate.sh was called wrongly" "$work/usage.txt"
fi
spec=${args[0]}
baseline=${args[1]}
if [ -z "${ASSAY_DB:-}" ]; then
	export ASSAY_DB="$work/assay.db"
fi
target_flags=()
if [ -n "$targets" ]; then
	target_flags=(--targets "$targets")
fi

# 1. The spec and dataset are valid (nothing is called otherwise).
step "$work/validate.txt" "$assay" validate "$spec"
status=$?
if [ $status -ne 0 ]; then
	fail $status "assay validate: the spec or its dataset is invalid (nothing was run)" "$work/validate.txt"
fi

# 2. The grader cannot be passed by a null model (no model is called).
"$assay" selftest "$spec" >"$work/selftest.txt" 2>&1
status=$?
if [ $status -eq 3 ]; then
	{
		echo "## assay: the grader is exploitable"
		echo
		echo "<pre>"
		escape <"$work/selftest.txt"
		echo
		echo "</pre>"
	} >"$summary"
	cat "$work/selftest.txt" >&2
	post
	exit $status
elif [ $status -ne 0 ]; then
	cat "$work/selftest.txt" >&2
	fail $status "assay selftest failed" "$work/selftest.txt"
fi

# 3. Run the eval; every result is stored as it completes.
# shellcheck disable=SC2086 # ASSAY_RUN_FLAGS is a list of flags
"$assay" run "$spec" --json ${target_flags[@]+"${target_flags[@]}"} ${ASSAY_RUN_FLAGS:-} >"$work/run.json" 2>"$work/run.err"
status=$?
cat "$work/run.err" >&2
case $status in
0) ;;
5) fail 5 "assay run: the run is unhealthy (more of a target's calls failed than run.max_error_rate allows), so it cannot be judged; its results are kept: fix the provider or key and resume it with assay run --resume" "$work/run.err" ;;
*) fail $status "assay run failed" "$work/run.err" ;;
esac
run_id=$(sed -n 's/.*"run_id": *"\([^"]*\)".*/\1/p' "$work/run.json" | head -n 1)
if [ -z "$run_id" ]; then
	cat "$work/run.json" >>"$work/run.err"
	fail 1 "no run_id in the output of assay run" "$work/run.err"
fi

# 4. The run's HTML report, for an artifact (a failure here is only a warning).
if [ -n "${ASSAY_REPORT:-}" ]; then
	"$assay" report "$run_id" --format html -o "$ASSAY_REPORT" >&2 ||
		echo "gate.sh: warning: the HTML report could not be written" >&2
fi

# 5. Gate against the baseline: exit 3 is a regression. assay gate writes the
# summary itself when it reaches a verdict.
# shellcheck disable=SC2086 # ASSAY_GATE_FLAGS is a list of flags
"$assay" gate "$run_id" --baseline "$baseline" --summary "$summary" ${target_flags[@]+"${target_flags[@]}"} ${ASSAY_GATE_FLAGS:-} 2>"$work/gate.err"
status=$?
cat "$work/gate.err" >&2
if { [ $status -eq 0 ] || [ $status -eq 3 ]; } && [ -s "$summary" ]; then
	post
	exit $status
fi
if [ $status -eq 0 ]; then
	status=1
	echo "assay gate exited 0 but wrote no summary" >>"$work/gate.err"
fi
fail $status "assay gate failed" "$work/gate.err"
