// Package ansible holds no Go code: this folder is rtload's Ansible role
// (roles/rtload) and playbook (site.yml), which install rtload on every host
// of an inventory, optionally boot a named kernel, run a scenario (or check
// a baseline) with per-host overrides, fetch each results directory to
// <fleet dir>/<host>/<kernel>/ and run `rtload compare` over all of them.
// The role treats hosts as untrusted (issue 23): its own modules
// (roles/rtload/library, Python, stdlib only) check a host's kernel release
// before it names a controller path, unpack fetched archives refusing links
// and special files, check baselines before they are copied, and make the
// host's working directory root's alone.
//
// The package's tests run the playbook for real: they build hosts as
// network namespaces of their own (veth pairs from the root namespace,
// addresses in 198.19.0.0/16, inside the benchmarking range 198.18.0.0/15),
// some with mount namespaces of their own too (a filesystem and a user
// database of their own, a sudoer, a lying uname, a working directory made
// first by another user), start sshd in each with throwaway keys, and check
// what comes back over SSH; and they run the role's modules and its Pack
// step on crafted input. They need root, ansible-playbook, sshd and sudo,
// and skip naming what is missing.
package ansible
