package exporter

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/net/netutil"
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
	// MaxConns is the most connections open at once; more wait in the
	// kernel's listen backlog, holding no descriptor or memory of rtload.
	MaxConns = 8
	// AcceptRate (per second, AcceptBurst at once) bounds new connections:
	// each allocates a few KiB that only the soak's next collection frees.
	AcceptRate  = 10
	AcceptBurst = 4
	// FDReserve is how many descriptors below RLIMIT_NOFILE the endpoint
	// always leaves to the run: it accepts only while more are free, so
	// checkpoints, log chunks and /proc reads never find none.
	FDReserve = 64
)

// fdWait is how often Accept looks again for free descriptors when fewer
// than FDReserve are left.
const fdWait = 100 * time.Millisecond

// guardedListener is the endpoint's listener: at most MaxConns
// connections at once (netutil.LimitListener), new ones at most
// AcceptRate a second (rate.Limiter), and none while fewer than FDReserve
// descriptors are free. It counts the connections it accepted and those
// closed without a request served (over a limit, timed out or not HTTP).
type guardedListener struct {
	net.Listener // LimitListener(the socket, MaxConns)
	lim          *rate.Limiter
	ctx          context.Context
	cancel       context.CancelFunc
	proc         *sysinfo.ProcReader // used by Accept only (one goroutine: Serve's)

	accepted, refused, requests, fdWaits atomic.Uint64
}

func newGuardedListener(ln net.Listener) *guardedListener {
	ctx, cancel := context.WithCancel(context.Background())
	return &guardedListener{Listener: netutil.LimitListener(ln, MaxConns), lim: rate.NewLimiter(AcceptRate, AcceptBurst),
		ctx: ctx, cancel: cancel, proc: sysinfo.NewProcReader()}
}

// Accept waits for the rate, for free descriptors and for a free slot, in
// that order, then accepts one connection. One accepted while descriptors
// ran short (they were free when accept(2) began to wait) is closed at
// once and counted refused.
func (l *guardedListener) Accept() (net.Conn, error) {
	for {
		if err := l.lim.Wait(l.ctx); err != nil {
			return nil, net.ErrClosed
		}
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
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.accepted.Add(1)
		if !l.fdRoom() {
			c.Close()
			l.fdWaits.Add(1)
			l.refused.Add(1)
			continue
		}
		return &guardedConn{Conn: c}, nil
	}
}

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
	return l.Listener.Close()
}

// guardedConn is an accepted connection, marked once it has a request.
type guardedConn struct {
	net.Conn
	served atomic.Bool
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
