package projstore

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// Every value the engine writes to a proj_* bucket (entities, the status
// index) is sealed: its body followed by the CRC32C (Castagnoli, big
// endian) of the record's key and body. Reads unseal before they decode or
// parse a single byte, so that a flipped bit in a projection record is an
// ErrDamaged (exit 7, "run 'flowctl rebuild'") rather than a
// wrong answer: the key is in the sum, so a record that a flip moved to
// another key fails too. proj_meta's version is not sealed: a damaged one
// only makes the projections look stale, and stale projections are rebuilt
// (or read around) anyway.

// SealSize is the length of a seal.
const SealSize = crc32.Size

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// recordSum is the checksum of the record key, body.
func recordSum(key, body []byte) uint32 {
	return crc32.Update(crc32.Checksum(key, castagnoli), castagnoli, body)
}

// Seal appends the checksum of key and body to body and returns the
// result, the value to store under key.
func Seal(key, body []byte) []byte {
	return binary.BigEndian.AppendUint32(body, recordSum(key, body))
}

// Unseal checks the value v stored under key in bucket and returns its
// body, a subslice of v. A value too short or whose checksum does not
// match is an ErrDamaged naming the record.
func Unseal(bucket string, key, v []byte) ([]byte, error) {
	n := len(v) - SealSize
	if n < 0 || binary.BigEndian.Uint32(v[n:]) != recordSum(key, v[:n]) {
		return nil, Damaged(bucket, key, "fails its checksum")
	}
	return v[:n], nil
}

// Damaged is an ErrDamaged naming the record bucket, key.
func Damaged(bucket string, key []byte, what string) error {
	return fmt.Errorf("%w: %s %q %s", ErrDamaged, bucket, key, what)
}
