package eventlog

import (
	"errors"
	"fmt"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// readFixture appends 10 events: streams "a" (seqs 1,3,5,7,9), "ab" (2,6,10)
// and "b" (4,8); project "p" on odd seqs, "p1" on 2 and 4.
func readFixture(t *testing.T) *Log {
	t.Helper()
	l := mustOpen(t)
	streams := []string{"a", "ab", "a", "b", "a", "ab", "a", "b", "a", "ab"}
	for i, s := range streams {
		e := ev("e", fmt.Sprint(i+1))
		switch {
		case i%2 == 0:
			e.Project = "p"
		case i < 4:
			e.Project = "p1"
		}
		mustAppend(t, l, s, Any, e)
	}
	return l
}

func TestLog_ReadRange(t *testing.T) {
	l := readFixture(t)
	tests := []struct {
		name     string
		from, to uint64
		want     []uint64
	}{
		{"OK/All", 0, 0, seqRange(1, 10)},
		{"OK/FromOne", 1, 0, seqRange(1, 10)},
		{"OK/FromTo", 3, 5, []uint64{3, 4, 5}},
		{"OK/One", 7, 7, []uint64{7}},
		{"OK/ToPastHead", 8, 100, []uint64{8, 9, 10}},
		{"OK/FromPastHead", 11, 0, nil},
		{"OK/FromAfterTo", 5, 3, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustCollect(t, func(fn func(*Record) error) error { return l.ReadRange(tt.from, tt.to, fn) })
			if !equalSeqs(seqsOf(got), tt.want) {
				t.Fatalf("ReadRange(%d, %d) = %v, want %v", tt.from, tt.to, seqsOf(got), tt.want)
			}
			for _, r := range got {
				if string(r.Data) != fmt.Sprint(r.Seq) {
					t.Errorf("seq %d has data %q", r.Seq, r.Data)
				}
			}
		})
	}

	t.Run("ErrStop", func(t *testing.T) {
		var got []uint64
		err := l.ReadRange(0, 0, func(r *Record) error {
			got = append(got, r.Seq)
			if r.Seq == 4 {
				return fmt.Errorf("enough: %w", ErrStop)
			}
			return nil
		})
		if err != nil || !equalSeqs(got, []uint64{1, 2, 3, 4}) {
			t.Fatalf("ReadRange = %v, %v; want [1 2 3 4], nil", got, err)
		}
	})

	t.Run("ErrCallback", func(t *testing.T) {
		errMine := errors.New("mine")
		err := l.ReadRange(0, 0, func(*Record) error { return errMine })
		if !errors.Is(err, errMine) {
			t.Fatalf("err = %v, want the callback's error", err)
		}
	})
}

func TestLog_ReadStream(t *testing.T) {
	l := readFixture(t)
	tests := []struct {
		name   string
		stream string
		from   uint64
		want   []uint64
	}{
		{"OK/A", "a", 0, []uint64{1, 3, 5, 7, 9}},
		{"OK/AFromVersion3", "a", 3, []uint64{5, 7, 9}},
		{"OK/AFromLast", "a", 5, []uint64{9}},
		{"OK/APastHead", "a", 6, nil},
		{"OK/AB", "ab", 1, []uint64{2, 6, 10}},
		{"OK/B", "b", 0, []uint64{4, 8}},
		{"OK/Missing", "nope", 0, nil},
		{"OK/PrefixOfOther", "", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustCollect(t, func(fn func(*Record) error) error { return l.ReadStream(tt.stream, tt.from, fn) })
			if !equalSeqs(seqsOf(got), tt.want) {
				t.Fatalf("ReadStream(%q, %d) = %v, want %v", tt.stream, tt.from, seqsOf(got), tt.want)
			}
			for i, r := range got {
				if r.Stream != tt.stream || (i > 0 && r.Version != got[i-1].Version+1) {
					t.Errorf("record %d: stream %q version %d", r.Seq, r.Stream, r.Version)
				}
			}
		})
	}

	t.Run("ErrStop", func(t *testing.T) {
		var got []uint64
		err := l.ReadStream("a", 0, func(r *Record) error { got = append(got, r.Seq); return ErrStop })
		if err != nil || !equalSeqs(got, []uint64{1}) {
			t.Fatalf("ReadStream = %v, %v; want [1], nil", got, err)
		}
	})
}

