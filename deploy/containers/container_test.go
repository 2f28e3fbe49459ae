package containers

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/sysinfo"
)

func TestMain(m *testing.M) { testutil.Main(m) }

// runTimeout bounds one podman command: a run of a few seconds, or the
// image build (a static binary built from a cold cache on a busy machine).
const (
	runTimeout   = 3 * time.Minute
	buildTimeout = 8 * time.Minute
)

// minRTRuntimeUs is the least RT budget (µs per second, per CPU) the
// containers get on cgroup v1 with CONFIG_RT_GROUP_SCHED. They get all the
// root's budget that its other children leave, up to the root's own (as
// rtload on the host has): laight-450-tap's sender alone, writing 22,500
// frames a second into the tap device and delivering them to 450 sockets
// in its own context, needed more than 400 ms of every second here, and a
// group over its budget is throttled (send lag 0.8 s, then nothing sent).
const minRTRuntimeUs = 500000

// host is what every case shares: the image and the flags every container
// needs on this machine.
type host struct {
	podman string
	image  string // localhost/rtload-test-<pid>:latest
	name   string // container name prefix
	// base are the flags the canary found every container needs here
	// (--runtime runc, --ulimit …); rt gives a container an RT budget
	// (--cgroup-parent, --cpu-rt-runtime); nil without budgets per cgroup.
	base, rt []string
	// rtParent is the test's parent cgroup (relative to each v1
	// controller's mount), "" when none was made.
	rtParent string
	// memlockLimited: the containers inherit a finite RLIMIT_MEMLOCK, so
	// without CAP_IPC_LOCK preflight must name memlock.
	memlockLimited bool
}

// TestImage builds rtload's image without a registry (make image) and runs
// it for real, once per case, checking the summary.json each run leaves
// in the volume mounted at /results (package doc).
func TestImage(t *testing.T) {
	h := setup(t)
	t.Run("privileged", h.privileged)
	t.Run("named-capabilities", h.namedCapabilities)
	t.Run("cpuset", h.cpuset)
	t.Run("tap", h.tap)
	t.Run("unprivileged", h.unprivileged)
	t.Run("owner", h.owner)
}

// setup skips when podman cannot run containers at all, and otherwise
// builds the image, finds the flags every container needs (canary), makes
// the RT budget cgroup, and registers the cleanup of all three.
func setup(t *testing.T) *host {
	testutil.Requires(t, testutil.System, testutil.Root)
	podman, err := exec.LookPath("podman")
	if err != nil {
		t.Skip("podman not found: the container tests need it (.ci/run installs it: apt-get install podman runc)")
	}
	// --network none: each container's own namespace with only lo (the
	// scenarios' traffic is loopback or in rtload's namespace), so that
	// podman makes no bridge, veth or firewall rule on the host.
	h := &host{podman: podman, image: fmt.Sprintf("localhost/rtload-test-%d", os.Getpid()), name: fmt.Sprintf("rtload-test-%d", os.Getpid()),
		base: []string{"--network", "none"}}
	h.removeLeftovers(t)
	h.build(t)
	h.canary(t)
	h.rtBudget(t)
	var ml unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_MEMLOCK, &ml) == nil && ml.Cur != unix.RLIM_INFINITY {
		h.memlockLimited = true
	}
	return h
}

// podmanCmd runs podman with args, bounded by timeout; it returns stdout,
// stderr and the exit code (-1: podman did not run or was killed).
func (h *host) podmanCmd(timeout time.Duration, args ...string) (stdout, stderr string, code int) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.podman, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code = 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		code = ee.ExitCode()
	case err != nil:
		code = -1
		fmt.Fprintf(&errb, "\n(podman %s: %v)", args[0], err)
	}
	return out.String(), errb.String(), code
}

