package ansible

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rtload/rtload/internal/testutil"
)

func TestMain(m *testing.M) { testutil.Main(m) }

// fakeKernel is the kernel the check-mode run is asked to boot; its entry
// is in testdata/grub.cfg.
const fakeKernel = "6.99.0-rtload-test"

// fleet is the test's controller side: the hosts, the keys and the
// environment ansible-playbook runs in.
type fleet struct {
	dir    string // the test's temp dir
	bin    string // rtload built for the test
	key    string // client private key
	known  string // known_hosts naming each host's throwaway key
	hosts  []*nsHost
	kernel string // uname -r of this machine (every host runs it)
	// secret is a controller-side file (root, 0600) that no host may ever
	// read or make the controller copy: hostile hosts link to it.
	secret, secretText string
}

// hostSpec is one host to start: its inventory name, a filesystem of its
// own (nil: the machine's) and its inventory variables beyond the common
// ones (see inventory).
type hostSpec struct {
	name string
	own  *ownFS
	vars map[string]any
}

// The fleet's hosts (besides "down", which refuses connections). The good
// ones run rtload check against a baseline each, whose verdict is certain
// whatever the machine does (see baselines):
//
//	host0       root, the machine's filesystem; check: not slower, 0
//	host1       a filesystem of its own (/var/lib, /var/tmp, /usr/local/bin,
//	            /home and the user database), the role's default
//	            directories, a non-root login that becomes root with sudo;
//	            check: slower, 1
//	host2       rtload installed from a release archive; check against a
//	            baseline without wakeup logs (an A/A): 0 or 125
//	host3       a baseline holding a link to a controller file: refused on
//	            the controller, nothing copied (invalid)
//	evil-links  a compromised rtload that plants a link to a controller file,
//	            a FIFO and a hard link in its results (a plain rtload run)
//	evil-uname  a uname that prints ../../escaped
//	evil-dir    its /var/tmp/rtload made first by another user (uid 65534),
//	            with links named like the archives Pack writes
//	evil-files  a compromised rtload whose summary.json spells "readers"
//	            with a long s: fetched, then refused by the controller's
//	            compare, the host marked and left out of the fleet's compare
const (
	sudoer      = "rtlfleet" // host1's login user, in host1's mount namespace only
	evilUname   = "../../escaped"
	evilDirUID  = 65534
	archiveRoot = "rtload-test" // the release archive's top directory
)

// TestPlaybookOverSSH runs site.yml over real SSH against the hosts above
// (each in network namespaces of its own, some in mount namespaces too),
// plus one that refuses connections, and then in check mode with a kernel
// to boot.
func TestPlaybookOverSSH(t *testing.T) {
	testutil.Requires(t, testutil.System, testutil.Root, testutil.Cap("CAP_SYS_ADMIN"), testutil.Cap("CAP_NET_ADMIN"), testutil.Cap("CAP_SYS_NICE"), testutil.CPUs(2))
	requireTools(t, "ansible-playbook", sshdPath, "ssh", "ssh-keygen", "tar", "go", "sudo", "mount")
	reapLeftovers(t)
	_, machineVarLib := os.Lstat("/var/lib/rtload") // the default rtload_remote_dir: host1's alone
	f := newFleet(t)
	victim := filepath.Join(f.dir, "victim")
	writeFile(t, victim, "a root-owned file Pack must never write through a link\n", 0o600)
	base := f.baselines(t)
	f.start(t,
		hostSpec{name: "host0", vars: map[string]any{"rtload_check_baseline": base.slow}},
		hostSpec{name: "host1", own: f.sudoerFS(t, "host1"), vars: map[string]any{
			"ansible_user": sudoer, "rtload_become": true, "rtload_check_baseline": base.fast,
			// The role's defaults: /usr/local/bin and /var/lib/rtload, in host1's own mounts.
			"rtload_install_dir": nil, "rtload_remote_dir": nil, "ansible_remote_tmp": nil}},
		hostSpec{name: "host2", vars: map[string]any{"rtload_check_baseline": base.nolog,
			"rtload_archive": f.releaseArchive(t), "rtload_archive_member": archiveRoot + "/rtload",
			"rtload_bin": "/nonexistent/rtload"}}, // proves the archive's binary is the one installed
		hostSpec{name: "host3", vars: map[string]any{"rtload_check_baseline": base.linky}},
		hostSpec{name: "evil-links", vars: map[string]any{"rtload_bin": f.evilRtload(t)}},
		hostSpec{name: "evil-uname", own: f.unameFS(t, "evil-uname", evilUname)},
		hostSpec{name: "evil-dir", own: plantedDirFS(victim), vars: map[string]any{"rtload_remote_dir": "/var/tmp/rtload"}},
		hostSpec{name: "evil-files", vars: map[string]any{"rtload_bin": f.foldedRtload(t)}},
	)

	res := filepath.Join(f.dir, "results")
	inv := f.inventory(t, "inventory.yml", map[string]map[string]any{
		// Refuses connections: a host down must not cost the others.
		"down": {"ansible_host": f.hosts[0].addr.String(), "ansible_port": sshPort + 1},
	})
	// rtload_fail_on: the controller's compare gets --fail-on slower; its
	// verdict (0, 1 or 125) is recorded in status.json.
	out, rc := f.playbook(t, "-i", inv, "-e", "rtload_results_dir="+res, "-e", "rtload_fail_on=slower")
	// The last task fails the run because six hosts produced nothing
	// usable, after every result and status was written; host1 (slower)
	// and host2 (its A/A check) have results.
	if want := "6 of 9 hosts without usable results: down: unreachable, evil-dir: rejected, evil-files: rejected, evil-links: rejected, evil-uname: rejected, host3: invalid"; rc != 2 || !strings.Contains(out, want) {
		t.Errorf("ansible-playbook: exit %d, want 2 and %q:\n%s", rc, want, out)
	}
	verdicts := f.checkVerdicts(t, res)
	st := f.checkResults(t, res, verdicts)
	f.checkChecks(t, st, res, base, verdicts)
	f.checkHostile(t, res, st, victim)
	f.checkOwnFS(t, machineVarLib)
	f.checkArchive(t)

	f.checkMode(t)
}

