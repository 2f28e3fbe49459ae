package rt

import (
	"strconv"
	"unicode/utf8"
)

// CommLen is the longest thread name the kernel keeps, in bytes
// (TASK_COMM_LEN 16 less the terminating NUL; prctl(2) PR_SET_NAME).
const CommLen = 15

// Thread name prefixes, one per role, so that ps -L, top -H, perf and
// ftrace tell rtload's threads apart.
const (
	ReaderPrefix = "rtl-rd/" // real-time readers: ReaderName
	SenderPrefix = "rtl-tx/" // traffic senders: SenderName
	NoisePrefix  = "rtl-nz/" // noise sources: NoiseName
	ProbePrefix  = "rtl-pr/" // measured probes (tap_send, file_write, messaging): ProbeName
	// WriterName names the thread that streams wakeup logs and intervals
	// to disk (off the real-time threads).
	WriterName = "rtl-writer"
)

// ReaderName is the thread name of the reader called reader:
// "rtl-rd/<reader>". The kernel keeps Comm of it.
func ReaderName(reader string) string { return ReaderPrefix + reader }

// SenderName is the thread name of the sender to endpoint:
// "rtl-tx/<endpoint>".
func SenderName(endpoint string) string { return SenderPrefix + endpoint }

// NoiseName is the thread name of thread i (from 0) of the noise source
// called name (its kind's name, "spin2" for a second one):
// "rtl-nz/<name>.<i>".
func NoiseName(name string, i int) string { return NoisePrefix + name + "." + strconv.Itoa(i) }

// ProbeName is the thread name of the probe called probe:
// "rtl-pr/<probe>".
func ProbeName(probe string) string { return ProbePrefix + probe }

// Comm returns name as the kernel will keep it: unchanged when it fits in
// CommLen bytes, else its first 9 bytes, "~" and its last 5 bytes (never
// splitting a UTF-8 sequence, so sometimes shorter). The head keeps the
// role prefix ("rtl-rd/" and two more bytes), the tail the part that
// usually tells siblings apart ("…ing.3", "…eth12"); the same name always
// gives the same result. A NUL byte ends the name, as it does in the
// kernel.
func Comm(name string) string {
	for i := 0; i < len(name); i++ {
		if name[i] == 0 {
			name = name[:i]
			break
		}
	}
	if len(name) <= CommLen {
		return name
	}
	const head, tail = 9, 5
	h := head
	for h > 0 && !utf8.RuneStart(name[h]) {
		h--
	}
	t := len(name) - tail
	for t < len(name) && !utf8.RuneStart(name[t]) {
		t++
	}
	return name[:h] + "~" + name[t:]
}
