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
}

// TestPlaybookOverSSH runs site.yml against three hosts in network
// namespaces of their own over real SSH, plus one that refuses
// connections, and then in check mode with a kernel to boot.
func TestPlaybookOverSSH(t *testing.T) {
	testutil.Requires(t, testutil.Root, testutil.Cap("CAP_SYS_ADMIN"), testutil.Cap("CAP_NET_ADMIN"), testutil.Cap("CAP_SYS_NICE"), testutil.CPUs(2))
	requireTools(t, "ansible-playbook", sshdPath, "ssh", "ssh-keygen", "tar", "go")
	f := newFleet(t, 3)

	res := filepath.Join(f.dir, "results")
	inv := f.inventory(t, "inventory.yml", map[string]map[string]any{
		// Refuses connections: a host down must not cost the others.
		"down": {"ansible_host": f.hosts[0].addr.String(), "ansible_port": sshPort + 1},
	})
	// rtload_fail_on: the controller's compare gets --fail-on slower; its
	// verdict over two hosts' timer-only runs (0, 1 or 125) is the
	// machine's, and only recorded. (rtload check on a host, with
	// rtload_check_baseline, needs a baseline results directory: not
	// covered here.)
	out, rc := f.playbook(t, "-i", inv, "-e", "rtload_results_dir="+res, "-e", "rtload_fail_on=slower")
	// The last task fails the run because "down" produced nothing, after
	// every result and status was written.
	if rc != 2 || !strings.Contains(out, "1 of 4 hosts without usable results: down: unreachable") {
		t.Fatalf("ansible-playbook: exit %d, want 2 with down reported unreachable:\n%s", rc, out)
	}
	f.checkResults(t, res)

	// Check mode, booting fakeKernel: host0 would reboot into it (the GRUB
	// entry is looked up in testdata/grub.cfg for real), host2 already runs
	// the kernel it is given, and nothing is written anywhere.
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
	inv = f.inventory(t, "inventory-check.yml", map[string]map[string]any{
		"host0": bootVars, "host2": {"rtload_kernel": f.kernel},
	})
	checkRes := filepath.Join(f.dir, "results-check")
	out, rc = f.playbook(t, "-i", inv, "--check", "--limit", "host0,host2", "-e", "rtload_results_dir="+checkRes)
	if rc != 0 {
		t.Fatalf("ansible-playbook --check: exit %d:\n%s", rc, out)
	}
	const entry = "gnulinux-advanced-0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d>gnulinux-" + fakeKernel + "-advanced-0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
	for _, h := range []string{"host0"} {
		if want := h + ": boot " + fakeKernel + " once via grub-reboot " + entry; !strings.Contains(out, want) {
			t.Errorf("check mode: no %q in the output:\n%s", want, out)
		}
	}
	want := map[string]string{"host0": "changed", "host2": "skipping"}
	if diff := cmp.Diff(want, taskResults(out, "Reboot into "+fakeKernel)); diff != "" {
		t.Errorf("check mode: reboot task per host (-want +got):\n%s\n%s", diff, out)
	}
	if _, err := os.Stat(checkRes); !os.IsNotExist(err) {
		t.Errorf("check mode wrote %s (stat: %v)", checkRes, err)
	}
}