// TestBootsOverSSH runs the role's boots mode (issue 32 item 4) over real
// SSH against one namespace host: in check mode (the ABBA plan and each
// step's boot command, GRUB and kexec, as it would run them), then for
// real with rtload_boot_method "current" (the host cannot reboot: its
// sessions share this boot), pooling the sessions of both sides into the
// host's verdict.
func TestBootsOverSSH(t *testing.T) {
	testutil.Requires(t, testutil.System, testutil.Root, testutil.Cap("CAP_SYS_ADMIN"), testutil.Cap("CAP_NET_ADMIN"), testutil.Cap("CAP_SYS_NICE"), testutil.CPUs(2))
	requireTools(t, "ansible-playbook", sshdPath, "ssh", "ssh-keygen", "tar", "go", "sudo", "mount")
	reapLeftovers(t)
	f := newFleet(t)
	f.start(t, hostSpec{name: "host0"})
	f.checkModeBoots(t)
	f.checkBoots(t)
}

// checkModeBoots runs boots mode in check mode on host0 (issue 32 item
// 4): two sides of one kernel, hardened_usercopy on by the GRUB entry
// and off by kexec, two boots each: the plan names the ABBA order and
// each step's boot command, as it would run them.
func (f *fleet) checkModeBoots(t *testing.T) {
	t.Helper()
	boot := filepath.Join(f.dir, "boot-boots")
	grub, err := os.ReadFile("testdata/grub.cfg")
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"vmlinuz-" + fakeKernel: "", "initrd.img-" + fakeKernel: "", "grub/grub.cfg": string(grub),
		"default-grub": "GRUB_TIMEOUT=5\nGRUB_DEFAULT=saved\n"} {
		writeFile(t, filepath.Join(boot, name), data, 0o644)
	}
	vars := map[string]any{"rtload_boot_dir": boot, "rtload_grub_cfg": filepath.Join(boot, "grub/grub.cfg"),
		"rtload_grub_default": filepath.Join(boot, "default-grub"), "rtload_boots_per_side": 2,
		"rtload_boot_sides": []map[string]any{
			{"name": "hard", "kernel": fakeKernel, "scenario": "laight-450-hardened"},
			{"name": "unhard", "kernel": fakeKernel, "scenario": "laight-450-unhardened", "cmdline": []string{"hardened_usercopy=off"}},
		}}
	inv := f.inventory(t, "inventory-boots-check.yml", map[string]map[string]any{"host0": vars})
	res := filepath.Join(f.dir, "results-boots-check")
	out, rc := f.playbook(t, "-i", inv, "--check", "--limit", "host0", "-e", "rtload_results_dir="+res)
	if rc != 0 {
		t.Fatalf("ansible-playbook --check (boots): exit %d:\n%s", rc, out)
	}
	const entry = "gnulinux-advanced-0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d>gnulinux-" + fakeKernel + "-advanced-0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
	kexec := regexp.MustCompile(`host0: boot ` + regexp.QuoteMeta(fakeKernel) + ` once via kexec -l ` + regexp.QuoteMeta(filepath.Join(boot, "vmlinuz-"+fakeKernel)) +
		` --initrd=` + regexp.QuoteMeta(filepath.Join(boot, "initrd.img-"+fakeKernel)) + ` --append=[^"]* hardened_usercopy=off( --[^"]*)? \(running `)
	for _, want := range []string{"host0: 4 boots in ABBA order: hard unhard unhard hard", "host0: boot " + fakeKernel + " once via grub-reboot " + entry} {
		if n := strings.Count(out, want); n < 1 {
			t.Errorf("check mode (boots): no %q in the output:\n%s", want, out)
		}
	}
	if n := len(kexec.FindAllString(out, -1)); n != 2 {
		t.Errorf("check mode (boots): %d kexec steps, want 2 (%s):\n%s", n, kexec, out)
	}
	if _, err := os.Stat(res); !os.IsNotExist(err) {
		t.Errorf("check mode wrote %s (stat: %v)", res, err)
	}
}

