package snapstore

import (
	"encoding/binary"
	"hash/crc32"
	"reflect"
	"testing"

	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
)

// TestSummary_Formats: a summary of format 2 lists the tasks doing and
// reads back as written; one of format 1 (written before that list)
// still reads, its four lists as written and the tasks doing unknown,
// not empty.
func TestSummary_Formats(t *testing.T) {
	var hash store.Hash
	hash[0] = 7
	s := &Summary{Seq: 42, Project: []byte{0x81, 0xa1, 'x', 1}, lists: int(summarySets),
		Counts: map[string]map[string]int{
			projstore.BucketTasks: {"todo": 2, "doing": 1}, projstore.BucketPlans: {},
			projstore.BucketApprovals: {"pending": 1}, projstore.BucketExecs: {"ok": 3}}}
	s.Sets[SetTodo] = []string{"T-1", "T-2"}
	s.Sets[SetPending] = []string{"A-1"}
	s.Sets[SetClaimed] = []string{"T-3"}
	s.Sets[SetDoing] = []string{"T-3"}

	v := encodeSummary(s, hash)
	if v[0] != 2 {
		t.Fatalf("format byte %d, want 2", v[0])
	}
	got, gotHash, err := decodeSummary(v, 42)
	if err != nil || gotHash != hash || !reflect.DeepEqual(got, s) || !got.Lists(SetDoing) {
		t.Fatalf("format 2: %+v %v, want %+v", got, err, s)
	}

	old := *s
	old.lists, old.Sets[SetDoing] = 4, nil
	v = encodeSummary(&old, hash)
	if v[0] != 1 || len(v) >= len(encodeSummary(s, hash)) {
		t.Fatalf("format 1: byte %d, %d bytes", v[0], len(v))
	}
	got, _, err = decodeSummary(v, 42)
	if err != nil || !reflect.DeepEqual(got, &old) || got.Lists(SetDoing) || !got.Lists(SetClaimed) {
		t.Fatalf("format 1: %+v %v, want %+v without the tasks doing", got, err, &old)
	}

	v[0] = 3 // a format this binary does not know (its CRC made right)
	if _, _, err := decodeSummary(recrc(v), 42); err != errSummary {
		t.Fatalf("format 3: %v, want errSummary", err)
	}
}

// recrc returns v with its CRC made again.
func recrc(v []byte) []byte {
	n := len(v) - 4
	return binary.BigEndian.AppendUint32(v[:n:n], crc32.Checksum(v[:n], castagnoli))
}
