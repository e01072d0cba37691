package projstore

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// This file keeps the exec summary: per exec record, in BucketExecRows
// under the exec's own key (project/id), the few fields the statistics of
// a project's exec records read (package digest's Stats), so that they
// are one scan of small values instead of a read of the log record that
// every exec is stored as (an exec's value is a reference to its event,
// value.go):
//
//	project/id -> uvarint Meta.Seq, uvarint Meta.Version, flags (1: the
//	              run succeeded, 2: it ran code), elapsed ms (float64
//	              bits, uint64 BE), uvarint len(task), task, command
//
// sealed as the projections' values are. Tx.Flush writes a row with its
// exec (flushExecRow) and deletes it with it; a rebuild drops the bucket
// and writes every row again (writeFresh); RebuildProject drops and
// writes a project's (DropProject, WriteProject).
//
// A row counts only while its seq and version are the exec's, which
// ExecRows checks against the exec's reference on every read: a file
// written before the summary existed has no rows, and a flowctl without
// it adds, restores or deletes execs without touching them. Such execs
// are read as before, from their event, one by one; never a wrong row.
// `flowctl rebuild` writes the missing rows.

// BucketExecRows is the exec summary.
const BucketExecRows = "proj_execrow"

const (
	rowSuccess = 1 << iota
	rowCode
)

// ExecRow is what the exec summary keeps of an exec record.
type ExecRow struct {
	ID        string
	Seq       uint64 // the exec's Meta.Seq: the event that recorded (or restored) it
	Task      string
	Command   string
	Code      bool // the record ran code (projection.Exec.Code is not empty)
	Success   bool
	ElapsedMS float64
}

// ExecRowOf is the row of x.
func ExecRowOf(x *projection.Exec) ExecRow {
	return ExecRow{ID: x.ID, Seq: x.Seq, Task: x.Task, Command: x.Command, Code: x.Code != "",
		Success: x.Success, ElapsedMS: x.ElapsedMS}
}

// ExecRowValue is the sealed value of the row of exec x under key.
func ExecRowValue(key []byte, x *projection.Exec) []byte {
	b := binary.AppendUvarint(nil, x.Seq)
	b = binary.AppendUvarint(b, x.Version)
	var flags byte
	if x.Success {
		flags |= rowSuccess
	}
	if x.Code != "" {
		flags |= rowCode
	}
	b = append(b, flags)
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(x.ElapsedMS))
	b = binary.AppendUvarint(b, uint64(len(x.Task)))
	b = append(append(b, x.Task...), x.Command...)
	return Seal(key, b)
}

// parseExecRow parses the checked body of the row of exec id; false when
// it does not parse. str turns its task and command into strings.
func parseExecRow(id string, body []byte, str func([]byte) string) (row ExecRow, version uint64, ok bool) {
	seq, n := binary.Uvarint(body)
	if n <= 0 {
		return row, 0, false
	}
	body = body[n:]
	version, n = binary.Uvarint(body)
	if n <= 0 || len(body) < n+9 {
		return row, 0, false
	}
	flags := body[n]
	elapsed := math.Float64frombits(binary.BigEndian.Uint64(body[n+1:]))
	body = body[n+9:]
	tl, n := binary.Uvarint(body)
	if n <= 0 || uint64(len(body)-n) < tl {
		return row, 0, false
	}
	return ExecRow{ID: id, Seq: seq, Task: str(body[n : n+int(tl)]), Command: str(body[n+int(tl):]), Code: flags&rowCode != 0,
		Success: flags&rowSuccess != 0, ElapsedMS: elapsed}, version, true
}

// flushExecRow brings the exec summary in line with the entity v (or its
// removal) stored under key in bucket: the write path's one hook.
func flushExecRow(tx store.Tx, bucket, key string, v any) error {
	if bucket != BucketExecs {
		return nil
	}
	k := []byte(key)
	x, ok := v.(*projection.Exec)
	if !ok {
		return tx.Delete(BucketExecRows, k)
	}
	return tx.Put(BucketExecRows, k, ExecRowValue(k, x))
}

// produceExecRows sends the rows of mem's execs, in key order.
func produceExecRows(mem *projection.Memory, c *chunker) {
	for _, key := range slices.Sorted(maps.Keys(mem.Execs)) {
		if c.add(record{BucketExecRows, key, ExecRowValue([]byte(key), mem.Execs[key])}); c.stopped {
			return
		}
	}
}

// dropExecRows deletes project's rows.
func dropExecRows(tx store.Tx, project string) error {
	return deletePrefix(tx, BucketExecRows, []byte(project+"/"), func(k []byte) bool {
		p, _ := splitKey(string(k))
		return p == project
	})
}