// checkBoots runs boots mode for real on host0 with rtload_boot_method
// "current" (a namespace host cannot reboot: every session runs on this
// boot): two sides of timer-only, two sessions each in ABBA order, each
// side fetched as a sessions directory, and the controller's pooled
// verdict (the session the unit) in the host's status.
func (f *fleet) checkBoots(t *testing.T) {
	t.Helper()
	vars := map[string]any{"rtload_boot_method": "current", "rtload_boots_per_side": 2, "rtload_duration": "300ms",
		"rtload_boot_sides": []map[string]any{{"name": "a"}, {"name": "b"}}}
	inv := f.inventory(t, "inventory-boots.yml", map[string]map[string]any{"host0": vars})
	res := filepath.Join(f.dir, "results-boots")
	out, rc := f.playbook(t, "-i", inv, "--limit", "host0", "-e", "rtload_results_dir="+res)
	if rc != 0 {
		t.Fatalf("ansible-playbook (boots): exit %d:\n%s", rc, out)
	}
	_, byHost, txt := readStatus(t, res)
	s := byHost["host0"]
	if !strings.HasPrefix(s.Gate, "pooled 4 boots (a vs b, ABBA): compare --fail-on slower: exit ") || !slices.Contains([]string{"ok", "cannot-judge", "slower"}, s.State) {
		t.Errorf("host0: state %q, gate %q", s.State, s.Gate)
	}
	if !strings.Contains(s.Msg, "n = 2 sessions × 1 process × ") || !strings.Contains(txt, "pooled 4 boots") {
		t.Errorf("host0: the pooled verdict's n is not in sessions: %q\n%s", s.Msg, txt)
	}
	for _, side := range []string{"a", "b"} {
		b, err := os.ReadFile(filepath.Join(res, "host0", side, "sessions.json"))
		if err != nil {
			t.Errorf("side %s: %v", side, err)
			continue
		}
		var idx struct {
			Sessions []struct{ Dir string } `json:"sessions"`
		}
		if err := json.Unmarshal(b, &idx); err != nil || len(idx.Sessions) != 2 {
			t.Errorf("side %s: %d sessions (%v), want 2:\n%s", side, len(idx.Sessions), err, b)
		}
	}
}

