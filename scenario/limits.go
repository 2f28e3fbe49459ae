package scenario

import (
	"fmt"
	"github.com/rtload/rtload/internal/filekind"
	"io"
	"os"
	"strconv"
	"syscall"
	"time"
)

// Limits on the input, checked in this order so that no step works on more
// than the one before allows: the file (a regular file of at most
// MaxFileSize bytes), the YAML tokens (counted before the parser builds its
// tree, which costs about 230 bytes per node), the nodes after alias and
// merge-key expansion, and the variants' work (each variant is a full
// copy of the spec, validated on its own).
const (
	// MaxFileSize is the largest scenario source LoadFile reads and Load
	// accepts, in bytes.
	MaxFileSize = 1 << 20
	// MaxTokens bounds the YAML tokens (words and indicators) of one
	// document, before alias expansion: the parser's tree then stays under
	// about 60 MB.
	MaxTokens = 1 << 17
	// MaxNodes bounds the nodes of a document after aliases and merge keys
	// are expanded ("billion laughs").
	MaxNodes = 1 << 17
	// MaxWork bounds the spec's entries (list items, see Spec.size) ×
	// (variants + 1), what Validate copies and checks, and entries ×
	// trials, what Expand copies. At the bound validate takes about 2 s.
	MaxWork = 1 << 20
	// MaxRounds is the largest rounds (repeat) value.
	MaxRounds = 1000
	// MaxProcesses is the largest processes value.
	MaxProcesses = 1000
	// MaxDuration bounds a trial's measured time (duration). Past it, a run
	// is a soak (duration 0, --duration forever: until stopped, its
	// wakeup logs rotated and capped, checkpoints and interval records
	// written), not one trial whose logs grow unrotated for days and whose
	// results are written only at its end. --duration 1000h was accepted
	// without a word (issue 34).
	MaxDuration = Duration(24 * time.Hour)
	// MaxThreads bounds the threads one trial runs (Spec.Threads: readers,
	// traffic senders, noise workers, probes and their hackbench workers).
	// The Go runtime dies with "fatal error: thread exhaustion" past 10,000
	// OS threads, and rtload may need two per thread it runs (one blocked
	// in a syscall hands its scheduler slot to another: engine's
	// threadFactor), plus its own: 4096 keeps 2 × 4096 under that with
	// room. 12 noise entries of 1024 threads validated and then died
	// after 32 s of setup (issue 34).
	MaxThreads = 4096
	// maxProblems bounds the distinct problems Validate collects; past it,
	// it stops checking further variants.
	maxProblems = 10000
	// maxShown bounds the problems ErrorList.Error prints; the rest are
	// counted in a last line.
	maxShown = 20
)

const fileAllowed = "a regular file of at most 1MiB"

// trialDurationAllowed is the allowed values of duration.
const trialDurationAllowed = "0 (until stopped: a soak, --duration forever, with rotated logs and checkpoints) or up to 24h per trial"

// readFile reads the scenario at path: a regular file of at most
// MaxFileSize bytes. It never blocks on a FIFO (opened O_NONBLOCK, then
// refused by type) and never reads more than MaxFileSize+1 bytes, so
// /dev/zero or a growing file cannot run it away. A missing file's error
// wraps fs.ErrNotExist.
func readFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, ErrorList{{File: path, Msg: "not a regular file (" + filekind.Of(fi.Mode()) + ")", Allowed: fileAllowed}}
	}
	if fi.Size() > MaxFileSize {
		return nil, tooLarge(path, strconv.FormatInt(fi.Size(), 10)+" bytes")
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	if len(data) > MaxFileSize {
		return nil, tooLarge(path, "more than "+strconv.Itoa(MaxFileSize)+" bytes")
	}
	return data, nil
}

func tooLarge(file, size string) ErrorList {
	return ErrorList{{File: file, Msg: "file too large (" + size + ")", Allowed: fileAllowed}}
}

// tooManyTokens counts the tokens of data, YAML's scalars and indicators
// over-approximated, and returns a problem at the line where the count
// passes limit, or nil. It is a pre-pass for the parser, which builds the
// whole node tree before anyone can stop it. Every node the parser makes
// stands on a token counted here (a word of a scalar, quoted or not, an
// alias, a flow bracket, or an indicator that may stand for an empty
// node: '-', '?', ':', ','), and a block mapping on its first key, so the
// tree has at most 2 × tokens + 1 nodes. Nothing is skipped: telling a
// comment or a quoted scalar apart takes YAML's grammar (a '#' or a quote
// inside a plain scalar is text), and a pre-pass that guessed could be
// made to skip real nodes. Comments and the words of a scalar count, so
// the count only ever errs high.
func tooManyTokens(file string, data []byte, limit int) *Error {
	n, line := 0, 1
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c == '\n':
			line++
			continue
		case isSpace(c) || c == ']' || c == '}':
			continue
		case isFlow(c) || c == ':' || c == '-' || c == '?' || c == '*':
		default: // a word: up to a space, a flow indicator or ':'
			for i+1 < len(data) && !isSpace(data[i+1]) && !isFlow(data[i+1]) && data[i+1] != ':' {
				i++
			}
		}
		if n++; n > limit {
			return tokenError(file, line, limit)
		}
	}
	return nil
}

func tokenError(file string, line, limit int) *Error {
	return &Error{File: file, Line: line, Msg: fmt.Sprintf("document too large: more than %d YAML tokens (words and indicators, comments included)", limit),
		Allowed: fmt.Sprintf("at most %d tokens before aliases are expanded", limit)}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
func isFlow(c byte) bool  { return c == ',' || c == '[' || c == ']' || c == '{' || c == '}' }
