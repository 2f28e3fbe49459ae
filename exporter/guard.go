package exporter

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/time/rate"

	"github.com/rtload/rtload/sysinfo"
)

// Limits of the metrics endpoint: what any local user can make a soak's
// process hold through it. During a trial the Go runtime's GC is off (a
// soak's writer collects only once its heap has grown by its headroom), so
// whatever a connection allocates stays until then: the limits bound the
// rate and the size of that garbage, the descriptors, and the time a
// connection is held. A Prometheus scrape is one small GET every few
// seconds on a kept-alive connection, far inside all of them.
const (
	// MaxHeaderBytes bounds a request's header (a Prometheus scrape's is
	// about 400 bytes); past it (and net/http's 4 KiB of slack) the server
	// answers 431 and closes the connection.
	MaxHeaderBytes = 4 << 10
	// MaxBodyBytes bounds a request's body (a scrape has none).
	MaxBodyBytes = 4 << 10
	// ReadHeaderTimeout, ReadTimeout and WriteTimeout bound one request;
	// IdleTimeout a kept-alive connection between requests.
	ReadHeaderTimeout = 2 * time.Second
	ReadTimeout       = 5 * time.Second
	WriteTimeout      = 15 * time.Second // longer than a scrape's own 10 s timeout
	IdleTimeout       = 30 * time.Second
	// MaxConns is the most connections served at once; more wait (the
	// first one accepted, the others in the kernel's listen backlog).
	MaxConns = 8
	// AcceptRate (per second, AcceptBurst at once) bounds the connections
	// handed to the HTTP server: each allocates a few KiB that only the
	// soak's next collection frees.
	AcceptRate  = 10
	AcceptBurst = 4
	// FDReserve is how many descriptors below RLIMIT_NOFILE the endpoint
	// always leaves to the run: it accepts only while more are free, so
	// checkpoints, log chunks and /proc reads never find none.
	FDReserve = 64
	// ListenBacklog bounds the kernel's queue of connections not yet
	// accepted (listen(2)'s backlog, instead of net.core.somaxconn's
	// 4096): each can hold a receive buffer of its sender's data in the
	// kernel, and the dead ones a flood leaves in it are dropped, all at
	// once, at the endpoint's next accept.
	ListenBacklog = 64
	// junkBytes: a connection whose receive queue already holds more than
	// this when it is accepted sent more than any request the server
	// would read (header, net/http's slack and body): it is dropped
	// unread.
	junkBytes = MaxHeaderBytes + 4<<10 + MaxBodyBytes
)

// fdWait is how often Accept looks again for free descriptors when fewer
// than FDReserve are left.
const fdWait = 100 * time.Millisecond

// guardedListener is the endpoint's listener. It accepts connections on
// the raw socket (accept4(2), which allocates nothing in Go) and drops at
// once, with a reset and unread, every one that cannot be a request the
// server would serve: its peer already closed or reset it, or its receive
// queue already holds more than junkBytes (a header past the limit). Those
// cost a few system calls and no Go memory, and take no slot nor token:
// so a flood leaves no backlog of dead connections for a scrape to wait
// behind (accepted one by one at AcceptRate, the dead connections of a 30
// s flood of 1 MiB headers kept scrapes out for 91 s after it ended, issue
// 34). The first other one is accepted and waits for one of MaxConns
// slots, then for the AcceptRate token bucket (rate.Limiter), is checked
// again (it may have died meanwhile) and is handed to the HTTP server;
// later ones wait in the kernel's backlog (ListenBacklog). While fewer
// than FDReserve descriptors are free it accepts nothing. It counts the
// connections accepted, those closed without a request served (dropped,
// over a limit, timed out or not HTTP), the dropped ones and those handed
// to the HTTP server.
type guardedListener struct {
	// file is the listening socket (a dup of Listen's, which is closed):
	// an *os.File, because only a file's RawConn waits for readiness in
	// the netpoller (a net.Listener's RawConn has no Read).
	file   *os.File
	addr   net.Addr
	raw    syscall.RawConn
	slots  chan struct{} // MaxConns: one held by each connection handed on
	lim    *rate.Limiter
	ctx    context.Context
	cancel context.CancelFunc
	proc   *sysinfo.ProcReader // used by Accept only (one goroutine: Serve's)

	// Used by Accept only: the raw accept loop's callback (made once, so
	// that a call allocates nothing), the connection it found alive
	// (candidate), and the accept error that ends it.
	acceptFn  func(uintptr) bool
	candidate int
	acceptErr error
	// inq and peek are dead's buffers for SIOCINQ and MSG_PEEK (fields,
	// so that the raw system calls' pointers allocate nothing).
	inq  int32
	peek [1]byte

	accepted, refused, dropped, handed, requests, fdWaits atomic.Uint64
}

