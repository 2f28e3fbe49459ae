package exporter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// ErrNotLoopback is matched (errors.Is) by the error Listen returns for a
// non-loopback host when allowAny is false; callers map it to a usage error.
var ErrNotLoopback = errors.New("not a loopback address")

// closeTimeout bounds Close: in-flight scrapes get this long to finish.
const closeTimeout = 2 * time.Second

// Server exposes rtload's live metrics at http://ADDR/metrics (Prometheus
// text format), using its own registry (not the global one) plus the Go and
// process collectors. Its methods are safe for concurrent use; Update and
// the Set methods never block on the network.
type Server struct {
	c     *collector
	ln    net.Listener // the guarded listener
	guard *guardedListener
	http  *http.Server
	done  chan struct{} // closed when Serve returns
	// serveErr is Serve's result when it is not http.ErrServerClosed.
	serveErr error

	closeOnce sync.Once
	closeErr  error
}

// Listen validates addr ("host:port") and starts serving /metrics on it.
// The host must be a loopback address (127.0.0.0/8, ::1, or "localhost")
// unless allowAny is true: by default rtload exposes no port to the network.
// An empty host (":9100") means every interface and so needs allowAny too.
// Port 0 picks a free port; Addr reports the one bound. Errors name the
// address and the rule; a non-loopback host wraps ErrNotLoopback.
func Listen(addr string, allowAny bool) (*Server, error) {
	if err := checkAddr(addr, allowAny); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics listen %s: %w", addr, err)
	}
	// "localhost" is resolved by the system; make sure it really was loopback.
	if !allowAny {
		if ap, err := netip.ParseAddrPort(ln.Addr().String()); err != nil || !ap.Addr().IsLoopback() {
			ln.Close()
			return nil, fmt.Errorf("metrics listen %s: bound %s: %w; %s", addr, ln.Addr(), ErrNotLoopback, loopbackRule)
		}
	}

	c := newCollector()
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		c,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		// A bad label value (invalid UTF-8) loses that series, not the scrape.
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: 4,
		Timeout:             10 * time.Second,
	}))
	g, err := newGuardedListener(ln.(*net.TCPListener)) // takes ln over
	if err != nil {
		return nil, fmt.Errorf("metrics listen %s: %w", addr, err)
	}
	s := &Server{
		c:     c,
		ln:    g,
		guard: g,
		http: &http.Server{
			Handler:           g.served(http.MaxBytesHandler(mux, MaxBodyBytes)),
			ConnContext:       connContext,
			MaxHeaderBytes:    MaxHeaderBytes,
			ReadHeaderTimeout: ReadHeaderTimeout,
			ReadTimeout:       ReadTimeout,
			WriteTimeout:      WriteTimeout,
			IdleTimeout:       IdleTimeout,
			ConnState:         g.connState,
			// Bad requests are counted (Pressure), never logged: a local
			// user must not be able to fill rtload's stderr.
			ErrorLog: log.New(io.Discard, "", 0),
		},
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		if err := s.http.Serve(g); !errors.Is(err, http.ErrServerClosed) {
			s.serveErr = err
		}
	}()
	return s, nil
}

// Pressure is what the endpoint has met since Listen: connections
// accepted, those closed without a request served (over MaxHeaderBytes,
// no complete request within ReadHeaderTimeout, not HTTP), requests
// served, and how often it held back accepting because fewer than
// FDReserve descriptors were free. All only grow.
type Pressure struct {
	Connections, Refused, Requests, FDWaits uint64
}

// Pressure reads the endpoint's counters (safe for concurrent use).
func (s *Server) Pressure() Pressure {
	g := s.guard
	return Pressure{Connections: g.accepted.Load(), Refused: g.refused.Load(), Requests: g.requests.Load(), FDWaits: g.fdWaits.Load()}
}

const loopbackRule = "metrics listen on loopback only by default (127.0.0.0/8, ::1, localhost); " +
	"rtload run --metrics-addr takes a loopback address only (e.g. 127.0.0.1:9100)"

// checkAddr applies Listen's address rule without touching the network.
func checkAddr(addr string, allowAny bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("metrics listen %s: %w (want host:port, e.g. 127.0.0.1:9464)", addr, err)
	}
	if port == "" {
		return fmt.Errorf("metrics listen %s: missing port (want host:port; port 0 picks a free one)", addr)
	}
	if allowAny || strings.EqualFold(host, "localhost") {
		return nil
	}
	what := "host " + host
	if host == "" {
		what = "empty host (every interface)"
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.IsLoopback() {
		return fmt.Errorf("metrics listen %s: %s: %w; %s", addr, what, ErrNotLoopback, loopbackRule)
	}
	return nil
}

// Addr is the address actually listened on ("127.0.0.1:41235"), with the
// port Listen picked for port 0.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close shuts the HTTP server down: it stops listening at once and gives
// in-flight scrapes up to 2 s before closing their connections. It is
// idempotent; later calls return the first call's result.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		err := s.http.Shutdown(ctx)
		if err != nil {
			err = errors.Join(err, s.http.Close())
		}
		<-s.done
		if err == nil {
			err = s.serveErr
		}
		if err != nil {
			s.closeErr = fmt.Errorf("metrics server %s: close: %w", s.Addr(), err)
		}
	})
	return s.closeErr
}