// build runs `make image` into a tag of the test's own, without cached
// layers, and checks the image: its configuration, its version labels and
// its file tree.
func (h *host) build(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, "make", "-C", "../..", "image", "IMAGE="+h.image, "IMAGE_TOOL="+h.podman,
		"IMAGE_CTX="+filepath.Join(t.TempDir(), "ctx"), "IMAGE_BUILD_FLAGS=--layers=false")
	out, err := cmd.CombinedOutput()
	t.Cleanup(func() { h.removeImage(t) })
	if err != nil {
		t.Fatalf("make image: %v\n%s", err, out)
	}
	t.Logf("make image: %v", time.Since(start).Round(time.Second))

	stdout, stderr, code := h.podmanCmd(runTimeout, "image", "inspect", h.image+":latest")
	if code != 0 {
		t.Fatalf("podman image inspect: %s", stderr)
	}
	var imgs []struct {
		RepoTags []string
		Config   struct {
			Entrypoint, Cmd, Env []string
			WorkingDir           string
			Volumes              map[string]struct{}
			Labels               map[string]string
		}
	}
	if err := json.Unmarshal([]byte(stdout), &imgs); err != nil || len(imgs) != 1 {
		t.Fatalf("podman image inspect: %v\n%s", err, stdout)
	}
	img := imgs[0]
	if diff := cmp.Diff([]string{"/rtload"}, img.Config.Entrypoint); diff != "" {
		t.Errorf("entrypoint (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"run"}, img.Config.Cmd); diff != "" {
		t.Errorf("cmd (-want +got):\n%s", diff)
	}
	if _, ok := img.Config.Volumes["/results"]; !ok || img.Config.WorkingDir != "/" {
		t.Errorf("volumes %v, workdir %q: want /results and /", img.Config.Volumes, img.Config.WorkingDir)
	}
	// rtload's default results directory is rtload-results/ under the
	// working directory; the image puts it in the volume.
	if !slices.Contains(img.Config.Env, "RTLOAD_RESULTS=/results") {
		t.Errorf("env %v lacks RTLOAD_RESULTS=/results: runs would not land in the volume", img.Config.Env)
	}
	version := img.Config.Labels["org.opencontainers.image.version"]
	want, _ := exec.Command("git", "describe", "--always", "--dirty").Output()
	if v := strings.TrimSpace(string(want)); v != "" && version != v {
		t.Errorf("label org.opencontainers.image.version = %q, want git describe's %q", version, v)
	}
	if !slices.Contains(img.RepoTags, h.image+":"+version) {
		t.Errorf("tags %v lack %s:%s", img.RepoTags, h.image, version)
	}
	if img.Config.Labels["org.opencontainers.image.title"] != "rtload" {
		t.Errorf("labels %v", img.Config.Labels)
	}
	h.checkTree(t)
}

// checkTree lists the image's files (podman create, export) and compares
// them with deploy/rootfs.sh's tree.
func (h *host) checkTree(t *testing.T) {
	name := h.name + "-tree"
	if _, stderr, code := h.podmanCmd(runTimeout, "create", "--name", name, h.image+":latest"); code != 0 {
		t.Fatalf("podman create: %s", stderr)
	}
	defer h.podmanCmd(runTimeout, "rm", "-f", "-v", name)
	stdout, stderr, code := h.podmanCmd(runTimeout, "export", name)
	if code != 0 {
		t.Fatalf("podman export: %s", stderr)
	}
	got := map[string]string{}
	tr := tar.NewReader(strings.NewReader(stdout))
	for {
		hd, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("podman export: %v", err)
		}
		got[strings.Trim(hd.Name, "/")] = fmt.Sprintf("%v %d:%d", hd.FileInfo().Mode(), hd.Uid, hd.Gid)
	}
	// rootfs.sh's tree; podman adds the mount points of a container
	// (dev, proc, sys, etc/…), which are not checked.
	want := map[string]string{
		"rtload":  "-rwxr-xr-x 0:0",
		"tmp":     "dtrwxrwxrwx 0:0",
		"run":     "drwxr-xr-x 0:0",
		"results": "drwxr-xr-x 0:0",
	}
	for name, mode := range want {
		if got[name] != mode {
			t.Errorf("image file %s: %q, want %q", name, got[name], mode)
		}
	}
	for name, mode := range got {
		if !strings.HasPrefix(mode, "d") && !strings.Contains(name, "/") && name != "rtload" {
			t.Errorf("image holds a file rootfs.sh does not make: %s (%s)", name, mode)
		}
	}
}

