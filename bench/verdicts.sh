#!/bin/bash
# bench/verdicts.sh: measure rtload's verdicts on this machine (issue 24).
#
#   pilot   P processes x R rounds of the scenario: the variance components
#           of every headline metric (bin/verdicts pilot)
#   aa      one baseline of BASEP processes, then AA x `rtload check` of the
#           same binary and scenario at the check defaults: how many say
#           slower (exit 1), not slower (0), undecided (125)
#   power   POWER x `rtload check` with a real change (--set $CHANGE); the
#           change's true size measured in the same processes (variants
#           ABBA, paired by process: bench/size-450.yaml, 64 against 2048
#           bytes, per method), and pooled over every check's processes
#
# Usage (root, from the repository; writes $OUT, prints Markdown tables):
#   bench/verdicts.sh [pilot|aa|power|truesize|all]
# Environment (defaults are the Done-when's: the default scenario, the
# check's own defaults):
#   RTLOAD=./bin/rtload SCENARIO=laight-450 OUT=/tmp/rtload-verdicts
#   SETS="" (extra --set for every run, e.g. "--duration 1s")
#   PILOT_P=6 PILOT_R=8 PILOT_DURATION=1s
#   BASEP=10 AA=20 POWER=10 BUDGET=5m CHANGE="traffic[0].size=2048"
#   TRUESIZE=bench/size-450.yaml TRUESIZE_P=6 (its variants must be the
#   change: 64 and 2048 bytes)
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
CHANGE=${CHANGE:-traffic[0].size=2048}
TRUESIZE=${TRUESIZE:-bench/size-450.yaml}
TRUESIZE_P=${TRUESIZE_P:-6}
CHECKFLAGS=${CHECKFLAGS:-}
# bin/verdicts, built from the bench module (bench/go.mod) and run from here.
mkdir -p bin && go -C bench build -o ../bin/verdicts ./cmd/verdicts || exit 1
VERDICTS=./bin/verdicts
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
		$RTLOAD check "$OUT/base" --trust-baseline -q --budget "$BUDGET" --format json --out "$OUT/$name-$i" $CHECKFLAGS "$@" \
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
	# The change's size pooled over every check's processes (A/A against
	# power: the machine's drift between them is in it) ...
	$VERDICTS pool "$OUT"/aa-[0-9]* -- "$OUT"/power-[0-9]*
	load "power end"
	truesize
}

# truesize: ... and its true size within processes, drift cancelled.
truesize() {
	for m in recvfrom recvmsg; do
		rm -rf "$OUT/truesize-$m"
		# shellcheck disable=SC2086
		$RTLOAD run "$TRUESIZE" --processes "$TRUESIZE_P" --set readers[0].method=$m $SETS -q --no-wakeup-log \
			--out "$OUT/truesize-$m" > /dev/null 2>&1
		echo "true size, $m, $TRUESIZE_P processes (paired by process):"
		$RTLOAD compare "$OUT/truesize-$m" | grep -A3 '^verdicts'
	done
	load "true size end"
}

case "${1:-all}" in
pilot) pilot ;;
aa) aa ;;
power) power ;;
truesize) truesize ;;
all) pilot; aa; power ;;
*) echo "usage: $0 [pilot|aa|power|truesize|all]" >&2; exit 2 ;;
esac
