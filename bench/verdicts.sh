#!/bin/bash
# bench/verdicts.sh: measure rtload's verdicts on this machine (issue 24).
#
#   pilot   P processes x R rounds of the scenario: the variance components
#           of every headline metric (go run ./bench/cmd/verdicts pilot)
#   aa      one baseline of BASEP processes, then AA x `rtload check` of the
#           same binary and scenario at the check defaults: how many say
#           slower (exit 1), not slower (0), undecided (125)
#   power   POWER x `rtload check` with a real change (--set $CHANGE), and
#           the change's true size from every candidate process pooled
#
# Usage (root, from the repository; writes $OUT, prints Markdown tables):
#   bench/verdicts.sh [pilot|aa|power|all]
# Environment (defaults are the Done-when's: the default scenario, the
# check's own defaults):
#   RTLOAD=./bin/rtload SCENARIO=laight-450 OUT=/tmp/rtload-verdicts
#   SETS="" (extra --set for every run, e.g. "--duration 1s")
#   PILOT_P=6 PILOT_R=8 PILOT_DURATION=1s
#   BASEP=10 AA=20 POWER=10 BUDGET=5m CHANGE="traffic[0].size=1024"
#   CHECKFLAGS="" (extra check flags)
# Every figure it prints was measured on the machine as it was: record the
# load (the script prints uptime before and after each part).
set -u
RTLOAD=${RTLOAD:-./bin/rtload}
SCENARIO=${SCENARIO:-laight-450}
OUT=${OUT:-/tmp/rtload-verdicts}
SETS=${SETS:-}
PILOT_P=${PILOT_P:-6}
PILOT_R=${PILOT_R:-8}
PILOT_DURATION=${PILOT_DURATION:-1s}
BASEP=${BASEP:-10}
AA=${AA:-20}
POWER=${POWER:-10}
BUDGET=${BUDGET:-5m}
CHANGE=${CHANGE:-traffic[0].size=1024}
CHECKFLAGS=${CHECKFLAGS:-}
VERDICTS="go run ./bench/cmd/verdicts"
mkdir -p "$OUT"

load() { echo "load: $(uptime | sed 's/.*load average: //') ($1, $(date -u +%H:%M:%S))"; }

pilot() {
	load "pilot start"
	rm -rf "$OUT/pilot"
	# One run of P processes: each a fresh child, setup randomised.
	# shellcheck disable=SC2086
	$RTLOAD run "$SCENARIO" --processes "$PILOT_P" --set rounds="$PILOT_R" --duration "$PILOT_DURATION" $SETS \
		--no-wakeup-log -q --out "$OUT/pilot" > "$OUT/pilot.txt" 2>&1
	echo "pilot: $SCENARIO, $PILOT_P processes x $PILOT_R rounds of $PILOT_DURATION (exit $?)"
	$VERDICTS pilot "$OUT/pilot"
	grep '^sizing:' "$OUT/pilot.txt"
	load "pilot end"
}

baseline() {
	if [ -f "$OUT/base/summary.json" ]; then return; fi
	load "baseline start"
	# shellcheck disable=SC2086
	$RTLOAD run "$SCENARIO" --processes "$BASEP" $SETS -q --out "$OUT/base" > "$OUT/base.txt" 2>&1
	echo "baseline: $SCENARIO, $BASEP processes (exit $?)"
	grep '^sizing:' "$OUT/base.txt"
	load "baseline end"
}

# checks NAME N [--set ...]: N checks against the baseline, JSON kept.
checks() {
	name=$1 n=$2
	shift 2
	for i in $(seq 1 "$n"); do
		rm -rf "$OUT/$name-$i"
		# shellcheck disable=SC2086
		$RTLOAD check "$OUT/base" -q --budget "$BUDGET" --format json --out "$OUT/$name-$i" $CHECKFLAGS "$@" \
			> "$OUT/$name-$i.json" 2> "$OUT/$name-$i.err"
		echo "$name $i: exit $? $(jq -r '.verdict' "$OUT/$name-$i.json" 2>/dev/null)"
	done
	$VERDICTS tally "$OUT/$name"-*.json
}

aa() {
	baseline
	load "A/A start"
	checks aa "$AA"
	load "A/A end"
}

power() {
	baseline
	load "power start"
	checks power "$POWER" --set "$CHANGE"
	# The change's true size: every power check's candidate processes
	# against every A/A check's (same binary, same time span), pooled.
	$VERDICTS pool "$OUT"/aa-[0-9]* -- "$OUT"/power-[0-9]*
	load "power end"
}

case "${1:-all}" in
pilot) pilot ;;
aa) aa ;;
power) power ;;
all) pilot; aa; power ;;
*) echo "usage: $0 [pilot|aa|power|all]" >&2; exit 2 ;;
esac