// removeImage removes the test's image, every tag of it.
func (h *host) removeImage(t *testing.T) {
	id, _, code := h.podmanCmd(runTimeout, "image", "inspect", "--format", "{{.Id}}", h.image+":latest")
	if code != 0 {
		return
	}
	if _, stderr, code := h.podmanCmd(runTimeout, "rmi", "-f", strings.TrimSpace(id)); code != 0 {
		t.Errorf("podman rmi %s: %s", h.image, stderr)
	}
}

// canary starts the image once (rtload list) and adds the flags this
// machine needs to base, each on the error that asks for it: runc where
// crun refuses hybrid cgroups, ulimits within root's hard limits where the
// runtime may not raise them. It skips when no container starts.
func (h *host) canary(t *testing.T) {
	var tried []string
	for range 3 {
		args := append(append([]string{"run", "--rm", "--name", h.name + "-canary"}, h.base...), h.image+":latest", "list")
		_, stderr, code := h.podmanCmd(runTimeout, args...)
		if code == 0 {
			if len(tried) > 0 {
				t.Logf("containers here need %s (docs/containers.md): %s", strings.Join(h.base[2:], " "), strings.Join(tried, "; "))
			}
			return
		}
		h.podmanCmd(runTimeout, "rm", "-f", "-v", h.name+"-canary")
		switch {
		case strings.Contains(stderr, "cgroups in hybrid mode not supported") && !slices.Contains(h.base, "--runtime"):
			if _, err := exec.LookPath("runc"); err != nil {
				t.Skipf("podman cannot run a container here: crun refuses this host's hybrid cgroups and runc is not installed (apt-get install runc): %s", stderr)
			}
			h.base = append(h.base, "--runtime", "runc")
			tried = append(tried, "crun: cgroups in hybrid mode not supported")
		case strings.Contains(stderr, "rlimit") && !slices.Contains(h.base, "--ulimit"):
			var nofile, nproc unix.Rlimit
			_ = unix.Getrlimit(unix.RLIMIT_NOFILE, &nofile)
			_ = unix.Getrlimit(unix.RLIMIT_NPROC, &nproc)
			n, p := min(nofile.Max, 4096), min(nproc.Max, 4096)
			h.base = append(h.base, "--ulimit", fmt.Sprintf("nofile=%d:%d", n, n), "--ulimit", fmt.Sprintf("nproc=%d:%d", p, p))
			tried = append(tried, strings.TrimSpace(stderr))
		default:
			t.Skipf("podman cannot run a container here (flags tried: %v): %s", h.base, strings.TrimSpace(stderr))
		}
	}
	t.Skipf("podman cannot run a container here (flags tried: %v): %s", h.base, strings.Join(tried, "; "))
}

// cpuController returns where this process has the cgroup v1 cpu
// controller mounted, "" when it has none (cgroup v2 alone).
func cpuController() string {
	for _, m := range sysinfo.ReadMounts(os.DirFS("/")) {
		if m.FSType == "cgroup" && slices.Contains(m.Super, "cpu") && m.Root == "/" {
			return m.Point
		}
	}
	return ""
}

