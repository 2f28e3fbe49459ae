// Package udp owns UDP socket groups on loopback: Open binds Count
// non-blocking sockets (raw fds, never registered with the Go netpoller),
// the Receivers (RecvFrom, RecvMsg, RecvMMsg) make one raw recv call each
// into buffers preallocated at construction, and Sender delivers paced
// messages with sendmmsg(2) through a github.com/mdlayher/socket control
// socket.
//
// Every message carries a Header: a per-socket sequence number and the
// CLOCK_MONOTONIC send time, so loss, reordering and one-way delay are known.
package udp
