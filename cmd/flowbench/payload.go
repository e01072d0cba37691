package main

import "github.com/flowctl/flowctl/eventlog"

// payloadSize is the payload of one synthetic event, in bytes (DESIGN.md
// §11 states its targets for 200-byte payloads).
const payloadSize = 200

// payload is a msgpack map of payloadSize bytes, like a small task event:
// {"name": <186 letters>, "prio": 3}. It is the payload of the eventlog
// package's own benchmarks.
func payload() []byte {
	const nameLen = payloadSize - 8 - 6
	b := []byte{0x82, 0xa4, 'n', 'a', 'm', 'e', 0xd9, nameLen}
	for i := range nameLen {
		b = append(b, 'a'+byte(i%26))
	}
	return append(b, 0xa4, 'p', 'r', 'i', 'o', 0x03)
}

// syntheticEvent is one event of the storage workloads.
func syntheticEvent() eventlog.Event {
	return eventlog.Event{Type: "task.updated", Schema: 1, Actor: "bench", Session: "bench", Project: "bench", Data: payload()}
}