func TestLog_ReadProject(t *testing.T) {
	l := readFixture(t)
	tests := []struct {
		name    string
		project string
		from    uint64
		want    []uint64
	}{
		{"OK/P", "p", 0, []uint64{1, 3, 5, 7, 9}},
		{"OK/PFromSeq", "p", 4, []uint64{5, 7, 9}},
		{"OK/PFromExactSeq", "p", 5, []uint64{5, 7, 9}},
		{"OK/P1", "p1", 0, []uint64{2, 4}},
		{"OK/Missing", "q", 0, nil},
		{"OK/NoProject", "", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustCollect(t, func(fn func(*Record) error) error { return l.ReadProject(tt.project, tt.from, fn) })
			if !equalSeqs(seqsOf(got), tt.want) {
				t.Fatalf("ReadProject(%q, %d) = %v, want %v", tt.project, tt.from, seqsOf(got), tt.want)
			}
			for _, r := range got {
				if r.Project != tt.project {
					t.Errorf("seq %d has project %q", r.Seq, r.Project)
				}
			}
		})
	}

	t.Run("ErrStop", func(t *testing.T) {
		n := 0
		err := l.ReadProject("p", 0, func(*Record) error { n++; return ErrStop })
		if err != nil || n != 1 {
			t.Fatalf("ReadProject read %d records, err %v; want 1, nil", n, err)
		}
	})
}

