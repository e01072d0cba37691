package eventlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime/debug"
	"slices"
	"time"

	"github.com/flowctl/flowctl/flow/store"
	bolt "go.etcd.io/bbolt"
)

// SalvageReport is what Salvage found in a damaged log.
type SalvageReport = store.SalvageReport

// Salvage reads every record of the log at path that can still be read,
// damaged as the file may be, and calls fn with records 1..Kept in seq
// order: the longest prefix of the log whose records verify (CRC, hash)
// and chain from seq 1. Later records cannot keep their hashes once a
// gap precedes them, so they are not handed over, only counted
// (SalvageReport.Stranded); no record past meta's head is (an
// unacknowledged commit's pages).
//
// It reads the log bucket through bbolt, skipping pages that fail; if
// that misses a record, it searches every page of the file for leaf
// pages holding records. It holds a shared lock, writes nothing, and
// keeps the records in memory. It returns ErrNotExist, ErrBusy, or fn's
// error; damage is in the report, not an error.
func Salvage(path string, opts Options, fn func(*Record) error) (rep SalvageReport, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if err := checkFile(path, Options{ReadOnly: true}); err != nil && !errors.Is(err, ErrCorrupt) {
		return rep, err
	}
	f, err := lockingOpener(false, opts.Timeout)(path, os.O_RDONLY, 0)
	if err != nil {
		return rep, openError(path, err)
	}
	defer f.Close()
	s := &salvager{tree: map[uint64][]byte{}, scan: map[uint64][][]byte{}, pageSize: os.Getpagesize()}
	fi, err := f.Stat()
	if err != nil {
		return rep, err
	}
	s.readTree(path, opts.Timeout, fi.Size())
	// A lost meta page may have been the last commit's: its records lie
	// past the head the other one names.
	if s.missing() || checkMetaPages(path, s.pageSize) != nil {
		rep.ScannedPages = true
		if err := s.scanPages(f); err != nil {
			return rep, err
		}
	}
	kept := s.chain(&rep)
	for _, r := range kept {
		if err := fn(r); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// salvager gathers the stored bytes of records: those the tree gave, and
// those a page scan found (several per seq: stale copies on free pages).
type salvager struct {
	head     uint64
	headHash Hash
	headOK   bool // meta's head was read
	pageSize int
	tree     map[uint64][]byte
	scan     map[uint64][][]byte
	damage   []string
}

// noteDamage records what a failed read found.
func (s *salvager) noteDamage(err error) {
	msg := err.Error()
	var ce *CorruptionError
	if errors.As(err, &ce) {
		msg = ce.Reason
	}
	if !slices.Contains(s.damage, msg) {
		s.damage = append(s.damage, msg)
	}
}

// guard runs fn, turning a bbolt panic into a noted damage.
func (s *salvager) guard(fn func()) {
	defer func() {
		if r := recover(); r != nil {
			s.noteDamage(damageError(r))
		}
	}()
	fn()
}

// readTree reads meta's head and the log bucket through bbolt, skipping
// what panics.
func (s *salvager) readTree(path string, timeout time.Duration, size int64) {
	db, err := openBolt(path, Options{ReadOnly: true, Timeout: timeout})
	if err != nil {
		s.noteDamage(openError(path, err))
		return
	}
	defer db.Close()
	s.pageSize = db.Info().PageSize
	_ = db.View(func(tx *bolt.Tx) error {
		s.guard(func() { s.readHead(tx) })
		s.fitHead(size)
		var log *bolt.Bucket
		s.guard(func() { log = tx.Bucket(bucketLog) })
		if log == nil {
			s.noteDamage(&CorruptionError{Reason: "the log bucket cannot be read"})
			return nil
		}
		last := s.walk(log)
		for seq := last + 1; seq <= s.head; seq++ {
			s.guard(func() { s.add(seqKey(seq), log.Get(seqKey(seq))) })
		}
		return nil
	})
}

func (s *salvager) readHead(tx *bolt.Tx) {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		return
	}
	seq, hash := meta.Get(metaHeadSeq), meta.Get(metaHeadHash)
	if len(seq) == 8 && len(hash) == len(Hash{}) {
		s.head, s.headOK = binary.BigEndian.Uint64(seq), true
		copy(s.headHash[:], hash)
	}
}

// fitHead forgets a head seq larger than a file of size bytes could
// hold records for (a damaged meta value): it bounds the reads.
func (s *salvager) fitHead(size int64) {
	if s.head > uint64(size)/(1+hashFieldLen+crcLen) {
		s.noteDamage(&CorruptionError{Reason: fmt.Sprintf("meta's head seq %d is more than the file holds records for", s.head)})
		s.head, s.headOK = 0, false
	}
}

// walk reads the log bucket with a cursor until the end or a damaged
// page, and returns the last seq it read.
func (s *salvager) walk(log *bolt.Bucket) (last uint64) {
	defer func() {
		if r := recover(); r != nil {
			s.noteDamage(damageError(r))
		}
	}()
	c := log.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if s.add(k, v) {
			last = binary.BigEndian.Uint64(k)
		}
	}
	return last
}

