// Package ansible holds no Go code: this folder is rtload's Ansible role
// (roles/rtload) and playbook (site.yml), which install rtload on every host
// of an inventory, optionally boot a named kernel, run a scenario with
// per-host overrides, fetch each results directory to
// <fleet dir>/<host>/<kernel>/ and run `rtload compare` over all of them.
//
// The package's test runs the playbook for real: it builds three hosts as
// network namespaces of its own (veth pairs from the root namespace,
// addresses in 198.19.0.0/16, inside the benchmarking range 198.18.0.0/15),
// starts sshd in each with throwaway keys, and checks what comes back over
// SSH. It needs root, ansible-playbook and sshd, and skips naming what is
// missing.
package ansible
