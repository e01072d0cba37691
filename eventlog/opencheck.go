package eventlog

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"

	bolt "go.etcd.io/bbolt"
)

// A writable open checks, cheaply (a few pages, whatever the file's
// size), that the file is whole where every write goes: both bbolt meta
// pages, and the last record, which must be meta's head. A file that
// fails is refused for writing: a write would build on damage that
// Verify reports, and could spread it. Reads still work, and Salvage
// copies what verifies into a new file. Damage elsewhere shows when a
// transaction touches its page: see recoverCorruption.

// checkMetaPages checks both of bbolt's meta pages. bbolt itself falls
// back to the other one when one is bad; a write then overwrites it,
// and with it the evidence Verify reports.
func checkMetaPages(path string, pageSize int) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 2*pageSize)
	if _, err := io.ReadFull(f, buf); err != nil {
		return &CorruptionError{Reason: "the file is too short for its two meta pages"}
	}
	for id := range uint64(2) {
		if _, ok := validMeta(buf[int(id)*pageSize:], id); !ok {
			return &CorruptionError{Reason: fmt.Sprintf("page %d of the file (a meta page) is damaged", id)}
		}
	}
	return nil
}

// checkHead checks that the last record of the log, of format f, is the
// one meta names as the head, and that it decodes and verifies (CRC and
// hash; for format 2, with the hash the record before it holds).
func checkHead(tx *bolt.Tx, f format) error {
	meta := tx.Bucket(bucketMeta)
	seq := binary.BigEndian.Uint64(meta.Get(metaHeadSeq))
	c := tx.Bucket(bucketLog).Cursor()
	k, v := c.Last()
	switch {
	case k == nil && seq == 0:
		return nil
	case k == nil || len(k) != 8:
		return corruptf(seq, "meta says the log ends at seq %d, the log holds no such record", seq)
	case binary.BigEndian.Uint64(k) != seq:
		return corruptf(seq, "meta says the log ends at seq %d, its last record is seq %d", seq, binary.BigEndian.Uint64(k))
	}
	var prev Hash
	if f != formatV1 && seq > 1 {
		var err error
		if prev, err = prevHash(c, seq, f); err != nil {
			return err
		}
	}
	r, err := f.decode(seq, v, prev)
	if err != nil {
		return err
	}
	if !bytes.Equal(r.Hash[:], meta.Get(metaHeadHash)) {
		return corruptf(seq, "the last record's hash is not meta's head hash")
	}
	return nil
}

// prevHash returns the hash the record at seq-1 holds, moving c from seq
// to it: the prev hash of a format-2 record at seq, which c is on.
func prevHash(c *bolt.Cursor, seq uint64, f format) (Hash, error) {
	k, v := c.Prev()
	if len(k) != 8 || binary.BigEndian.Uint64(k) != seq-1 {
		return Hash{}, corruptf(seq-1, "record is missing")
	}
	return f.storedHash(seq-1, v)
}