// newFleet builds rtload and n namespace hosts with sshd running.
func newFleet(t *testing.T, n int) *fleet {
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
	authorized := filepath.Join(f.dir, "authorized_keys")
	if err := os.WriteFile(authorized, []byte(keygen(t, f.key)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	privsepDir(t)
	subnet := freeSubnet(t)
	var known strings.Builder
	for i := 0; i < n; i++ {
		h := startHost(t, i, subnet, f.dir, authorized)
		f.hosts = append(f.hosts, h)
		fmt.Fprintf(&known, "[%s]:%d %s\n", h.addr, sshPort, h.pub)
	}
	f.known = filepath.Join(f.dir, "known_hosts")
	if err := os.WriteFile(f.known, []byte(known.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
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
		t.Skipf("missing tools: %s (.ci/run installs them: apt-get install ansible-core openssh-server)", strings.Join(missing, ", "))
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
// hosts plus extra, whose variables are merged into the hosts' of the same
// name or make a new host.
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
	}
	for host, vars := range extra {
		if hosts[host] == nil {
			hosts[host] = map[string]any{}
		}
		for k, v := range vars {
			hosts[host][k] = v
		}
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

// playbook runs ansible-playbook site.yml with args (at most 4 minutes),
// four hosts at a time but rtload on one at a time (rtload_throttle: 1 in
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
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ansible-playbook", append([]string{"site.yml", "--forks", "4"}, args...)...)
	cmd.Env = append(os.Environ(),
		"HOME="+home,
		"ANSIBLE_CONFIG="+cfg, // not /etc/ansible/ansible.cfg nor ~/.ansible.cfg
		"ANSIBLE_HOME="+filepath.Join(home, ".ansible"),
		"ANSIBLE_LOCAL_TEMP="+filepath.Join(home, "tmp"),
		"ANSIBLE_SSH_ARGS=-o ControlMaster=auto -o ControlPersist=2s", // masters exit 2 s after the last task, or with sshd
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
		t.Fatalf("ansible-playbook did not finish in 4 minutes:\n%s", buf.String())
	}
	if err != nil && cmd.ProcessState == nil {
		t.Fatalf("ansible-playbook: %v", err)
	}
	return buf.String(), cmd.ProcessState.ExitCode()
}

// status is the part of the playbook's status.json the test checks.
type status struct {
	Hosts []struct {
		Host    string   `json:"host"`
		Kernel  string   `json:"kernel"`
		State   string   `json:"state"`
		Results string   `json:"results"`
		Label   string   `json:"label"`
		Argv    []string `json:"argv"`
		Gate    string   `json:"gate"`
		Msg     string   `json:"msg"`
	} `json:"hosts"`
	Compared []string `json:"compared"`
	Gate     string   `json:"gate"`
}

// checkResults checks the fleet directory res after the real run: one
// results directory per namespace host under <host>/<kernel>/, each run
// with its host's reader CPU, "down" reported unreachable, and a compare
// with one column per host.
func (f *fleet) checkResults(t *testing.T, res string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(res, "status.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st status
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("status.json: %v\n%s", err, b)
	}
	states := map[string]string{}
	var labels []string
	for i, h := range f.hosts {
		labels = append(labels, h.name+"@"+f.kernel)
		dir := filepath.Join(res, h.name, f.kernel)
		var summary map[string]any
		if b, err := os.ReadFile(filepath.Join(dir, "summary.json")); err != nil {
			t.Errorf("%s: %v", h.name, err)
		} else if err := json.Unmarshal(b, &summary); err != nil || len(summary) == 0 {
			t.Errorf("%s: summary.json: %v (%d fields)", h.name, err, len(summary))
		}
		if _, err := os.Stat(filepath.Join(h.dir, "bin", "rtload")); err != nil {
			t.Errorf("%s: rtload not installed: %v", h.name, err)
		}
		for _, s := range st.Hosts {
			if s.Host != h.name {
				continue
			}
			if s.Results != dir || s.Kernel != f.kernel {
				t.Errorf("%s: status results %q kernel %q, want %q, %q", h.name, s.Results, s.Kernel, dir, f.kernel)
			}
			if cpu := fmt.Sprintf("--set=readers[0].cpu=%d", i%2); !slices.Contains(s.Argv, cpu) {
				t.Errorf("%s: ran %q, want %s in it", h.name, s.Argv, cpu)
			}
		}
	}
	gates := map[string]string{}
	for _, s := range st.Hosts {
		states[s.Host] = s.State
		gates[s.Host] = s.Gate
	}
	wantGates := map[string]string{"host0": "none", "host1": "none", "host2": "none", "down": ""}
	if diff := cmp.Diff(wantGates, gates); diff != "" || !strings.HasPrefix(st.Gate, "compare --fail-on slower: exit ") {
		t.Errorf("status.json gates (-want +got):\n%s\nfleet gate %q", diff, st.Gate)
	}
	want := map[string]string{"host0": "ok", "host1": "ok", "host2": "ok", "down": "unreachable"}
	if diff := cmp.Diff(want, states); diff != "" {
		t.Errorf("status.json states (-want +got):\n%s\n%s", diff, b)
	}
	if diff := cmp.Diff(labels, st.Compared); diff != "" {
		t.Errorf("compared labels (-want +got):\n%s", diff)
	}
	if txt, err := os.ReadFile(filepath.Join(res, "status.txt")); err != nil {
		t.Error(err)
	} else {
		t.Logf("status.txt:\n%s", txt)
	}
	cmpOut, err := os.ReadFile(filepath.Join(res, "compare.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// Three labelled columns: a table header naming the three hosts in order.
	header := regexp.MustCompile(`(?m)^.*` + strings.Join(quoteAll(labels), `\s*\|\s*`) + `\s*$`)
	if !header.Match(cmpOut) || strings.Contains(string(cmpOut), "down@") {
		t.Errorf("compare.txt has no header with columns %s (and none for down):\n%s", strings.Join(labels, " | "), cmpOut)
	}
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