func TestTx_Lookups(t *testing.T) {
	l := mustOpen(t)
	mustAppend(t, l, "s", NoStream, evID(1, "a", "1"), evID(2, "a", "2"))
	mustAppend(t, l, "t", NoStream, evID(3, "a", "3"))
	err := l.View(func(tx *Tx) error {
		if tx.Writable() {
			t.Error("View's Tx is writable")
		}
		if v, seq := tx.StreamVersion("s"); v != 2 || seq != 2 {
			t.Errorf("StreamVersion(s) = %d, %d; want 2, 2", v, seq)
		}
		if v, seq := tx.StreamVersion("nope"); v != 0 || seq != 0 {
			t.Errorf("StreamVersion(nope) = %d, %d; want 0, 0", v, seq)
		}
		if got := tx.SeqOf(testID(3)); got != 3 {
			t.Errorf("SeqOf(id 3) = %d, want 3", got)
		}
		if got := tx.SeqOf(testID(4)); got != 0 {
			t.Errorf("SeqOf(unknown) = %d, want 0", got)
		}
		for _, seq := range []uint64{0, 4, 1 << 40} {
			if r, err := tx.Record(seq); r != nil || err != nil {
				t.Errorf("Record(%d) = %v, %v; want nil, nil", seq, r, err)
			}
		}
		r, err := tx.Record(2)
		if err != nil || r.ID != testID(2) || r.Version != 2 {
			t.Errorf("Record(2) = %+v, %v", r, err)
		}
		if _, err := tx.Append("s", Any, ev("a", "x")); !errors.Is(err, ErrReadOnly) {
			t.Errorf("Append in View: err = %v, want ErrReadOnly", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTx_StreamVersion reads stream heads from stream_idx: the last entry
// of a stream whose keys are followed by another stream's, by none (the
// end of the bucket), and streams that do not exist around them.
func TestTx_StreamVersion(t *testing.T) {
	l := readFixture(t) // keys in order: a (v5, seq 9), b (v2, seq 8), ab (v3, seq 10)
	tests := []struct {
		stream       string
		version, seq uint64
	}{
		{"a", 5, 9}, {"b", 2, 8}, {"ab", 3, 10},
		{"0", 0, 0}, {"aa", 0, 0}, {"c", 0, 0}, {"zz", 0, 0}, {"abc", 0, 0}, {"a\xff", 0, 0},
	}
	err := l.View(func(tx *Tx) error {
		for _, tt := range tests {
			if v, seq := tx.StreamVersion(tt.stream); v != tt.version || seq != tt.seq {
				t.Errorf("StreamVersion(%q) = %d, %d; want %d, %d", tt.stream, v, seq, tt.version, tt.seq)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTx_Append_MalformedStreamHead: a damaged last stream_idx entry is
// corruption, never a stream that starts over at version 1.
func TestTx_Append_MalformedStreamHead(t *testing.T) {
	path := newLogFile(t, fixtureN)
	rawUpdate(t, path, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketStreamIdx).Put(streamIdxKey("s1", 99), []byte{1, 2, 3})
	})
	l, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Append("s1", Any, ev("e", "x")); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Append: err = %v, want ErrCorrupt", err)
	}
	if got := mustHead(t, l); got != fixtureN {
		t.Fatalf("head %d after a refused append, want %d", got, fixtureN)
	}
}

// TestLog_ReadStream_Chunks appends one stream in batches of several sizes
// that start and end on both sides of stream_idx chunk boundaries, with
// another stream in between, and reads it from every interesting version.
func TestLog_ReadStream_Chunks(t *testing.T) {
	l := mustOpen(t)
	version := uint64(0)
	for i, n := range []int{1, streamChunk - 2, 1, 2, streamChunk, 3 * streamChunk, 5} {
		batch := make([]Event, n)
		for j := range batch {
			batch[j] = ev("e", fmt.Sprint(version+uint64(j)+1))
		}
		got := mustAppend(t, l, "long", Exact(version), batch...)
		version += uint64(n)
		if got.Version != version {
			t.Fatalf("batch %d: version %d, want %d", i, got.Version, version)
		}
		mustAppend(t, l, "other", Any, ev("o", ""))
	}
	for _, from := range []uint64{0, 1, 2, streamChunk - 1, streamChunk, streamChunk + 1, 2 * streamChunk, 2*streamChunk + 1, version, version + 1, 1 << 62} {
		var got []uint64
		err := l.ReadStream("long", from, func(r *Record) error {
			if string(r.Data) != fmt.Sprint(r.Version) {
				t.Errorf("version %d has data %q", r.Version, r.Data)
			}
			got = append(got, r.Version)
			return nil
		})
		if err != nil {
			t.Fatalf("ReadStream(from %d): %v", from, err)
		}
		if want := seqRange(max(from, 1), version); !equalSeqs(got, want) {
			t.Errorf("ReadStream(from %d) gave versions %v, want %v", from, got, want)
		}
	}
	_ = l.View(func(tx *Tx) error {
		if v, _ := tx.StreamVersion("long"); v != version {
			t.Errorf("StreamVersion = %d, want %d", v, version)
		}
		return nil
	})
}

// TestLog_ReadProject_Chunks appends a project's events in batches that
// cross project_idx chunk boundaries, with another project's events in
// between, and reads it from seqs in, between and around its chunks.
func TestLog_ReadProject_Chunks(t *testing.T) {
	l := mustOpen(t)
	var want []uint64 // the seqs of project "p"
	for i, n := range []int{1, projectChunk - 2, 1, 2, projectChunk, 3 * projectChunk, 5} {
		batch := make([]Event, n)
		for j := range batch {
			batch[j] = ev("e", "")
			batch[j].Project = "p"
		}
		got := mustAppend(t, l, fmt.Sprint("s", i%3), Any, batch...)
		want = append(want, got.Seqs...)
		other := ev("o", "")
		other.Project = "q"
		mustAppend(t, l, "other", Any, other)
	}
	head := mustHead(t, l)
	for _, from := range []uint64{0, 1, 2, 3, want[projectChunk-1], want[projectChunk-1] + 1, want[projectChunk], want[2*projectChunk] + 1, head, head + 1, 1 << 62} {
		var got []uint64
		err := l.ReadProject("p", from, func(r *Record) error {
			got = append(got, r.Seq)
			return nil
		})
		if err != nil {
			t.Fatalf("ReadProject(from %d): %v", from, err)
		}
		var exp []uint64
		for _, s := range want {
			if s >= from {
				exp = append(exp, s)
			}
		}
		if !equalSeqs(got, exp) {
			t.Errorf("ReadProject(from %d) gave %d seqs %v, want %d", from, len(got), got, len(exp))
		}
	}
}
