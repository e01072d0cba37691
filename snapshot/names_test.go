package snapshot_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"
	"pgregory.net/rapid"

	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/snapshot"
)

// nameRead is what a reader of a delta's entities passes on, as strings
// (nil and empty told apart: a nil id is not read).
type nameRead struct {
	project bool
	ents    []string
	deleted *snapshot.Deleted
}

func fieldsString(kind int, fields [][]byte, bad uint) string {
	s := fmt.Sprintf("%d %b", kind, bad)
	for _, f := range fields {
		if f == nil {
			s += " nil"
		} else {
			s += fmt.Sprintf(" %q", f)
		}
	}
	return s
}

// bodyNames is EachDeltaEntity of body with NameFields.
func bodyNames(body []byte) (nameRead, error) {
	var r nameRead
	var err error
	r.project, r.deleted, err = snapshot.EachDeltaEntity(body, &snapshot.NameFields, func(kind int, fields [][]byte, bad uint) error {
		r.ents = append(r.ents, fieldsString(kind, fields, bad))
		return nil
	})
	return r, err
}

// sectionNames is the names section of the delta b, read from its head
// alone.
func sectionNames(r *snapshot.NamesReader, b []byte) (snapshot.Header, nameRead, error) {
	var out nameRead
	head := snapshot.Head(b)
	if head == nil {
		return snapshot.Header{}, out, errors.New("no head")
	}
	h, names, err := r.Names(bytes.Clone(head))
	if err != nil {
		return h, out, err
	}
	out.project, out.deleted, err = snapshot.EachName(names, func(kind int, fields [][]byte, bad uint) error {
		out.ents = append(out.ents, fieldsString(kind, fields, bad))
		return nil
	})
	return h, out, err
}

// TestNames_AreTheBodys: for random deltas, the names section of the
// delta PackDeltaNames writes, read from its head alone, is what
// EachDeltaEntity reads of its body with NameFields; CheckNames passes;
// the delta reads (header but for its format, body, decoded delta) as
// the same delta of version 6 does; and every truncation of its head is
// refused.
func TestNames_AreTheBodys(tt *testing.T) {
	tt.Parallel()
	pool := bigState(tt, 30, 20)
	pool.Plans = []*projection.Plan{{Project: "big", ID: "P-1", Title: "one"}, {Project: "big", ID: "P-2", Title: ""}}
	pool.Checkpoints = []*projection.Checkpoint{{Project: "big", ID: "C-1", Label: "a"}}
	var r snapshot.NamesReader
	rapid.Check(tt, func(t *rapid.T) {
		rng := rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 7))
		a, b := randomState(tt, rng, pool), randomState(tt, rng, pool)
		if rng.IntN(3) == 0 {
			b.Project.Description += " changed"
		}
		d := snapshot.Diff(a, b)
		changed := rawOf(d.Changed)
		if d.Changed.Project == nil {
			changed.Project = nil
		}
		body := snapshot.AppendDeltaBody(nil, changed, &d.Deleted)
		h := snapshot.Header{Scope: "big", Seq: 9, BaseSeq: 4, ProjectionVersion: projection.Version}
		b7, h7, err := snapshot.PackDeltaNames(h, body)
		if err != nil {
			t.Fatal(err)
		}
		b6, h6, err := snapshot.PackDeltaSum(h, body)
		if err != nil {
			t.Fatal(err)
		}
		want, err := bodyNames(body)
		if err != nil {
			t.Fatal(err)
		}
		hn, got, err := sectionNames(&r, b7)
		if err != nil {
			t.Fatalf("names: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("names section = %+v\nthe body's     %+v", got, want)
		}
		if err := snapshot.CheckNames(b7); err != nil {
			t.Fatalf("CheckNames: %v", err)
		}
		if h7.Format != snapshot.NamesDeltaVersion || !h7.HasNames() || !h7.IsDelta() || !h7.Summed() || !h7.Packed() {
			t.Fatalf("header %+v", h7)
		}
		fh, err := snapshot.Frame(b7)
		if err != nil || fh != h7 || hn != h7 {
			t.Fatalf("Frame = %+v, %v; Names = %+v; PackDeltaNames %+v", fh, err, hn, h7)
		}
		h6.Format = h7.Format
		if h6 != h7 {
			t.Fatalf("version 7 header %+v, version 6 %+v", h7, h6)
		}
		_, d7, err7 := snapshot.DecodeDelta(b7)
		_, d6, err6 := snapshot.DecodeDelta(b6)
		if err7 != nil || err6 != nil || !reflect.DeepEqual(d7, d6) {
			t.Fatalf("DecodeDelta: %v, %v; the deltas differ: %v", err7, err6, !reflect.DeepEqual(d7, d6))
		}
		if _, c, err := snapshot.Check(b7); err != nil || !bytes.Equal(c, body) {
			t.Fatalf("Check = %v", err)
		}
		head := snapshot.Head(b7)
		for n := range len(head) {
			if _, _, err := r.Names(head[:n:n]); !errors.Is(err, snapshot.ErrCorrupt) {
				t.Fatalf("a head cut to %d of %d bytes read: %v", n, len(head), err)
			}
		}
	})
}

