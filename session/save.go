package session

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/store"
	"github.com/rtload/rtload/scenario"
	"github.com/rtload/rtload/sysinfo"
)

// saver writes a run's summary.json: after every finished trial and at
// soak checkpoints (InProgress), and at the end. Writes are atomic
// (store.Dir.WriteSummary) and one at a time; sem is held while one is
// in flight, so that a forced exit can wait for it and leave no temporary
// file behind.
type saver struct {
	dir  *store.Dir
	run  results.Summary // Spec, Plan and Env, the same in every write
	errw io.Writer
	sem  chan struct{}

	mu      sync.Mutex
	trials  int  // trials in the last summary written
	written bool // a summary.json was written
}

// newSaver is the saver of a run of spec on a machine of env into dir:
// the scenario's JSON and Plan are made once, not at each checkpoint (a
// soak's writes must not each allocate them anew).
func newSaver(dir *store.Dir, spec *scenario.Spec, env sysinfo.Facts, errw io.Writer) (*saver, error) {
	s := &saver{dir: dir, errw: errw, sem: make(chan struct{}, 1)}
	data, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("summary: scenario: %w", err)
	}
	if err := s.run.SetSpec(data); err != nil {
		return nil, err
	}
	s.run.Env = env.Env
	return s, nil
}

// checkpoint writes the summary so far (engine.Options.OnCheckpoint); an
// error ends the run (the README: a write that fails ends a soak).
func (s *saver) checkpoint(sum *results.Summary) error { return s.write(sum) }

// final writes the finished run's summary.
func (s *saver) final(sum *results.Summary) error { return s.write(sum) }

func (s *saver) write(sum *results.Summary) error {
	sum.Spec, sum.Plan, sum.Env = s.run.Spec, s.run.Plan, s.run.Env
	s.sem <- struct{}{}
	defer func() { <-s.sem }()
	err := s.dir.WriteSummary(sum)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		s.written, s.trials = true, len(sum.Trials)
	}
	return err
}

// kept says what summary.json holds after a failed final write.
func (s *saver) kept(path string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.written {
		return "nothing was saved in " + path + "; the report above is all there is"
	}
	return fmt.Sprintf("%s/%s holds the last checkpoint (%d trials, marked in progress)", strings.TrimSuffix(path, "/"), results.SummaryFile, s.trials)
}

// abandon prepares a forced exit: it waits at most timeout for a summary
// write in flight to finish (and lets none start after it), then removes
// every temporary file the results directory still has and its lock
// (safeio.LockFile), and returns the temporary files' names.
func (s *saver) abandon(timeout time.Duration) []string {
	select {
	case s.sem <- struct{}{}: // held for good: no write starts after this
	case <-time.After(timeout):
	}
	tmp := s.dir.RemoveTemps()
	s.dir.ReleaseLock()
	return tmp
}