// rtBudget gives the containers an RT budget where cgroups have one (v1,
// CONFIG_RT_GROUP_SCHED): a parent cgroup of the test's own with
// parentRTRuntimeUs, under which podman's --cpu-rt-runtime can give each
// container containerRTRuntimeUs. (podman's default parent,
// libpod_parent, has none: a user writes it, docs/containers.md.) The
// cgroup is removed in every controller at the end.
func (h *host) rtBudget(t *testing.T) {
	cpu := cpuController()
	if cpu == "" {
		return
	}
	if _, err := os.Stat(filepath.Join(cpu, "cpu.rt_runtime_us")); err != nil {
		return // no CONFIG_RT_GROUP_SCHED
	}
	mgr, _, _ := h.podmanCmd(runTimeout, "info", "--format", "{{.Host.CgroupManager}}")
	parent := h.name
	flag := "/" + parent
	if strings.TrimSpace(mgr) == "systemd" {
		parent = fmt.Sprintf("rtloadtest%d.slice", os.Getpid())
		flag = parent
	}
	budget, err := freeRTBudget(cpu)
	if err != nil {
		t.Fatalf("RT budget: %v", err)
	}
	if budget < minRTRuntimeUs {
		t.Fatalf("RT budget: the root cgroup's other children leave %d µs/s of %s/cpu.rt_runtime_us, less than the %d the containers need (children: %s)",
			budget, cpu, minRTRuntimeUs, childBudgets(cpu))
	}
	dir := filepath.Join(cpu, parent)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatalf("RT budget cgroup: %v", err)
	}
	h.rtParent = parent
	t.Cleanup(func() { h.removeCgroups(t) })
	if err := os.WriteFile(filepath.Join(dir, "cpu.rt_runtime_us"), []byte(strconv.FormatInt(budget, 10)), 0); err != nil {
		t.Fatalf("RT budget of %s: %v (children now: %s)", dir, err, childBudgets(cpu))
	}
	h.rt = []string{"--cgroup-parent=" + flag, fmt.Sprintf("--cpu-rt-runtime=%d", budget)}
	t.Logf("RT budget: %s has %d µs/s for the containers (--cpu-rt-runtime=%d)", dir, budget, budget)
}

// freeRTBudget is the RT budget the root cgroup's children leave (µs of
// every second; all children run at the root's period here): the root's
// cpu.rt_runtime_us less its children's, at most the root's.
func freeRTBudget(cpu string) (int64, error) {
	read := func(f string) (int64, error) {
		b, err := os.ReadFile(f)
		if err != nil {
			return 0, err
		}
		return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	}
	root, err := read(filepath.Join(cpu, "cpu.rt_runtime_us"))
	if err != nil {
		return 0, err
	}
	if root < 0 {
		root = 950000
	}
	files, _ := filepath.Glob(filepath.Join(cpu, "*", "cpu.rt_runtime_us"))
	for _, f := range files {
		if v, err := read(f); err == nil && v > 0 {
			root -= v
		}
	}
	return root, nil
}

