#!/bin/bash
# issue 31: A/A across a memory step, the drift the null syscall misses
# (bench/DRIFT.md run 5: a 64 MiB streamer moved the per-call cost +20%).
# A 10-process baseline of laight-450, then N A/A checks (the baseline's own
# scenario, --threshold 5% --budget 2m, controls judged: null, the default);
# in the odd ones 2 memory streamers (64 MiB copies, unpinned, SCHED_OTHER)
# started after the baseline run through the check. Re-judged afterwards with
# compare --control null|recv|none (v31judge.sh).
D=${D:-/var/tmp/v31/mem}; R=$D/rtload; N=${1:-8}
mkdir -p $D; cp "${RTLOAD:-bin/rtload}" $R
echo "$(date +%T) baseline, load $(cut -d' ' -f1-3 /proc/loadavg)" > $D/log.txt
flock /run/rtload-test-realtime.lock $R run laight-450 --processes 10 --out $D/base -q >> $D/log.txt 2>&1
echo "$(date +%T) baseline done, load $(cut -d' ' -f1-3 /proc/loadavg)" >> $D/log.txt
for k in $(seq 1 $N); do
  pids=""
  if [ $((k % 2)) -eq 1 ]; then
    for j in 1 2; do python3 -c 'a=bytearray(64<<20); b=bytearray(64<<20)
while True: b[:]=a' & pids="$pids $!"; done; step=mem
  else step=off; fi
  echo "$(date +%T) aa $k step $step load $(cut -d' ' -f1-3 /proc/loadavg)" >> $D/log.txt
  flock /run/rtload-test-realtime.lock $R check $D/base --trust-baseline --threshold 5% --budget 2m --out $D/aa-$k > $D/aa-$k.txt 2>&1
  rc=$?
  [ -n "$pids" ] && kill $pids 2>/dev/null
  echo "$(date +%T) aa $k exit $rc: $(grep -E '^check: (SLOWER|NOT SLOWER|UNDECIDED|CANNOT)' $D/aa-$k.txt | cut -c1-160)" >> $D/log.txt
done
echo "$(date +%T) done" >> $D/log.txt
