// Package containers holds no Go code: its tests run rtload's image for
// real with podman, the way a user on a Kubernetes node or a CI runner
// meets rtload.
//
// TestImage builds the image with `make image` (a static binary built on
// the host, deploy/Containerfile.prebuilt: no registry), then starts it
// once per case, each with a host directory mounted at /results, and
// checks the summary.json the run left there:
//
//   - privileged: timer-only with --privileged;
//   - named capabilities: laight-450 with only --cap-add SYS_NICE,IPC_LOCK
//     and --device /dev/cpu_dma_latency;
//   - cpuset: --cpuset-cpus N with readers[0].cpu=auto, which must choose N;
//   - tap: laight-450-tap, privileged, and with only the capabilities,
//     devices and --security-opt unmask=/proc/sys that preflight names;
//     read-only (--read-only without podman's tmpfs on /run) refused
//     naming --tmpfs /run, which then runs;
//   - unprivileged: a bare `podman run` of laight-450-tap is refused
//     before anything runs, naming every missing flag at once (exit 3);
//   - owner: results in a volume owned by another user are that user's,
//     and the host path is said on stderr; --user runs write as that user.
//
// Every container runs with --network none (no bridge, veth or firewall
// rule on the host). What the test gives every container besides, found
// by a first run (a canary): the runc runtime where crun refuses the
// host's hybrid cgroups, and ulimits within root's hard limits where the
// runtime may not raise them (no CAP_SYS_RESOURCE). On cgroup v1 with an RT budget per cgroup
// (CONFIG_RT_GROUP_SCHED), the test makes a parent cgroup of its own with
// a budget (podman's --cgroup-parent) so that --cpu-rt-runtime can give
// the containers one, and removes it at the end; rtload itself never
// changes RT throttling. docs/containers.md says what a user needs
// instead.
//
// The tests need root and podman (.ci/run installs podman and runc from
// Debian) and skip, saying why, only where podman cannot run a container
// at all. Every container, image tag and cgroup they make is removed.
package containers
