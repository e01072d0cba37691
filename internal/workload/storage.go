package workload

import (
	"iter"
	"strconv"
)

// PayloadSize is the payload of one storage event, in bytes (DESIGN.md
// §11 states its targets for 200-byte payloads).
const PayloadSize = 200

// The storage event of the eventlog-level benchmarks: an event of type
// StorageType by StorageActor in StorageSession of StorageProject, with
// Payload as its data, appended to StorageStream (single appends) or as
// Commits lay out (filled logs).
const (
	StorageType    = "task.updated"
	StorageSchema  = 1
	StorageActor   = "bench"
	StorageSession = "bench"
	StorageProject = "bench"
	StorageStream  = "task/bench"
)

// Payload returns a msgpack map of PayloadSize bytes, like a small task
// event: {"name": <186 letters>, "prio": 3}.
func Payload() []byte {
	const nameLen = PayloadSize - 8 - 6
	b := make([]byte, 0, PayloadSize)
	b = append(b, 0x82, 0xa4, 'n', 'a', 'm', 'e', 0xd9, nameLen)
	for i := range nameLen {
		b = append(b, 'a'+byte(i%26))
	}
	return append(b, 0xa4, 'p', 'r', 'i', 'o', 0x03)
}

// Run is storage events appended to one stream in one call.
type Run struct {
	Stream string
	Events int
}

// The layout of a filled log: CommitEvents events a commit, in runs of
// RunEvents over RunStreams streams taken in turn.
const (
	CommitEvents = 1000
	RunEvents    = 10
	RunStreams   = 1000
)

// Commits lays out n storage events: the runs of each commit, in order.
// The slice it yields is reused by the next commit.
func Commits(n int) iter.Seq[[]Run] {
	return func(yield func([]Run) bool) {
		runs := make([]Run, 0, CommitEvents/RunEvents)
		for done := 0; done < n; done += CommitEvents {
			runs = runs[:0]
			for k := 0; k < CommitEvents && done+k < n; k += RunEvents {
				stream := "task/" + strconv.Itoa((done+k)/RunEvents%RunStreams)
				runs = append(runs, Run{Stream: stream, Events: min(RunEvents, n-done-k)})
			}
			if !yield(runs) {
				return
			}
		}
	}
}
