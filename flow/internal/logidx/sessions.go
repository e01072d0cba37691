package logidx

import (
	"encoding/binary"
	"slices"
	"strings"

	"github.com/flowctl/flowctl/flow/store"
)

// SessionList is what the log index knows of one session's events.
type SessionList struct {
	Session     string
	First, Last uint64 // seqs
	Events      int
}

// Sessions lists every session's list, by session name: the seqs of its
// first and last events and their count, reading only the chunks (a
// caller checks Through first: events past it are not listed).
func Sessions(tx store.Tx) ([]SessionList, error) {
	var out []SessionList
	var buf []uint64
	err := tx.Scan(Bucket, []byte{kindSession}, func(k, v []byte) error {
		if len(k) < 3 {
			return corrupt(k)
		}
		n := int(binary.BigEndian.Uint16(k[1:3]))
		if len(k) != 3+n+8 {
			return corrupt(k)
		}
		var err error
		if buf, err = decodeChunk(buf[:0], k[:3+n], k, v); err != nil {
			return err
		}
		name := string(k[3 : 3+n])
		if len(out) == 0 || out[len(out)-1].Session != name {
			out = append(out, SessionList{Session: name, First: buf[0]})
		}
		s := &out[len(out)-1]
		s.Last, s.Events = buf[len(buf)-1], s.Events+len(buf)
		return nil
	})
	if err != nil {
		return nil, err
	}
	// The pending seqs of each session follow its chunks'.
	at := make(map[string]int, len(out))
	for i := range out {
		at[out[i].Session] = i
	}
	err = tx.Scan(PendingBucket, []byte{kindSession}, func(k, v []byte) error {
		if len(k) < 3 || len(k) != 3+int(binary.BigEndian.Uint16(k[1:3])) {
			return corruptPending(k)
		}
		var err error
		if buf, err = decodePending(buf[:0], k, v); err != nil {
			return err
		}
		name := string(k[3:])
		i, ok := at[name]
		if !ok {
			i = len(out)
			out = append(out, SessionList{Session: name, First: buf[0]})
		}
		s := &out[i]
		s.Last, s.Events = buf[len(buf)-1], s.Events+len(buf)
		return nil
	})
	slices.SortFunc(out, func(a, b SessionList) int { return strings.Compare(a.Session, b.Session) })
	return out, err
}