// newGuardedListener takes over ln, a TCP listener (Listen's; it is
// closed, its socket kept), and sets its backlog to ListenBacklog.
func newGuardedListener(ln *net.TCPListener) (*guardedListener, error) {
	f, err := ln.File()
	ln.Close() // the socket stays open through f
	if err != nil {
		return nil, err
	}
	raw, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	var lerr error
	if err := raw.Control(func(fd uintptr) { lerr = syscall.Listen(int(fd), ListenBacklog) }); err != nil || lerr != nil {
		f.Close()
		return nil, fmt.Errorf("listen backlog %d: %w", ListenBacklog, errors.Join(err, os.NewSyscallError("listen", lerr)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &guardedListener{file: f, addr: ln.Addr(), raw: raw, slots: make(chan struct{}, MaxConns), lim: rate.NewLimiter(AcceptRate, AcceptBurst),
		ctx: ctx, cancel: cancel, proc: sysinfo.NewProcReader()}
	l.acceptFn = l.acceptReady
	return l, nil
}

// Accept waits for free descriptors, accepts connections as they come,
// dropping the dead ones (see guardedListener), until one is alive; that
// one waits for a slot and a token, and is returned unless it died
// meanwhile, holding its slot until it is closed.
func (l *guardedListener) Accept() (net.Conn, error) {
	for {
		for !l.fdRoom() {
			l.fdWaits.Add(1)
			t := time.NewTimer(fdWait)
			select {
			case <-l.ctx.Done():
				t.Stop()
				return nil, net.ErrClosed
			case <-t.C:
			}
		}
		l.candidate, l.acceptErr = -1, nil
		if err := l.raw.Read(l.acceptFn); err != nil {
			if l.ctx.Err() != nil {
				return nil, net.ErrClosed
			}
			return nil, err
		}
		if l.acceptErr != nil {
			if errors.Is(l.acceptErr, syscall.EMFILE) || errors.Is(l.acceptErr, syscall.ENFILE) {
				continue // fdRoom waits
			}
			return nil, &net.OpError{Op: "accept", Net: "tcp", Addr: l.addr, Err: os.NewSyscallError("accept4", l.acceptErr)}
		}
		fd := l.candidate
		select {
		case l.slots <- struct{}{}:
		case <-l.ctx.Done():
			syscall.Close(fd)
			return nil, net.ErrClosed
		}
		if err := l.lim.Wait(l.ctx); err != nil {
			<-l.slots
			syscall.Close(fd)
			return nil, net.ErrClosed
		}
		if l.dead(fd) { // while it waited
			<-l.slots
			l.drop(fd)
			continue
		}
		c, err := l.wrap(fd)
		if err != nil {
			<-l.slots
			continue
		}
		l.handed.Add(1)
		return c, nil
	}
}

// acceptReady is the raw accept loop, run by RawConn.Read with the
// listening socket: it accepts every queued connection, drops each dead
// one, and stops at the first one alive (candidate) or a real error
// (acceptErr); on EAGAIN it returns false and Read waits in the
// netpoller. No allocation: the connections dropped cost only their
// system calls.
func (l *guardedListener) acceptReady(fd uintptr) bool {
	for {
		nfd, _, errno := syscall.Syscall6(syscall.SYS_ACCEPT4, fd, 0, 0, syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0, 0)
		switch errno {
		case 0:
		case syscall.EAGAIN:
			return false
		case syscall.EINTR, syscall.ECONNABORTED:
			continue
		default:
			l.acceptErr = errno
			return true
		}
		l.accepted.Add(1)
		if !l.dead(int(nfd)) {
			l.candidate = int(nfd)
			return true
		}
		l.drop(int(nfd))
	}
}

// dead reports whether connection fd cannot be a request the server
// would serve: its receive queue holds more than junkBytes (SIOCINQ, alias TIOCINQ), or
// its peer closed or reset it (a 1-byte MSG_PEEK finds EOF or an error).
// Two system calls, no allocation.
func (l *guardedListener) dead(fd int) bool {
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TIOCINQ, uintptr(unsafe.Pointer(&l.inq))); e != 0 || l.inq > junkBytes {
		return true
	}
	n, _, e := syscall.Syscall6(syscall.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(&l.peek[0])), 1, syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
	return n == 0 && e == 0 || e != 0 && e != syscall.EAGAIN
}

// noLinger makes close(2) reset the connection at once: no FIN, no
// TIME_WAIT, the unread data discarded.
var noLinger = syscall.Linger{Onoff: 1, Linger: 0}

// drop closes a connection that is not served, with a reset, and counts
// it dropped and refused.
func (l *guardedListener) drop(fd int) {
	syscall.SetsockoptLinger(fd, syscall.SOL_SOCKET, syscall.SO_LINGER, &noLinger)
	syscall.Close(fd)
	l.dropped.Add(1)
	l.refused.Add(1)
}

// wrap makes the net.Conn the HTTP server reads from connection fd (which
// it takes over), releasing its slot when closed. One made while
// descriptors ran short is dropped.
func (l *guardedListener) wrap(fd int) (net.Conn, error) {
	if !l.fdRoom() {
		l.drop(fd)
		l.fdWaits.Add(1)
		return nil, syscall.EMFILE
	}
	f := os.NewFile(uintptr(fd), "metrics-conn")
	c, err := net.FileConn(f) // a dup of fd
	f.Close()
	if err != nil {
		l.refused.Add(1)
		return nil, err
	}
	return &guardedConn{Conn: c, slots: l.slots}, nil
}

// Addr is the listening address.
func (l *guardedListener) Addr() net.Addr { return l.addr }

// fdRoom reports whether more than FDReserve descriptors are free below
// the soft RLIMIT_NOFILE (getrlimit(2); /proc/self/fd counted without
// allocating). What cannot be read counts as room.
func (l *guardedListener) fdRoom() bool {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) != nil || rl.Cur > 1<<30 {
		return true
	}
	open, err := l.proc.OpenFDs()
	return err != nil || uint64(open)+FDReserve < rl.Cur
}

// Close stops accepting: a waiting Accept returns at once.
func (l *guardedListener) Close() error {
	l.cancel()
	return l.file.Close()
}

// guardedConn is a connection handed to the HTTP server, marked once it
// has a request; it gives its slot back when closed.
type guardedConn struct {
	net.Conn
	served atomic.Bool
	slots  chan struct{}
	once   sync.Once
}

// Close closes the connection and gives its slot back (once).
func (c *guardedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { <-c.slots })
	return err
}

// connCtxKey keys the request context's *guardedConn (connContext).
type connCtxKey struct{}

// connContext is the http.Server's ConnContext hook: it puts the
// connection into its requests' context, for served to find.
func connContext(ctx context.Context, c net.Conn) context.Context {
	if gc, ok := c.(*guardedConn); ok {
		return context.WithValue(ctx, connCtxKey{}, gc)
	}
	return ctx
}

// served wraps the endpoint's handler: it counts the request and marks
// its connection as having had one served, before serving it.
func (l *guardedListener) served(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.requests.Add(1)
		if gc, ok := r.Context().Value(connCtxKey{}).(*guardedConn); ok {
			gc.served.Store(true)
		}
		h.ServeHTTP(w, r)
	})
}

// connState is the http.Server's ConnState hook: a connection that closes
// without a request handed to the handler (served) sent too large a
// header, no complete request in time, or not HTTP, and is counted as
// refused. (net/http's StateActive only means bytes were read.)
func (l *guardedListener) connState(c net.Conn, st http.ConnState) {
	gc, ok := c.(*guardedConn)
	if !ok {
		return
	}
	if (st == http.StateClosed || st == http.StateHijacked) && !gc.served.Load() {
		l.refused.Add(1)
	}
}
