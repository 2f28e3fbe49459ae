#!/bin/bash
# bisect-toy.sh: issue 31's bisect line. A toy history of 8 commits of the
# seed's scenario (configs/laight-450.yaml), the payload going from 64 to
# 9000 bytes at c5; a 10-process baseline at c0; then N bisects
# (git bisect start c7 c0 && git bisect run), each step
# `rtload check BASE scen.yaml --trust-baseline -q --threshold $THRESHOLD`,
# the load flipping before every step (2 busy loops and a dd started, then
# stopped), so that the machine moves between the baseline and the steps.
#
# usage: bench/bisect-toy.sh [N=3] [WORKDIR=/var/tmp/rtload-bisect-toy]
# env:   RTLOAD (default bin/rtload, copied: the steps run one binary),
#        THRESHOLD (default 10%)
# Writes WORKDIR/log.txt (every step's verdict line, exit and load) and the
# name of the first bad commit of each bisect. Run as root; about 3 minutes
# for the baseline and 5–10 per bisect. Measured 2026-12-07: 3 of 3 named
# c5 (docs/ci-bisect.md).
set -eu
N=${1:-3}; B=${2:-/var/tmp/rtload-bisect-toy}
SRC=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$B"; cp "${RTLOAD:-$SRC/bin/rtload}" "$B/rtload"
export B THRESHOLD=${THRESHOLD:-10%}
rm -rf "$B/repo" "$B/base"; mkdir "$B/repo"; cd "$B/repo"; git init -q
for i in 0 1 2 3 4 5 6 7; do
  size=64; [ $i -ge 5 ] && size=9000
  sed "s/^    size: 64/    size: $size/" "$SRC/configs/laight-450.yaml" > scen.yaml
  echo "# toy commit c$i" >> scen.yaml
  git add scen.yaml && git -c user.name=toy -c user.email=toy@localhost commit -qm c$i && git tag c$i
done
git checkout -q c0
echo "$(date +%T) baseline at c0, load $(cut -d' ' -f1-3 /proc/loadavg)" > "$B/log.txt"
"$B/rtload" run scen.yaml --processes 10 --out "$B/base" -q >> "$B/log.txt" 2>&1
cat > "$B/step.sh" <<'EOS'
#!/bin/bash
if [ -f "$B/load.pids" ]; then kill $(cat "$B/load.pids") 2>/dev/null; rm -f "$B/load.pids"; echo "$(date +%T) load step: off" >> "$B/log.txt"
else
  ( while :; do :; done ) & p1=$!; ( while :; do :; done ) & p2=$!
  dd if=/dev/zero of=/dev/null bs=1M 2>/dev/null & p3=$!
  echo "$p1 $p2 $p3" > "$B/load.pids"; echo "$(date +%T) load step: on (2 busy loops, 1 dd)" >> "$B/log.txt"
fi
c=$(git describe --tags --exact-match 2>/dev/null || git rev-parse --short HEAD)
echo "$(date +%T) step $c, load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$B/log.txt"
"$B/rtload" check "$B/base" scen.yaml --trust-baseline -q --threshold "$THRESHOLD" --out "$B/out-$(date +%H%M%S)" >> "$B/log.txt" 2>&1
rc=$?; echo "$(date +%T) step $c exit $rc" >> "$B/log.txt"; exit $rc
EOS
chmod +x "$B/step.sh"
for k in $(seq 1 "$N"); do
  echo "=== bisect $k $(date +%T)" >> "$B/log.txt"
  git bisect start c7 c0 >> "$B/log.txt" 2>&1
  git bisect run "$B/step.sh" > "$B/bisect-$k.txt" 2>&1 || true
  git log -1 --format='first bad: %s' refs/bisect/bad >> "$B/log.txt" 2>&1 || true
  git bisect reset -q
done
if [ -f "$B/load.pids" ]; then kill $(cat "$B/load.pids") 2>/dev/null || true; rm -f "$B/load.pids"; fi
grep '^first bad' "$B/log.txt"