// namesAt is where the names section (compressed) of the delta b of
// version 7 lies.
func namesAt(b []byte) (int, int) {
	n := int(binary.BigEndian.Uint16(b[offDeltaScopeLen:]))
	at := offDeltaScope + n
	k := int(binary.BigEndian.Uint64(b[at:]))
	return at + 8, at + 8 + k
}

// renamed replaces the names section of the delta b of version 7 with
// names (uncompressed), resealing the head's CRC and the whole's.
func renamed(b, names []byte) []byte {
	from, to := namesAt(b)
	stored := s2.Encode(nil, names)
	out := append(bytes.Clone(b[:from-8]), binary.BigEndian.AppendUint64(nil, uint64(len(stored)))...)
	out = append(out, stored...)
	out = append(out, b[to:]...)
	headEnd := from + len(stored) + 16 + 4
	binary.BigEndian.PutUint32(out[headEnd-4:], crc32.Checksum(out[:headEnd-4], castagnoli))
	return reseal(out)
}

// TestNames_Checked: a names section that is not its body's, under
// right CRCs, reads (a reader of the head cannot tell) but fails
// CheckNames; a flipped bit of the head fails both Names and Check, one
// of the body fails Check and CheckNames but not Names.
func TestNames_Checked(t *testing.T) {
	t.Parallel()
	base, cur := deltaStates(t)
	d := snapshot.Diff(base, cur)
	body := snapshot.AppendDeltaBody(nil, rawOf(d.Changed), &d.Deleted)
	b, _, err := snapshot.PackDeltaNames(snapshot.Header{Scope: "p", Seq: 2, BaseSeq: 1}, body)
	if err != nil {
		t.Fatal(err)
	}
	var r snapshot.NamesReader
	if _, _, err := sectionNames(&r, b); err != nil {
		t.Fatal(err)
	}
	// Another delta's names, and an entity's title changed.
	other := snapshot.AppendDeltaBody(nil, &snapshot.RawScope{}, &snapshot.Deleted{})
	lie, _ := appendNamesOf(t, other)
	own, _ := appendNamesOf(t, body)
	changed := bytes.Replace(own, []byte("a changed title"), []byte("a changed titlE"), 1)
	if bytes.Equal(changed, own) {
		t.Fatal("the test's title is not in the names")
	}
	if again := renamed(b, own); !bytes.Equal(again, b) {
		t.Fatal("renamed does not rewrite a delta as PackDeltaNames writes it")
	}
	for _, names := range [][]byte{lie, changed} {
		bad := renamed(b, names)
		if _, _, err := sectionNames(&r, bad); err != nil {
			t.Fatalf("a resealed names section does not read: %v", err)
		}
		if _, _, err := snapshot.Check(bad); err != nil {
			t.Fatalf("Check: %v", err)
		}
		if err := snapshot.CheckNames(bad); !errors.Is(err, snapshot.ErrCorrupt) {
			t.Fatalf("CheckNames of names not the body's = %v", err)
		}
	}
	// A header refused under right checksums: a base not before the seq.
	back := bytes.Clone(b)
	binary.BigEndian.PutUint64(back[14:], 1)
	_, to0 := namesAt(back)
	binary.BigEndian.PutUint32(back[to0+16:], crc32.Checksum(back[:to0+16], castagnoli))
	back = reseal(back)
	if _, _, err := r.Names(snapshot.Head(back)); !errors.Is(err, snapshot.ErrCorrupt) || !strings.Contains(err.Error(), "not before it") {
		t.Fatalf("Names of a delta on a base not before it = %v", err)
	}
	if _, _, err := snapshot.Check(back); !errors.Is(err, snapshot.ErrCorrupt) || !strings.Contains(err.Error(), "not before it") {
		t.Fatalf("Check of a delta on a base not before it = %v", err)
	}
	from, to := namesAt(b)
	for i := range len(b) - 4 {
		flipped := bytes.Clone(b)
		flipped[i] ^= 0x20
		_, _, nerr := r.Names(snapshot.Head(flipped))
		inHead := i < to+20
		if head := snapshot.Head(flipped); head != nil && !inHead && nerr != nil {
			t.Fatalf("byte %d (the body) flipped: the head does not read: %v", i, nerr)
		}
		if inHead && nerr == nil && snapshot.Head(flipped) != nil {
			t.Fatalf("byte %d (the head, names at %d to %d) flipped: the head reads", i, from, to)
		}
		if err := snapshot.CheckNames(flipped); !errors.Is(err, snapshot.ErrCorrupt) {
			t.Fatalf("byte %d flipped: CheckNames = %v", i, err)
		}
	}
}