// childBudgets lists the RT budgets of the cgroups directly under the cpu
// controller's root: what the root's budget is shared among.
func childBudgets(cpu string) string {
	var out []string
	files, _ := filepath.Glob(filepath.Join(cpu, "*", "cpu.rt_runtime_us"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		out = append(out, filepath.Base(filepath.Dir(f))+" "+strings.TrimSpace(string(b)))
	}
	return strings.Join(out, ", ")
}

// removeCgroups removes the test's parent cgroup from every controller,
// children first (podman leaves a conmon cgroup in it). conmon may take a
// moment to leave after its container ended: each rmdir is retried on
// EBUSY for up to 5 s.
func (h *host) removeCgroups(t *testing.T) {
	if h.rtParent == "" {
		return
	}
	removeCgroupTrees(t, h.rtParent)
}

// leftoverPID matches the names an earlier run of these tests gave its
// containers, images and cgroups (rtload-test-<pid>[-…],
// localhost/rtload-test-<pid>, rtloadtest<pid>.slice): group 1 is the pid.
var leftoverPID = regexp.MustCompile(`^(?:localhost/)?rtload-?test-?(\d+)(?:[-.:]|$)`)

// deadOwner reports whether name is a leftover of a test process that no
// longer runs (kill(pid, 0) says ESRCH).
func deadOwner(name string) bool {
	m := leftoverPID.FindStringSubmatch(name)
	if m == nil {
		return false
	}
	pid, err := strconv.Atoi(m[1])
	return err == nil && pid > 0 && pid != os.Getpid() && errors.Is(unix.Kill(pid, 0), unix.ESRCH)
}

// removeLeftovers removes what an earlier run of these tests left when it
// was killed before its cleanups (SIGKILL, a timeout): containers, images
// and cgroups named for a test process that no longer runs. A leftover
// RT-budget cgroup keeps its cpu.rt_runtime_us and would starve this
// run's budget. Each removal is logged.
func (h *host) removeLeftovers(t *testing.T) {
	out, _, _ := h.podmanCmd(runTimeout, "ps", "-a", "--format", "{{.Names}}")
	for _, name := range strings.Fields(out) {
		if deadOwner(name) {
			_, stderr, code := h.podmanCmd(runTimeout, "rm", "-f", "-v", name)
			t.Logf("removed a leftover container of an earlier run: %s (exit %d %s)", name, code, strings.TrimSpace(stderr))
		}
	}
	out, _, _ = h.podmanCmd(runTimeout, "images", "--format", "{{.Repository}}:{{.Tag}}")
	for _, ref := range strings.Fields(out) {
		if deadOwner(ref) {
			_, stderr, code := h.podmanCmd(runTimeout, "rmi", "-f", ref)
			t.Logf("removed a leftover image of an earlier run: %s (exit %d %s)", ref, code, strings.TrimSpace(stderr))
		}
	}
	seen := map[string]bool{}
	for _, pat := range []string{"rtload-test-*", "rtloadtest*.slice"} {
		for _, glob := range []string{filepath.Join("/sys/fs/cgroup", "*", pat), filepath.Join("/sys/fs/cgroup", pat)} {
			dirs, _ := filepath.Glob(glob)
			for _, d := range dirs {
				if name := filepath.Base(d); deadOwner(name) && !seen[name] {
					seen[name] = true
					t.Logf("removing a leftover cgroup of an earlier run: %s", name)
					removeCgroupTrees(t, name)
				}
			}
		}
	}
}

// removeCgroupTrees removes the cgroup name (directly under each
// controller's root, and under cgroup v2's) with every cgroup below it,
// children first.
func removeCgroupTrees(t *testing.T, name string) {
	tops, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup", "*", name))
	if fi, err := os.Stat(filepath.Join("/sys/fs/cgroup", name)); err == nil && fi.IsDir() {
		tops = append(tops, filepath.Join("/sys/fs/cgroup", name))
	}
	for _, top := range tops {
		var dirs []string
		filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			// Until the cgroup's last task has left it (EBUSY until then).
			var err error
			testutil.Eventually(5*time.Second, func() bool {
				err = unix.Rmdir(dirs[i])
				return err == nil || errors.Is(err, unix.ENOENT) || !errors.Is(err, unix.EBUSY)
			})
			if err != nil && !errors.Is(err, unix.ENOENT) {
				t.Errorf("remove cgroup %s: %v", dirs[i], err)
			}
		}
	}
}

// result is one container run: podman's exit code (the container's), its
// output, and the host directory mounted at /results.
type result struct {
	code           int
	stdout, stderr string
	vol            string
}

// run starts the image with flags (after base) and args, vol mounted at
// /results, and removes the container whatever happens.
func (h *host) run(t *testing.T, vol string, flags []string, args ...string) result {
	t.Helper()
	name := h.name + "-" + strings.ReplaceAll(strings.ToLower(t.Name()), "/", "-")
	name = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '-'
	}, name)
	cmd := append([]string{"run", "--rm", "--name", name}, h.base...)
	cmd = append(cmd, flags...)
	cmd = append(cmd, "-v", vol+":/results", h.image+":latest")
	cmd = append(cmd, args...)
	start := time.Now()
	stdout, stderr, code := h.podmanCmd(runTimeout, cmd...)
	h.podmanCmd(runTimeout, "rm", "-f", "-v", name)
	t.Logf("podman %s: exit %d in %v", strings.Join(cmd, " "), code, time.Since(start).Round(time.Millisecond))
	return result{code: code, stdout: stdout, stderr: stderr, vol: vol}
}

// summary returns the one results directory of scenario in r's volume and
// its summary.json, failing the test when the run did not succeed.
func (r result) summary(t *testing.T, scenario string) (string, *results.Summary) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	dirs, _ := filepath.Glob(filepath.Join(r.vol, scenario+"-*"))
	if len(dirs) != 1 {
		t.Fatalf("volume holds %v, want one %s-* directory\nstderr:\n%s", dirs, scenario, r.stderr)
	}
	s, err := store.ReadSummary(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	if s.Scenario != scenario || len(s.Trials) == 0 {
		t.Fatalf("summary: scenario %q, %d trials", s.Scenario, len(s.Trials))
	}
	return dirs[0], s
}

