#!/bin/sh
# rootfs.sh OUT VERSION: the rtload image's whole file tree, built in OUT
# from the repository root (the working directory). Both Containerfiles
# take it as it is, so both give the same image layout:
#   deploy/Containerfile           runs it in its build stage (a Go image
#                                  from a registry);
#   deploy/Containerfile.prebuilt  copies the OUT that `make image` built
#                                  on the host (no registry).
#
#   OUT/rtload    the static binary (CGO_ENABLED=0: no libc, so it runs
#                 FROM scratch; symbols kept, no -s -w: profiles and the
#                 hot-path disassembly check read them)
#   OUT/tmp       1777 (noise file_write, temporary files)
#   OUT/run       namespaces are bind-mounted in /run/netns
#   OUT/results   the volume: rtload run writes <scenario>-<time>/ under
#                 $RTLOAD_RESULTS, which the Containerfiles set to /results
set -eu
if [ "$#" -ne 2 ]; then
	echo "usage: deploy/rootfs.sh OUT VERSION" >&2
	exit 2
fi
out=$1
version=$2
mkdir -p "$out/tmp" "$out/run" "$out/results"
chmod 0755 "$out" "$out/run" "$out/results"
chmod 1777 "$out/tmp"
CGO_ENABLED=0 go build -trimpath -ldflags "-X main.version=$version" -o "$out/rtload" ./cmd/rtload
chmod 0755 "$out/rtload"
"$out/rtload" list >/dev/null