// checkMode runs the playbook in check mode, booting fakeKernel: host0
// would reboot into it (the GRUB entry is looked up in testdata/grub.cfg
// for real), host1 already runs the kernel it is given, and nothing is
// written anywhere.
func (f *fleet) checkMode(t *testing.T) {
	t.Helper()
	boot := filepath.Join(f.dir, "boot")
	grub, err := os.ReadFile("testdata/grub.cfg")
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"vmlinuz-" + fakeKernel: nil, "grub/grub.cfg": grub, "default-grub": []byte("GRUB_TIMEOUT=5\nGRUB_DEFAULT=saved\n"),
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(boot, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(boot, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bootVars := map[string]any{"rtload_kernel": fakeKernel, "rtload_boot_dir": boot,
		"rtload_grub_cfg": filepath.Join(boot, "grub/grub.cfg"), "rtload_grub_default": filepath.Join(boot, "default-grub")}
	inv := f.inventory(t, "inventory-check.yml", map[string]map[string]any{
		"host0": bootVars, "host1": {"rtload_kernel": f.kernel},
	})
	checkRes := filepath.Join(f.dir, "results-check")
	out, rc := f.playbook(t, "-i", inv, "--check", "--limit", "host0,host1", "-e", "rtload_results_dir="+checkRes)
	if rc != 0 {
		t.Fatalf("ansible-playbook --check: exit %d:\n%s", rc, out)
	}
	const entry = "gnulinux-advanced-0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d>gnulinux-" + fakeKernel + "-advanced-0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
	if want := "host0: boot " + fakeKernel + " once via grub-reboot " + entry; !strings.Contains(out, want) {
		t.Errorf("check mode: no %q in the output:\n%s", want, out)
	}
	want := map[string]string{"host0": "changed", "host1": "skipping"}
	if diff := cmp.Diff(want, taskResults(out, "Reboot into "+fakeKernel)); diff != "" {
		t.Errorf("check mode: reboot task per host (-want +got):\n%s\n%s", diff, out)
	}
	if _, err := os.Stat(checkRes); !os.IsNotExist(err) {
		t.Errorf("check mode wrote %s (stat: %v)", checkRes, err)
	}
}

// newFleet builds rtload, the client key and the controller's secret.
func newFleet(t *testing.T) *fleet {
	t.Helper()
	f := &fleet{dir: t.TempDir()}
	if err := os.Chmod(f.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		t.Fatal(err)
	}
	f.kernel = strings.TrimSpace(string(b))
	f.bin = buildRtload(t, filepath.Join(f.dir, "bin", "rtload"))
	f.key = filepath.Join(f.dir, "id_ed25519")
	keygen(t, f.key)
	f.secret = filepath.Join(f.dir, "controller-secret")
	f.secretText = fmt.Sprintf("rtload-fleet-test-secret-%d-%d", os.Getpid(), time.Now().UnixNano())
	writeFile(t, f.secret, f.secretText+"\n", 0o600)
	return f
}

// start starts the hosts with sshd running, each accepting the client key.
func (f *fleet) start(t *testing.T, specs ...hostSpec) {
	t.Helper()
	pub, err := os.ReadFile(f.key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	authorized := filepath.Join(f.dir, "authorized_keys")
	writeFile(t, authorized, string(pub), 0o644) // read by host1's non-root login too
	privsepDir(t)
	subnet := freeSubnet(t)
	var known strings.Builder
	for i, s := range specs {
		h := startHost(t, i, s.name, s.own, subnet, f.dir, authorized)
		h.vars = s.vars
		f.hosts = append(f.hosts, h)
		fmt.Fprintf(&known, "[%s]:%d %s\n", h.addr, sshPort, h.pub)
	}
	f.known = filepath.Join(f.dir, "known_hosts")
	writeFile(t, f.known, known.String(), 0o600)
}

// host returns the host named name.
func (f *fleet) host(name string) *nsHost {
	for _, h := range f.hosts {
		if h.name == name {
			return h
		}
	}
	panic("no host " + name)
}

// writeFile writes data to path with mode (exactly: the umask is undone).
func writeFile(t *testing.T, path, data string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// requireTools skips t naming every tool not found.
func requireTools(t *testing.T, tools ...string) {
	t.Helper()
	var missing []string
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) > 0 {
		t.Skipf("missing tools: %s (.ci/run installs them: apt-get install ansible-core openssh-server sudo)", strings.Join(missing, ", "))
	}
}

// buildRtload builds cmd/rtload (the module root is two levels up) to out.
func buildRtload(t *testing.T, out string) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/rtload")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/rtload: %v\n%s", err, b)
	}
	return out
}

