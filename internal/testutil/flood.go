package testutil

import (
	"bytes"
	"context"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// FloodStats is what Flood did: connections made and refused (dial
// errors, e.g. a full backlog), and header bytes written.
type FloodStats struct {
	Dials, DialErrors int64
	Sent              int64
}

// Flood plays a local user knocking at an HTTP endpoint: conns clients,
// each connecting to addr (loopback only: the caller's endpoint) again and
// again until ctx ends, sending a GET whose headers are headerBytes long
// and reading whatever comes back. Every loop ends with ctx; a refused
// dial waits 50 ms before the next.
func Flood(ctx context.Context, addr string, conns, headerBytes int) FloodStats {
	var hdr bytes.Buffer
	hdr.WriteString("GET /metrics HTTP/1.1\r\nHost: flood\r\n")
	pad := bytes.Repeat([]byte("a"), 4000)
	for hdr.Len() < headerBytes {
		hdr.WriteString("X-Pad: ")
		hdr.Write(pad)
		hdr.WriteString("\r\n")
	}
	hdr.WriteString("\r\n")
	req := hdr.Bytes()
	var dials, errs, sent atomic.Int64
	var wg sync.WaitGroup
	d := net.Dialer{Timeout: 5 * time.Second}
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				c, err := d.DialContext(ctx, "tcp", addr)
				dials.Add(1)
				if err != nil {
					errs.Add(1)
					select {
					case <-ctx.Done():
					case <-time.After(50 * time.Millisecond):
					}
					continue
				}
				stop := context.AfterFunc(ctx, func() { c.Close() })
				go io.Copy(io.Discard, c)
				n, _ := c.Write(req)
				sent.Add(int64(n))
				c.Close()
				stop()
			}
		}()
	}
	wg.Wait()
	return FloodStats{Dials: dials.Load(), DialErrors: errs.Load(), Sent: sent.Load()}
}