// appendNamesOf is the names section PackDeltaNames writes for body,
// uncompressed.
func appendNamesOf(tb testing.TB, body []byte) ([]byte, error) {
	tb.Helper()
	b, _, err := snapshot.PackDeltaNames(snapshot.Header{Scope: "p", Seq: 2, BaseSeq: 1}, body)
	if err != nil {
		tb.Fatal(err)
	}
	from, to := namesAt(b)
	return s2.Decode(nil, b[from:to])
}

// FuzzNamesBody: for arbitrary bytes as a delta's body, PackDeltaNames
// writes a delta exactly when EachDeltaEntity reads the body, and then
// its names section reads as EachDeltaEntity reads the body and passes
// CheckNames.
func FuzzNamesBody(f *testing.F) {
	d := smallDelta(f)
	n := int(binaryBE16(d[offDeltaScopeLen:]))
	f.Add(d[offDeltaScope+n+8 : len(d)-4])
	f.Add([]byte{0x80, 0, 0, 0, 0, 0})
	f.Add([]byte{0x81, 0xa5, 't', 'a', 's', 'k', 's', 0x92, 0xc0, 0x81, 0xa2, 'i', 'd', 0x01, 0, 0, 0, 0, 0})
	var r snapshot.NamesReader
	f.Fuzz(func(t *testing.T, body []byte) {
		want, werr := bodyNames(body)
		b, _, err := snapshot.PackDeltaNames(snapshot.Header{Scope: "p", Seq: 2, BaseSeq: 1}, body)
		if (err == nil) != (werr == nil) {
			t.Fatalf("PackDeltaNames = %v, EachDeltaEntity = %v", err, werr)
		}
		if err != nil {
			return
		}
		_, got, err := sectionNames(&r, b)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("names section = %+v, %v\nthe body's     %+v", got, err, want)
		}
		if err := snapshot.CheckNames(b); err != nil {
			t.Fatalf("CheckNames = %v", err)
		}
	})
}

// FuzzNamesHead: Names and EachName never panic on arbitrary bytes, and
// refuse them only with ErrCorrupt.
func FuzzNamesHead(f *testing.F) {
	d := smallDelta(f)
	n := int(binaryBE16(d[offDeltaScopeLen:]))
	b, _, err := snapshot.PackDeltaNames(snapshot.Header{Scope: "p", Seq: 2, BaseSeq: 1}, d[offDeltaScope+n+8:len(d)-4])
	if err != nil {
		f.Fatal(err)
	}
	head := snapshot.Head(b)
	f.Add(head, false)
	f.Add(head[:len(head)-1], false)
	from, to := namesAt(b)
	names, _ := s2.Decode(nil, b[from:to])
	f.Add(names, true)
	f.Add([]byte{0, 1, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0}, true)
	var r snapshot.NamesReader
	f.Fuzz(func(t *testing.T, b []byte, section bool) {
		var err error
		if !section {
			_, b, err = r.Names(b)
		}
		if err == nil {
			_, _, err = snapshot.EachName(b, func(int, [][]byte, uint) error { return nil })
		}
		if err != nil && !errors.Is(err, snapshot.ErrCorrupt) {
			t.Fatalf("err = %v, want ErrCorrupt", err)
		}
	})
}