// add keeps a copy of the tree's value v under key k if k is a seq.
func (s *salvager) add(k, v []byte) bool {
	if len(k) != 8 || v == nil {
		return false
	}
	s.tree[binary.BigEndian.Uint64(k)] = bytes.Clone(v)
	return true
}

// missing reports whether the tree did not give every seq up to the head
// (or gave none at all, the head unknown).
func (s *salvager) missing() bool {
	if !s.headOK {
		return true
	}
	for seq := uint64(1); seq <= s.head; seq++ {
		if _, ok := s.tree[seq]; !ok {
			return true
		}
	}
	return false
}

// chain keeps the records from seq 1 while they verify and continue the
// chain, up to meta's head, and fills rep.
func (s *salvager) chain(rep *SalvageReport) []*Record {
	rep.HeadSeq = s.head
	var kept []*Record
	var prev Hash
	for seq := uint64(1); !s.headOK || seq <= s.head; seq++ {
		r, why := s.pick(seq, prev)
		if r == nil {
			rep.Reason = why
			break
		}
		kept = append(kept, r)
		prev = r.Hash
	}
	if n := uint64(len(kept)); s.headOK && n == s.head && n > 0 && prev != s.headHash {
		kept, prev = kept[:n-1], kept[n-1].Prev
		rep.Reason = fmt.Sprintf("seq %d: the last record's hash is not meta's head hash", n)
	}
	rep.Kept, rep.KeptHash = uint64(len(kept)), prev
	if s.headOK && rep.Kept == s.head {
		rep.PastHead = s.pastHead(prev)
	}
	s.lost(rep)
	rep.Damage = s.damage
	return kept
}

// pick returns the record stored for seq that verifies and follows prev,
// or why there is none.
func (s *salvager) pick(seq uint64, prev Hash) (*Record, string) {
	why := fmt.Sprintf("seq %d could not be read", seq)
	if v, ok := s.tree[seq]; ok {
		r, err := decodeAny(seq, v, prev)
		if err == nil && r.Prev == prev {
			return r, ""
		}
		why = chainReason(seq, err)
	}
	var found *Record
	for _, v := range s.scan[seq] {
		r, err := decodeAny(seq, v, prev)
		switch {
		case err != nil || r.Prev != prev:
			why = chainReason(seq, err)
		case found != nil && found.Hash != r.Hash:
			return nil, fmt.Sprintf("seq %d: two different records found", seq)
		default:
			found = r
		}
	}
	if found == nil {
		return nil, why
	}
	return found, ""
}

// decodeAny decodes the record v stored under seq in the format its first
// byte says (Salvage may not know the file's), prev being the hash of the
// record before: a format-2 record verifies only if it follows prev.
func decodeAny(seq uint64, v []byte, prev Hash) (*Record, error) {
	f := formatOfRecord(v)
	if f == 0 {
		f = FormatVersion // fails, and says why
	}
	return f.decode(seq, v, prev)
}

func chainReason(seq uint64, err error) string {
	var ce *CorruptionError
	if errors.As(err, &ce) {
		return fmt.Sprintf("seq %d: %s", seq, ce.Reason)
	}
	return fmt.Sprintf("seq %d does not continue the hash chain", seq)
}