// inventory writes an inventory (JSON, which YAML reads) of the fleet's
// hosts with their own variables, plus extra, whose variables are merged
// into the hosts' of the same name or make a new host. A nil value removes
// a variable (the role's default then applies).
func (f *fleet) inventory(t *testing.T, name string, extra map[string]map[string]any) string {
	t.Helper()
	hosts := map[string]map[string]any{}
	for i, h := range f.hosts {
		hosts[h.name] = map[string]any{
			"ansible_host":       h.addr.String(),
			"ansible_remote_tmp": filepath.Join(h.dir, "ansible-tmp"),
			"rtload_install_dir": filepath.Join(h.dir, "bin"),
			"rtload_remote_dir":  filepath.Join(h.dir, "work"),
			"rtload_reader_cpu":  i % 2, // per-host override: host0 CPU 0, host1 CPU 1, …
		}
		merge(hosts[h.name], h.vars)
	}
	for host, vars := range extra {
		if hosts[host] == nil {
			hosts[host] = map[string]any{}
		}
		merge(hosts[host], vars)
	}
	inv := map[string]any{"all": map[string]any{
		"vars": map[string]any{
			"ansible_user":                 "root",
			"ansible_port":                 sshPort,
			"ansible_ssh_private_key_file": f.key,
			"ansible_ssh_common_args": "-F /dev/null -o UserKnownHostsFile=" + f.known +
				" -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes -o IdentitiesOnly=yes -o BatchMode=yes",
			"ansible_python_interpreter": "/usr/bin/python3",
			"rtload_bin":                 f.bin,
			"rtload_scenario":            "timer-only", // one SCHED_FIFO reader, no sockets
			"rtload_duration":            "1s",
			"rtload_throttle":            1,
			// A check's first look comes after a fifth of its budget
			// (5 m by default: a minute of timer-only processes per
			// checking host, more on a busy machine). The forged
			// baselines are 1000 times apart, decided at any look.
			"rtload_check_args": []string{"--budget=20s"},
		},
		"hosts": hosts,
	}}
	b, err := json.MarshalIndent(inv, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(f.dir, name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// merge sets dst[k] = v for each of src, deleting k where v is nil.
func merge(dst, src map[string]any) {
	for k, v := range src {
		if v == nil {
			delete(dst, k)
		} else {
			dst[k] = v
		}
	}
}

// playbookLimit bounds one ansible-playbook run. A run takes about a
// minute on a quiet 2-core machine; with other tests' busy loops holding
// the load average at 25-35, each host's task costs a few seconds even to
// be skipped (Ansible forks a worker per host and task), and the fleet
// run took 4-5 minutes.
const playbookLimit = 7 * time.Minute

// playbook runs ansible-playbook site.yml with args (at most playbookLimit,
// and never past a minute before go test's -timeout),
// eight hosts at a time but rtload on one at a time (rtload_throttle: 1 in
// the inventory) so that the hosts' SCHED_FIFO readers do not compete for
// the CPUs, with every file Ansible keeps under the test's temp dir.
// It returns the output and the exit code.
func (f *fleet) playbook(t *testing.T, args ...string) (string, int) {
	t.Helper()
	home := filepath.Join(f.dir, "home")
	if err := os.MkdirAll(filepath.Join(home, "tmp"), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(f.dir, "ansible.cfg")
	if err := os.WriteFile(cfg, []byte("[defaults]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	limit := playbookLimit
	if d, ok := t.Deadline(); ok && time.Until(d)-time.Minute < limit {
		limit = time.Until(d) - time.Minute // leave go test's -timeout a minute for the hosts' cleanup
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ansible-playbook", append([]string{"site.yml", "--forks", "8"}, args...)...)
	// At the limit the whole process group goes (ansible-playbook's
	// workers and their ssh clients hold its output pipe), and Wait gives
	// up on the pipe 10 s later whatever is left.
	// Pdeathsig: a test binary killed (SIGKILL, a timeout) takes
	// ansible-playbook with it instead of leaving it running.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	cmd.Env = append(os.Environ(),
		"HOME="+home,
		"ANSIBLE_CONFIG="+cfg, // not /etc/ansible/ansible.cfg nor ~/.ansible.cfg
		"ANSIBLE_HOME="+filepath.Join(home, ".ansible"),
		"ANSIBLE_LOCAL_TEMP="+filepath.Join(home, "tmp"),
		// A master outlives the tasks between two of its host's (with eight
		// hosts and one rtload at a time, often more than 2 s), so as not to
		// log in again for every task; it exits with its sshd at the end.
		"ANSIBLE_SSH_ARGS=-o ControlMaster=auto -o ControlPersist=30s",
		"ANSIBLE_PIPELINING=True",
		"ANSIBLE_TIMEOUT=10",
		"ANSIBLE_NOCOLOR=1",
		"ANSIBLE_RETRY_FILES_ENABLED=False",
		"LC_ALL=C.UTF-8",
	)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	start := time.Now()
	err := cmd.Run()
	t.Logf("ansible-playbook %s: %v in %v", strings.Join(args, " "), err, time.Since(start).Round(time.Millisecond))
	if ctx.Err() != nil {
		t.Fatalf("ansible-playbook did not finish in %v:\n%s", limit.Round(time.Second), buf.String())
	}
	if err != nil && cmd.ProcessState == nil {
		t.Fatalf("ansible-playbook: %v", err)
	}
	return buf.String(), cmd.ProcessState.ExitCode()
}

// status is the part of the playbook's status.json the test checks.
type status struct {
	Hosts    []hostStatus `json:"hosts"`
	Compared []string     `json:"compared"`
	Gate     string       `json:"gate"`
}

type hostStatus struct {
	Host    string   `json:"host"`
	Kernel  string   `json:"kernel"`
	State   string   `json:"state"`
	RC      *int     `json:"rc"`
	Results string   `json:"results"`
	Label   string   `json:"label"`
	Argv    []string `json:"argv"`
	Gate    string   `json:"gate"`
	Msg     string   `json:"msg"`
}

// readStatus reads res/status.json and res/status.txt.
func readStatus(t *testing.T, res string) (status, map[string]hostStatus, string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(res, "status.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st status
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("status.json: %v\n%s", err, b)
	}
	byHost := map[string]hostStatus{}
	for _, s := range st.Hosts {
		byHost[s.Host] = s
	}
	txt, err := os.ReadFile(filepath.Join(res, "status.txt"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s:\n%s", filepath.Join(res, "status.txt"), txt)
	return st, byHost, string(txt)
}

// checkResults checks the fleet directory res after the real run: one
// results directory per good host under <host>/<kernel>/, each run with
// its host's reader CPU, its check's verdict as its state and gate, the
// others refused, "down" reported unreachable, every reason in status.txt
// whole, and a compare with one column per good host.
func (f *fleet) checkResults(t *testing.T, res string, verdicts map[string]int) map[string]hostStatus {
	t.Helper()
	st, byHost, txt := readStatus(t, res)
	states, gates := map[string]string{}, map[string]string{}
	for _, s := range st.Hosts {
		states[s.Host], gates[s.Host] = s.State, s.Gate
	}
	checkState := map[int]string{0: "ok", 1: "slower", 125: "cannot-judge"}
	want := map[string]string{"host0": checkState[verdicts["host0"]], "host1": checkState[verdicts["host1"]], "host2": checkState[verdicts["host2"]],
		"host3": "invalid", "down": "unreachable", "evil-links": "rejected", "evil-uname": "rejected", "evil-dir": "rejected", "evil-files": "rejected"}
	if diff := cmp.Diff(want, states); diff != "" {
		t.Errorf("status.json states (-want +got):\n%s\n%+v", diff, st)
	}
	var labels []string
	for i, h := range f.hosts[:3] { // host0, host1, host2
		labels = append(labels, h.name+"@"+f.kernel)
		dir := filepath.Join(res, h.name, f.kernel)
		var summary map[string]any
		if b, err := os.ReadFile(filepath.Join(dir, "summary.json")); err != nil {
			t.Errorf("%s: %v", h.name, err)
		} else if err := json.Unmarshal(b, &summary); err != nil || len(summary) == 0 {
			t.Errorf("%s: summary.json: %v (%d fields)", h.name, err, len(summary))
		}
		s := byHost[h.name]
		if s.Results != dir || s.Kernel != f.kernel {
			t.Errorf("%s: status results %q kernel %q, want %q, %q", h.name, s.Results, s.Kernel, dir, f.kernel)
		}
		if cpu := fmt.Sprintf("--set=readers[0].cpu=%d", i%2); !slices.Contains(s.Argv, cpu) {
			t.Errorf("%s: ran %q, want %s in it", h.name, s.Argv, cpu)
		}
	}
	if _, err := os.Stat(filepath.Join(f.host("host0").dir, "bin", "rtload")); err != nil {
		t.Errorf("host0: rtload not installed: %v", err)
	}
	wantGates := map[string]string{"host0": fmt.Sprintf("rtload check: exit %d", verdicts["host0"]),
		"host1": fmt.Sprintf("rtload check: exit %d", verdicts["host1"]), "host2": fmt.Sprintf("rtload check: exit %d", verdicts["host2"]),
		"host3": "", "down": "", "evil-links": "none", "evil-uname": "", "evil-dir": "", "evil-files": "none"}
	if diff := cmp.Diff(wantGates, gates); diff != "" || !strings.HasPrefix(st.Gate, "compare --fail-on slower: exit ") {
		t.Errorf("status.json gates (-want +got):\n%s\nfleet gate %q", diff, st.Gate)
	}
	if diff := cmp.Diff(labels, st.Compared); diff != "" {
		t.Errorf("compared labels (-want +got):\n%s", diff)
	}
	checkWhole(t, st, txt)
	checkLines(t, txt, verdicts)
	cmpOut, err := os.ReadFile(filepath.Join(res, "compare.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// Three labelled columns: a table header naming the three hosts in order.
	header := regexp.MustCompile(`(?m)^.*` + strings.Join(quoteAll(labels), `\s*\|\s*`) + `\s*$`)
	if !header.Match(cmpOut) || strings.Contains(string(cmpOut), "down@") || strings.Contains(string(cmpOut), "evil") {
		t.Errorf("compare.txt has no header with columns %s (and none for down or evil-*):\n%s", strings.Join(labels, " | "), cmpOut)
	}
	return byHost
}

// checkWhole checks that status.txt shows each host's reason whole
// (issue 25: "Broken ..." was all that was left of a suggested fix): every
// word of it, in order, with line breaks only where a space was.
func checkWhole(t *testing.T, st status, txt string) {
	t.Helper()
	flat := strings.Join(strings.Fields(txt), " ")
	for _, s := range st.Hosts {
		if s.Msg == "" || s.Results != "" {
			continue
		}
		if m := strings.Join(strings.Fields(s.Msg), " "); !strings.Contains(flat, m) {
			t.Errorf("status.txt does not show %s's reason whole:\n%s\nreason: %s", s.Host, txt, m)
		}
	}
}

// checkHostile checks what the hostile hosts got: nothing of theirs
// reached the controller, nothing of the controller's reached them, and no
// root-owned file was written through their links.
func (f *fleet) checkHostile(t *testing.T, res string, st map[string]hostStatus, victim string) {
	t.Helper()
	// evil-links: the archive holding a link, a FIFO and a hard link is
	// refused whole, naming each; nothing of it is unpacked.
	if s := st["evil-links"]; !containsAll(s.Msg, "refused, nothing unpacked", "a symbolic link", "a FIFO", "a hard link") {
		t.Errorf("evil-links: status msg %q does not name the link, the FIFO and the hard link", s.Msg)
	}
	if _, err := os.Lstat(filepath.Join(res, "evil-links", f.kernel)); !os.IsNotExist(err) {
		t.Errorf("evil-links: its results were unpacked (lstat: %v)", err)
	}
	// evil-uname: refused before anything ran, and nothing exists where
	// "../../escaped" leads from the host's directory.
	if s := st["evil-uname"]; !strings.Contains(s.Msg, `uname -r printed "../../escaped", which is not a kernel release`) {
		t.Errorf("evil-uname: status msg %q", s.Msg)
	}
	for _, p := range []string{"escaped", "escaped.log", "escaped.tar.gz"} {
		if _, err := os.Lstat(filepath.Join(f.dir, p)); !os.IsNotExist(err) {
			t.Errorf("evil-uname: the controller wrote %s outside the fleet directory (lstat: %v)", filepath.Join(f.dir, p), err)
		}
	}
	// evil-dir: its /var/tmp/rtload (uid 65534's) is refused; the victim
	// its links point at is untouched and nothing was written there.
	if s := st["evil-dir"]; !containsAll(s.Msg, "rtload_remote_dir /var/tmp/rtload refused", fmt.Sprintf("owned by uid %d", evilDirUID)) {
		t.Errorf("evil-dir: status msg %q", s.Msg)
	}
	if b, err := os.ReadFile(victim); err != nil || !strings.HasPrefix(string(b), "a root-owned file") {
		t.Errorf("evil-dir: the victim file was written through a planted link (%v): %q", err, b)
	}
	planted, err := os.ReadDir(filepath.Join(f.host("evil-dir").root(), "var/tmp/rtload"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range planted {
		if e.Type()&os.ModeSymlink == 0 {
			t.Errorf("evil-dir: root wrote %s in uid %d's directory", e.Name(), evilDirUID)
		}
	}
	// evil-files: fetched, then refused by the controller's compare (its
	// summary.json spells "readers" with a long s): marked rejected with
	// rtload's reason, and left out of the fleet's compare (checkResults).
	ef := filepath.Join(res, "evil-files", f.kernel)
	if s := st["evil-files"]; !containsAll(s.Msg, "rtload compare refused its results (exit 2): compare evil-files@"+f.kernel+": "+ef+"/summary.json:",
		`key "readerſ" is not "readers", but encoding/json would decode it into that field: refused`) || s.Results != "" {
		t.Errorf("evil-files: status msg %q, results %q", s.Msg, s.Results)
	}
	if _, err := os.Stat(filepath.Join(ef, "summary.json")); err != nil {
		t.Errorf("evil-files: its results were not fetched: %v", err)
	}
	// The whole fleet directory: directories and regular files only, and
	// the controller's secret in none of them.
	f.checkTree(t, res, true)
}

// checkTree walks dir: with special, it holds only directories and regular
// files; and no file holds the controller's secret.
func (f *fleet) checkTree(t *testing.T, dir string, special bool) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		n++
		if n > 100000 {
			return fmt.Errorf("more than 100000 entries")
		}
		switch {
		case d.IsDir():
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if bytes.Contains(b, []byte(f.secretText)) {
				t.Errorf("%s holds the controller's secret", p)
			}
		case special:
			t.Errorf("%s is a %v, not a directory or regular file", p, d.Type())
		}
		return nil
	})
	if err != nil {
		t.Errorf("walk %s: %v", dir, err)
	}
}

// checkOwnFS checks host1, whose filesystem is its own and whose login is
// not root: rtload was installed and run (as root, through sudo) in the
// role's default directories in its mounts, the working directory is
// root's with mode 0700, and the machine's own /var/lib was not touched.
func (f *fleet) checkOwnFS(t *testing.T, machineVarLib error) {
	t.Helper()
	h := f.host("host1")
	if !strings.Contains(h.log.String(), "Accepted publickey for "+sudoer) {
		t.Errorf("host1: no login as %s in sshd's log:\n%s", sudoer, h.log)
	}
	if _, err := os.Stat(filepath.Join(h.root(), "usr/local/bin/rtload")); err != nil {
		t.Errorf("host1: rtload not installed in its /usr/local/bin: %v", err)
	}
	work := filepath.Join(h.root(), "var/lib/rtload")
	checkWorkDir(t, "host1", work)
	runs, _ := filepath.Glob(filepath.Join(work, "timer-only-*", "summary.json"))
	if len(runs) != 1 {
		t.Errorf("host1: %d results directories in its /var/lib/rtload, want 1", len(runs))
	}
	if machineVarLib != nil {
		if _, err := os.Lstat("/var/lib/rtload"); !os.IsNotExist(err) {
			t.Errorf("host1's /var/lib/rtload appeared on the machine (lstat: %v)", err)
		}
	}
	checkWorkDir(t, "host0", filepath.Join(f.host("host0").dir, "work"))
}

// checkWorkDir checks that dir is a directory of root's with mode 0700.
func checkWorkDir(t *testing.T, host, dir string) {
	t.Helper()
	fi, err := os.Lstat(dir)
	if err != nil {
		t.Errorf("%s: %v", host, err)
		return
	}
	if st := fi.Sys().(*syscall.Stat_t); !fi.IsDir() || fi.Mode().Perm() != 0o700 || st.Uid != 0 {
		t.Errorf("%s: %s is %v owned by uid %d, want a directory of root's with mode 0700", host, dir, fi.Mode(), st.Uid)
	}
}

// checkArchive checks host2, which installed the binary from the release
// archive (its rtload_bin does not exist) and left no unpacked files.
func (f *fleet) checkArchive(t *testing.T) {
	t.Helper()
	h := f.host("host2")
	got, err := os.ReadFile(filepath.Join(h.dir, "bin", "rtload"))
	if err != nil {
		t.Fatalf("host2: rtload not installed from the archive: %v", err)
	}
	want, err := os.ReadFile(f.bin)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("host2: the installed rtload (%d bytes) is not the archive's (%d bytes)", len(got), len(want))
	}
	if left, _ := filepath.Glob(filepath.Join(h.dir, "work", "install-*")); len(left) > 0 {
		t.Errorf("host2: the archive's unpack directory was left behind: %q", left)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = regexp.QuoteMeta(s)
	}
	return out
}

// taskResults returns, per host, the result word (ok, changed, skipping,
// fatal, …) that Ansible's default output gives for the task whose name
// (after "TASK [rtload : ") starts with prefix.
func taskResults(out, prefix string) map[string]string {
	res := map[string]string{}
	line := regexp.MustCompile(`^(ok|changed|skipping|fatal|failed|unreachable): \[([^\]\s]+)`)
	in := false
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "TASK [") {
			in = strings.HasPrefix(l, "TASK [rtload : "+prefix)
			continue
		}
		if m := line.FindStringSubmatch(l); in && m != nil {
			res[m[2]] = m[1]
		}
	}
	return res
}