// checkRealTime checks what the run asked of the kernel and got: not
// degraded, every reader SCHED_FIFO and mlocked (read back from the
// kernel), and the cpu_dma_latency request held when wantDMA.
func checkRealTime(t *testing.T, s *results.Summary, wantDMA bool) {
	t.Helper()
	if s.Degraded {
		t.Errorf("degraded: %v", s.DegradedReasons)
	}
	for i, tr := range s.Trials {
		for _, rd := range tr.Readers {
			if rd.Applied.Policy != "SCHED_FIFO" || !rd.Applied.Mlocked {
				t.Errorf("trial %d reader %s: %s, mlocked %v (notes %v)", i, rd.Name, rd.Applied.Policy, rd.Applied.Mlocked, rd.Applied.Degraded)
			}
			if rd.Wakeups == 0 {
				t.Errorf("trial %d reader %s: no wakeups", i, rd.Name)
			}
		}
		if want := map[bool]int{true: 0, false: -1}[wantDMA]; tr.CPUDMALatencyUs != want {
			t.Errorf("trial %d: cpu_dma_latency_us %d, want %d", i, tr.CPUDMALatencyUs, want)
		}
	}
}

// privileged: timer-only with --privileged (and the RT budget).
func (h *host) privileged(t *testing.T) {
	r := h.run(t, t.TempDir(), append([]string{"--privileged"}, h.rt...), "run", "timer-only", "--duration", "1s")
	_, s := r.summary(t, "timer-only")
	checkRealTime(t, s, true)
}

// namedCaps are the capabilities and device a scenario on loopback needs
// (docs/containers.md): no --privileged.
var namedCaps = []string{"--cap-add", "SYS_NICE", "--cap-add", "IPC_LOCK", "--device", "/dev/cpu_dma_latency"}

// namedCapabilities: laight-450 (sockets, a SCHED_FIFO sender, noise) with
// only the named capabilities, the device and the ulimits.
func (h *host) namedCapabilities(t *testing.T) {
	r := h.run(t, t.TempDir(), append(slices.Clone(namedCaps), h.rt...),
		"run", "laight-450", "--duration", "1s", "--set", "rounds=1", "--set", "noise[0].threads=1")
	_, s := r.summary(t, "laight-450")
	checkRealTime(t, s, true)
	for i, tr := range s.Trials {
		if len(tr.Readers) != 1 || tr.Readers[0].Sockets != 450 {
			t.Errorf("trial %d: readers %d, want one of 450 sockets", i, len(tr.Readers))
		}
		for _, tf := range tr.Traffic {
			if tf.Applied == nil || tf.Applied.Policy != "SCHED_FIFO" {
				t.Errorf("trial %d sender %s: %+v, want SCHED_FIFO", i, tf.Endpoint, tf.Applied)
			}
		}
	}
}

// cpuset: --cpuset-cpus N with readers[0].cpu=auto: rtload chooses N, says
// so, and the reader runs there (its affinity read back).
func (h *host) cpuset(t *testing.T) {
	cpus := sysinfo.AllowedCPUs()
	if len(cpus) == 0 {
		t.Fatal("sched_getaffinity: no CPUs")
	}
	cpu := cpus[0] // the scenario's own default is CPU 1: auto must not keep it
	flags := append(append(slices.Clone(namedCaps), "--cpuset-cpus", strconv.Itoa(cpu)), h.rt...)
	r := h.run(t, t.TempDir(), flags, "run", "timer-only", "--duration", "1s", "--set", "readers[0].cpu=auto")
	_, s := r.summary(t, "timer-only")
	checkRealTime(t, s, true)
	if want := fmt.Sprintf("cpu auto → %d", cpu); !strings.Contains(r.stdout+r.stderr, want) {
		t.Errorf("output does not say %q:\n%s\n%s", want, r.stdout, r.stderr)
	}
	for i, tr := range s.Trials {
		if got := tr.Readers[0].Applied.CPUs; !slices.Equal(got, []int{cpu}) {
			t.Errorf("trial %d: reader on CPUs %v, want [%d]", i, got, cpu)
		}
	}
}

