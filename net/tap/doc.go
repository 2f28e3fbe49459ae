// Package tap owns tap devices and frame injection: Create makes a
// non-persistent tap device (vishvananda/netlink Tuntap, /dev/net/tun
// fds) with an address from 198.18.0.0/15 inside rtload's private network
// namespace; Builder prepares one Ethernet II + IPv4/IPv6 + UDP frame per
// flow whose per-frame update (rtload header and UDP checksum) allocates
// nothing; Injector writes those frames into the tap with one raw write(2)
// each, so the kernel receives them on the device (its rx counters) and
// delivers them to UDP sockets bound to the device's address.
//
// This reproduces seed 004 (Michael S. Tsirkin, "tun: performance
// regression in 2.6.30-rc1"): the cost of a write(2) into a tap fd, which
// depends on whether the kernel builds a linear or a paged skb (frames
// below or above a page).
//
// Namespaces: a tap device is created in the network namespace of the
// thread that opens /dev/net/tun, and /proc/sys/net/... resolves against
// the calling thread's namespace too, so Create must run on a locked OS
// thread that entered the private namespace. Everything else (writes to the
// fds, Stats, Close) works from any thread: the fds and the Device's
// netlink socket stay bound to the namespace they were opened in.
package tap
