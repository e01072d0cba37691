package logidx

import (
	"encoding/binary"

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
	return out, err
}