// tap: laight-450-tap (a private namespace, a tap device, frames written
// to it), privileged; then with only what preflight names for it.
func (h *host) tap(t *testing.T) {
	args := []string{"run", "laight-450-tap", "--duration", "1s", "--set", "noise[0].threads=1"}
	check := func(t *testing.T, r result) {
		_, s := r.summary(t, "laight-450-tap")
		checkRealTime(t, s, true)
		for i, tr := range s.Trials {
			if rd := tr.Readers[0]; rd.Sockets != 450 || rd.Messages == 0 {
				t.Errorf("trial %d: %d sockets, %d messages through the tap device (traffic %+v)", i, rd.Sockets, rd.Messages, tr.Traffic)
			}
		}
		if t.Failed() {
			t.Logf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		}
	}
	t.Run("privileged", func(t *testing.T) {
		check(t, h.run(t, t.TempDir(), append([]string{"--privileged"}, h.rt...), args...))
	})
	// --read-only without podman's tmpfs on /run: the namespace cannot be
	// bind-mounted in /run/netns. Preflight says so and names --tmpfs
	// /run, which then works.
	t.Run("read-only", func(t *testing.T) {
		flags := append([]string{"--privileged", "--read-only", "--read-only-tmpfs=false"}, h.rt...)
		r := h.run(t, t.TempDir(), flags, args...)
		want := "needs a writable /run/netns (it is on the read-only mount /); in this container (podman): start it with --tmpfs /run"
		if r.code != 3 || !strings.Contains(r.stderr, want) {
			t.Fatalf("exit %d, want 3 and %q\nstderr:\n%s", r.code, want, r.stderr)
		}
		check(t, h.run(t, t.TempDir(), append(flags, "--tmpfs", "/run"), args...))
	})
	t.Run("named", func(t *testing.T) {
		flags := append(slices.Clone(namedCaps), "--cap-add", "SYS_ADMIN", "--cap-add", "NET_ADMIN", "--device", "/dev/net/tun",
			"--security-opt", "unmask=/proc/sys")
		check(t, h.run(t, t.TempDir(), append(flags, h.rt...), args...))
	})
}

// unprivileged: a bare `podman run` (only the ulimits without which no
// container starts here) of laight-450-tap is refused before anything is
// built, exit 3, naming every flag that is missing at once; nothing is
// left in the volume.
func (h *host) unprivileged(t *testing.T) {
	vol := t.TempDir()
	r := h.run(t, vol, nil, "run", "laight-450-tap", "--duration", "1s")
	if r.code != 3 {
		t.Fatalf("exit %d, want 3 (missing privilege)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	want := []string{
		"--cap-add SYS_NICE",                   // SCHED_FIFO reader and sender
		"--device /dev/cpu_dma_latency",        // not in a container's /dev
		"--cap-add SYS_ADMIN",                  // the private namespace
		"--cap-add NET_ADMIN",                  // the tap device
		"--device /dev/net/tun",                // not in a container's /dev
		"--security-opt unmask=/proc/sys",      // rp_filter on the tap device
		"in this container (podman): start it", // container settings, not "run as root"
	}
	n := 8 // SYS_NICE for reader and sender, dma, SYS_ADMIN, NET_ADMIN, tun, /proc/sys, memlock
	if h.memlockLimited {
		want = append(want, "--cap-add IPC_LOCK")
	} else {
		n--
	}
	if h.rt != nil {
		// podman's default parent, libpod_parent, not the test's: the
		// container's cgroup has no budget, and its parents are named.
		want = append(want, "--cpu-rt-runtime=950000", "libpod_parent/cpu.rt_runtime_us")
		n++
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("refusal lacks %q", w)
		}
	}
	if head := fmt.Sprintf("%d missing privileges:", n); !strings.Contains(r.stderr, head) {
		t.Errorf("refusal lacks %q", head)
	}
	if strings.Contains(r.stderr, "run as root") {
		t.Errorf("refusal says run as root in a container")
	}
	if t.Failed() {
		t.Logf("stderr:\n%s", r.stderr)
	}
	if names := testutil.DirNames(t, vol); len(names) != 0 {
		t.Errorf("a refused run left %v in the volume", names)
	}
}