// pastHead counts the records after the head that chain on from it.
func (s *salvager) pastHead(prev Hash) int {
	n := 0
	for seq := s.head + 1; ; seq++ {
		r, _ := s.pick(seq, prev)
		if r == nil {
			return n
		}
		n, prev = n+1, r.Hash
	}
}

// lost fills the lost range and counts the stranded records: those
// past Kept (up to the head, when meta gave it) that verify on their own.
func (s *salvager) lost(rep *SalvageReport) {
	last := s.head
	for _, seq := range s.seqs() {
		if seq <= rep.Kept || (s.headOK && seq > s.head) || !s.verifies(seq) {
			continue
		}
		rep.Stranded++
		last = max(last, seq)
	}
	if last <= rep.Kept {
		rep.Reason = ""
		return
	}
	rep.LostFrom, rep.LostTo = rep.Kept+1, last
}

// seqs returns every seq a record was found for, once each.
func (s *salvager) seqs() []uint64 {
	all := slices.Collect(maps.Keys(s.tree))
	for seq := range s.scan {
		if _, ok := s.tree[seq]; !ok {
			all = append(all, seq)
		}
	}
	return all
}

// verifies reports whether some stored copy of seq verifies on its own:
// its CRC, framing and, in format 1, its hash (a format-2 record's hash
// needs the record before it).
func (s *salvager) verifies(seq uint64) bool {
	ok := func(v []byte) bool {
		var r Record
		f := formatOfRecord(v)
		return f != 0 && f.decodeInto(&r, seq, v, Hash{}, f != formatV1) == nil
	}
	if v, found := s.tree[seq]; found && ok(v) {
		return true
	}
	return slices.ContainsFunc(s.scan[seq], ok)
}

// scanPages searches every page of the file for bbolt leaf pages and
// keeps the values under 8-byte keys that look like records (checked by
// chain, CRC and hash, later).
func (s *salvager) scanPages(f *os.File) error {
	data, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	s.scanData(data)
	return nil
}

// scanData is scanPages on the file's bytes.
func (s *salvager) scanData(data []byte) {
	size := pageSizeOf(data)
	for off := 0; off+pageHeaderSize <= len(data); off += size {
		h := readPageHeader(data[off:])
		if h.flags != leafPageFlag || h.id != uint64(off/size) {
			continue
		}
		end := min(len(data), off+(1+int(h.overflow))*size)
		s.scanLeaf(data[off:end], int(h.count))
	}
}

// scanLeaf keeps the record-like values of one leaf page (with its
// overflow pages), bounds-checking every element.
func (s *salvager) scanLeaf(p []byte, count int) {
	for i := range count {
		e := pageHeaderSize + i*leafElemSize
		if e+leafElemSize > len(p) {
			return
		}
		flags, pos := le.Uint32(p[e:]), int(le.Uint32(p[e+4:]))
		ks, vs := int(le.Uint32(p[e+8:])), int(le.Uint32(p[e+12:]))
		k := e + pos
		if flags&bucketLeafFlag != 0 || ks != 8 || pos < 0 || k+ks+vs > len(p) || k < 0 || vs < 1+hashFieldLen+crcLen {
			continue
		}
		seq, v := binary.BigEndian.Uint64(p[k:]), p[k+ks:k+ks+vs]
		if formatOfRecord(v) == 0 || slices.ContainsFunc(s.scan[seq], func(b []byte) bool { return bytes.Equal(b, v) }) {
			continue
		}
		s.scan[seq] = append(s.scan[seq], bytes.Clone(v))
	}
}

// pageSizeOf is the page size a valid meta page of data records, or the
// machine's.
func pageSizeOf(data []byte) int {
	if size, ok := validMeta(data, 0); ok && size >= 1024 {
		return size
	}
	for _, size := range []int{4096, 8192, 16384, 65536} {
		if len(data) > size {
			if got, ok := validMeta(data[size:], 1); ok && got == size {
				return size
			}
		}
	}
	return os.Getpagesize()
}