// ExecRows returns the rows of project's exec records, ordered by seq,
// then id (projection.CompareIDs), and how many of them were read from
// their event because the summary had no row of theirs that counts.
func (s *Tx) ExecRows(project string) (rows []ExecRow, fromLog int, err error) {
	if s.pending != nil && len(s.pending.keys) > 0 {
		if err := s.pending.Flush(); err != nil {
			return nil, 0, err
		}
	}
	if len(s.keys) > 0 { // unflushed execs: read them as they are
		xs, err := s.Execs(project)
		return SortExecRows(execRowsOf(xs)), len(xs), err
	}
	prefix := []byte(project + "/")
	counts, err := s.SummaryCounts(BucketExecs, project)
	if err != nil {
		return nil, 0, err
	}
	n := 0
	for _, c := range counts {
		n += c
	}
	stored, err := s.storedRows(prefix, n)
	if err != nil {
		return nil, 0, err
	}
	rows = make([]ExecRow, 0, n)
	i := 0
	err = store.ScanShared(s.raw, BucketExecs, prefix, func(k, v []byte) error {
		if bytes.IndexByte(k[len(prefix):], '/') >= 0 {
			return nil // another project's ("p/x/X-1" under "p/")
		}
		id := k[len(prefix):]
		for i < len(stored) && stored[i].row.ID < string(id) {
			i++ // the row of an exec that is gone
		}
		body, err := Unseal(BucketExecs, k, v)
		if err != nil {
			return err
		}
		if i < len(stored) && stored[i].row.ID == string(id) && stored[i].matches(body) {
			rows = append(rows, stored[i].row)
			return nil
		}
		x, err := decodeBody[projection.Exec](s.raw, BucketExecs, k, body)
		if err != nil {
			return err
		}
		fromLog++
		rows = append(rows, ExecRowOf(x))
		return nil
	})
	return SortExecRows(rows), fromLog, err
}

// storedRow is a row as the summary holds it, with the version of the
// exec it was written for.
type storedRow struct {
	row     ExecRow
	version uint64
}

// matches reports whether the row was written for the exec whose checked
// value is body: an exec reference to the same seq and version.
func (r *storedRow) matches(body []byte) bool {
	if len(body) == 0 || body[0] != valueExecRef {
		return false
	}
	seq, n := binary.Uvarint(body[1:])
	if n <= 0 {
		return false
	}
	version, m := binary.Uvarint(body[1+n:])
	return m > 0 && seq == r.row.Seq && version == r.version
}

// storedRows reads the rows of a project, under prefix, in key order
// (about n of them); a row that does not parse is an ErrDamaged. Tasks
// and command lines repeat: each is one string.
func (s *Tx) storedRows(prefix []byte, n int) ([]storedRow, error) {
	out := make([]storedRow, 0, n)
	strs := map[string]string{}
	intern := func(b []byte) string {
		if v, ok := strs[string(b)]; ok {
			return v
		}
		v := string(b)
		strs[v] = v
		return v
	}
	err := store.ScanShared(s.raw, BucketExecRows, prefix, func(k, v []byte) error {
		if bytes.IndexByte(k[len(prefix):], '/') >= 0 {
			return nil
		}
		body, err := Unseal(BucketExecRows, k, v)
		if err != nil {
			return err
		}
		row, version, ok := parseExecRow(string(k[len(prefix):]), body, intern)
		if !ok {
			return Damaged(BucketExecRows, bytes.Clone(k), "is not an exec row")
		}
		out = append(out, storedRow{row: row, version: version})
		return nil
	})
	return out, err
}

// ExecRows of a replay in memory: every exec's row.
func (m Mem) ExecRows(project string) ([]ExecRow, int, error) {
	return SortExecRows(execRowsOf(m.ExecsOf(project))), 0, nil
}

func execRowsOf(xs []*projection.Exec) []ExecRow {
	out := make([]ExecRow, len(xs))
	for i, x := range xs {
		out[i] = ExecRowOf(x)
	}
	return out
}

// SortExecRows orders rows by seq, then id (projection.CompareIDs: a
// rollback restores several execs at one seq), and returns them. The
// keys it sorts hold no pointer (a sort of strings under a running GC
// pays a write barrier per move): seq, the id's number and the row's
// index; ids that tie on both are compared whole.
func SortExecRows(rows []ExecRow) []ExecRow {
	order := make([]rowPlace, len(rows))
	sorted := true
	for i := range rows {
		_, num, _ := strings.Cut(rows[i].ID, "-")
		n, _ := strconv.Atoi(num)
		order[i] = rowPlace{rows[i].Seq, n, int32(i)}
		sorted = sorted && (i == 0 || order[i-1].cmp(order[i], rows) <= 0)
	}
	if sorted {
		return rows
	}
	slices.SortFunc(order, func(a, b rowPlace) int { return a.cmp(b, rows) })
	out := make([]ExecRow, len(rows))
	for j, p := range order {
		out[j] = rows[p.i]
	}
	return out
}

// rowPlace is where rows[i] sorts.
type rowPlace struct {
	seq uint64
	n   int // the id's number
	i   int32
}

func (a rowPlace) cmp(b rowPlace, rows []ExecRow) int {
	if c := cmp.Compare(a.seq, b.seq); c != 0 {
		return c
	}
	return projection.CompareIDs(rows[a.i].ID, rows[b.i].ID)
}
