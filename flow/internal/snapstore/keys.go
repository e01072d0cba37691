package snapstore

import (
	"encoding/binary"

	"github.com/flowctl/flowctl/flow/store"
)

// Bucket holds snapshot blobs by scope and seq (see Key).
const Bucket = "snapshots"

// BucketMarks holds, per project, what the automatic snapshot policy
// needs of its last snapshot (automatic or at a checkpoint):
//
//	project -> seq, the project's event count there, size in bytes (8 bytes BE each)
//
// It is advice, not data: reads never use it. A project without a mark
// (a file from an older flowctl) gets a snapshot at its next K events.
const BucketMarks = "snapshot_marks"

// Prefix is the key prefix of a scope's snapshots: its 2-byte length and
// the scope.
func Prefix(scope string) []byte {
	return append(binary.BigEndian.AppendUint16(nil, uint16(len(scope))), scope...)
}

// Key is the key of scope's snapshot at seq: Prefix and the seq (8 bytes
// BE).
func Key(scope string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(Prefix(scope), seq)
}

// ParseKey splits a key of the snapshots bucket into its scope and seq.
func ParseKey(k []byte) (scope string, seq uint64, ok bool) {
	if len(k) < 2 {
		return "", 0, false
	}
	n := int(binary.BigEndian.Uint16(k))
	if len(k) != 2+n+8 {
		return "", 0, false
	}
	return string(k[2 : 2+n]), binary.BigEndian.Uint64(k[2+n:]), true
}

// ScopePrefix is the key prefix of project's snapshots, or of all of them
// ("").
func ScopePrefix(project string) []byte {
	if project == "" {
		return nil
	}
	return Prefix(project)
}

// mark describes a project's last snapshot.
type mark struct {
	seq, events, bytes uint64
}

func readMark(tx store.Tx, project string) (mark, bool, error) {
	b, err := tx.Get(BucketMarks, []byte(project))
	if err != nil || len(b) != 24 {
		return mark{}, false, err
	}
	return mark{binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:]), binary.BigEndian.Uint64(b[16:])}, true, nil
}

func putMark(tx store.Tx, project string, m mark) error {
	b := binary.BigEndian.AppendUint64(nil, m.seq)
	b = binary.BigEndian.AppendUint64(b, m.events)
	return tx.Put(BucketMarks, []byte(project), binary.BigEndian.AppendUint64(b, m.bytes))
}