// owner: results written by root in a container into a volume another
// user owns are that user's, and stderr names the host path; with --user
// the run writes as that user itself.
func (h *host) owner(t *testing.T) {
	const uid, gid = 4242, 4243
	volume := func(t *testing.T) string {
		vol := t.TempDir()
		if err := os.Chown(vol, uid, gid); err != nil {
			t.Fatal(err)
		}
		return vol
	}
	checkOwned := func(t *testing.T, dir string) {
		t.Helper()
		entries, err := os.ReadDir(dir)
		if err != nil || len(entries) == 0 {
			t.Fatalf("%s: %v, %d entries", dir, err, len(entries))
		}
		paths := []string{dir}
		for _, e := range entries {
			paths = append(paths, filepath.Join(dir, e.Name()))
		}
		for _, p := range paths {
			fi, err := os.Lstat(p)
			if err != nil {
				t.Fatal(err)
			}
			if st := fi.Sys().(*syscall.Stat_t); st.Uid != uid || st.Gid != gid {
				t.Errorf("%s owned by %d:%d, want %d:%d", p, st.Uid, st.Gid, uid, gid)
			}
		}
	}
	t.Run("root", func(t *testing.T) {
		r := h.run(t, volume(t), append([]string{"--privileged"}, h.rt...), "run", "timer-only", "--duration", "1s")
		dir, _ := r.summary(t, "timer-only")
		checkOwned(t, dir)
		for _, w := range []string{
			"in this container (podman); on the host " + dir,
			fmt.Sprintf("given to uid %d gid %d, the owner of /results", uid, gid),
		} {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
			}
		}
	})
	t.Run("user", func(t *testing.T) {
		flags := append([]string{"--user", fmt.Sprintf("%d:%d", uid, gid), "--cap-add", "SYS_NICE", "--cap-add", "IPC_LOCK"}, h.rt...)
		r := h.run(t, volume(t), flags, "run", "timer-only", "--duration", "1s", "--set", "cpu_dma_latency=-1")
		dir, s := r.summary(t, "timer-only")
		checkRealTime(t, s, false)
		checkOwned(t, dir)
		if !strings.Contains(r.stderr, "on the host "+dir) || strings.Contains(r.stderr, "given to uid") {
			t.Errorf("stderr:\n%s", r.stderr)
		}
	})
}

// TestContainerfilesAgree: the two Containerfiles make the image the same
// way: both build the tree with deploy/rootfs.sh, and their final stages
// are the same line for line but for COPY's source.
func TestContainerfilesAgree(t *testing.T) {
	final := func(file, copyFrom string) []string {
		b, err := os.ReadFile(filepath.Join("..", file))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		i := slices.Index(lines, "FROM scratch")
		if i < 0 {
			t.Fatalf("%s: no FROM scratch stage", file)
		}
		var out []string
		for _, l := range lines[i:] {
			if strings.HasPrefix(l, "COPY ") {
				if l != "COPY "+copyFrom+" /" {
					t.Errorf("%s: %q, want COPY %s /", file, l, copyFrom)
				}
				l = "COPY <tree> /"
			}
			out = append(out, l)
		}
		return out
	}
	two := final("Containerfile", "--from=build /rootfs/")
	pre := final("Containerfile.prebuilt", "rootfs/")
	if diff := cmp.Diff(two, pre); diff != "" {
		t.Errorf("final stages differ (-Containerfile +Containerfile.prebuilt):\n%s", diff)
	}
	b, _ := os.ReadFile("../Containerfile")
	if !strings.Contains(string(b), `RUN sh deploy/rootfs.sh /rootfs "${VERSION}"`) {
		t.Error("deploy/Containerfile does not build its tree with deploy/rootfs.sh")
	}
	mk, _ := os.ReadFile("../../Makefile")
	if !strings.Contains(string(mk), "sh deploy/rootfs.sh $(IMAGE_CTX)/rootfs $(VERSION)") {
		t.Error("make image does not build its tree with deploy/rootfs.sh")
	}
}
