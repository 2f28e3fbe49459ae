#!/bin/bash
# issue 31 (bench/DRIFT.md): A/A and power across a load step, interleaved;
# every run records the recv control (re-judge them with
# rtload compare BASE DIR --fail-on slower --control recv|null|none). A fresh 10-process baseline of
# laight-450 on the machine as it is, then N rounds of: an A/A check (the same
# scenario, --threshold 5% --budget 2m) and a power check (2048-byte payloads,
# default threshold and budget); in odd rounds both run under a load step
# (2 busy loops + 1 dd started after the baseline).
D=${D:-/var/tmp/v31/both}; R=$D/rtload; N=${1:-10}
mkdir -p $D; cp "${RTLOAD:-bin/rtload}" $R
sed 's/^    size: 64/    size: 2048/' configs/laight-450.yaml > $D/size2048.yaml
echo "$(date +%T) baseline, load $(cut -d' ' -f1-3 /proc/loadavg)" > $D/log.txt
flock /run/rtload-test-realtime.lock $R run laight-450 --processes 10 --out $D/base -q >> $D/log.txt 2>&1
echo "$(date +%T) baseline done, load $(cut -d' ' -f1-3 /proc/loadavg)" >> $D/log.txt
for k in $(seq 1 $N); do
  pids=""
  if [ $((k % 2)) -eq 1 ]; then
    ( while :; do :; done ) & pids="$!"; ( while :; do :; done ) & pids="$pids $!"
    dd if=/dev/zero of=/dev/null bs=1M 2>/dev/null & pids="$pids $!"; step=on
  else step=off; fi
  echo "$(date +%T) aa $k load-step $step load $(cut -d' ' -f1-3 /proc/loadavg)" >> $D/log.txt
  flock /run/rtload-test-realtime.lock $R check $D/base --trust-baseline --threshold 5% --budget 2m --out $D/aa-$k > $D/aa-$k.txt 2>&1
  rc=$?
  echo "$(date +%T) aa $k exit $rc: $(grep -E '^check: (SLOWER|NOT SLOWER|UNDECIDED|CANNOT)' $D/aa-$k.txt | cut -c1-160)" >> $D/log.txt
  flock /run/rtload-test-realtime.lock $R check $D/base $D/size2048.yaml --trust-baseline --out $D/pw-$k > $D/pw-$k.txt 2>&1
  rc=$?
  [ -n "$pids" ] && kill $pids 2>/dev/null
  echo "$(date +%T) pw $k exit $rc: $(grep -E '^check: (SLOWER|NOT SLOWER|UNDECIDED|CANNOT)' $D/pw-$k.txt | cut -c1-160)" >> $D/log.txt
done
echo "$(date +%T) done" >> $D/log.txt
