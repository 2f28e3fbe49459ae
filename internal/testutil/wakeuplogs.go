package testutil

import (
	"bufio"
	"compress/gzip"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/wakelog"
)

// LongLogDir writes SeedSummary into dir with a per-wakeup log of rows
// rows for the first reader of the first trial (one gzip chunk,
// w.0000.csv.gz, listed once) and none for the others. Row k is tick k, deadline k ms, latency
// 5000 + k%7 ns but spikeNs at tick spikeAt, each field as rtload writes
// it. It returns the summary.
func LongLogDir(t testing.TB, dir string, rows, spikeAt int, spikeNs int64) *results.Summary {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "w.0000.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	bw := bufio.NewWriterSize(zw, 64<<10)
	bw.WriteString(wakelog.Header + "\n")
	var b []byte
	for k := range rows {
		lat := int64(5000 + k%7)
		if k == spikeAt {
			lat = spikeNs
		}
		b = strconv.AppendInt(b[:0], int64(k), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, 1e15+int64(k)*1e6, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, lat, 10)
		b = append(b, ",9000,1,2,1,0,1,0\n"...)
		bw.Write(b)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	s := SeedSummary()
	for i := range s.Trials {
		for j := range s.Trials[i].Readers {
			s.Trials[i].Readers[j].WakeupLog = nil
		}
	}
	s.Trials[0].Readers[0].WakeupLog = []string{"w.0000.csv.gz"}
	WriteSummary(t, dir, s)
	return s
}
