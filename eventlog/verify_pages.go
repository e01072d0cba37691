package eventlog

import (
	"bytes"
	"fmt"
	"os"

	bolt "go.etcd.io/bbolt"
)

// The page check is Verify's check of the file's page structure: what
// bbolt's Tx.Check checks, read by this package rather than through
// bbolt, so that it runs beside every other read of the file, for the
// walk's own transaction. bbolt's check cannot:
// on a file opened read-only it loads the free list into the shared
// database handle, unguarded against a transaction that begins meanwhile,
// and it holds every page in a map. It reads the pages with pread rather
// than through the memory map: a page read through the map costs a fault
// to map it and, to keep the resident memory small (pager), a trim to
// unmap it, and every other reader's pages go with the trim; a pread
// costs a copy from the page cache.
//
// It checks, as Tx.Check does: every page of every tree (the root bucket,
// the buckets in it, the buckets in theirs) is reachable once, counting
// the pages a page overflows into; each is a branch or leaf page whose
// header names its own id, within the high water mark; the keys of each
// page are in order and within the range its parent gives them; the free
// list is a free-list page, frees no page twice and no page a tree holds;
// and every page below the high water mark is a meta page, the free list,
// a tree's or free. Its findings name the page ("page N of the file is
// damaged", damageReason).
//
// It runs once the shape check has passed (verify_shape.go), so a tree's
// branch pages hold no cycle: a reader beside it can meet a damaged leaf,
// which bbolt refuses (a header naming another page) with a panic that
// becomes a *CorruptionError, or read garbage that the record walk or the
// comparisons report; Verify reports the page check's finding first.

const (
	freelistPageFlag = 0x10
	metaFreelistOff  = 32         // the free list's page, in a meta
	noFreelist       = ^uint64(0) // a meta's free list when it is not stored
)

// pageCheck is the state of a page check: the file, the pages reached
// and the pages free (a bit each), and a buffer for the pages read at
// each depth of the descent, with the last key of the subtree read below
// it.
type pageCheck struct {
	f       *os.File
	ps, hwm uint64
	reached []uint64
	free    []uint64
	bufs    [][]byte // by depth
	lasts   [][]byte
}

func (c *pageCheck) has(set []uint64, id uint64) bool { return set[id/64]&(1<<(id%64)) != 0 }

// checkPages checks the page structure of the file as btx sees it (see
// above). It returns its first finding as a *CorruptionError.
func (l *Log) checkPages(btx *bolt.Tx) error {
	ps := l.db.Info().PageSize
	if ps <= 0 || btx.Size() == 0 {
		return nil
	}
	f, err := os.Open(l.path)
	if err != nil {
		return err
	}
	defer f.Close()
	c := pageCheck{f: f, ps: uint64(ps)}
	if err := c.check(uint64(btx.ID())); err != nil {
		return &CorruptionError{Reason: damageReason(err.Error())}
	}
	return nil
}

// check checks the pages of the transaction txid.
func (c *pageCheck) check(txid uint64) error {
	meta, ok := c.meta(txid)
	if !ok {
		return &shapeError{page: 0, why: "no meta page holds the transaction's id"}
	}
	hwm, root, freelist := c.hwm, le.Uint64(meta[metaRootOff:]), le.Uint64(meta[metaFreelistOff:])
	c.reached, c.free = make([]uint64, (hwm+63)/64), make([]uint64, (hwm+63)/64)
	for id := range min(hwm, 2) {
		c.reached[0] |= 1 << id
	}
	if err := c.freelist(freelist); err != nil {
		return err
	}
	if _, err := c.tree(root, nil, nil, 0); err != nil {
		return err
	}
	for id := range hwm {
		if !c.has(c.reached, id) && !c.has(c.free, id) {
			return &shapeError{page: id, why: "unreachable unfreed"}
		}
	}
	return nil
}

// meta finds the meta of transaction txid and returns it, valid until
// the next read, setting c.hwm (bounded by the file's pages).
func (c *pageCheck) meta(txid uint64) ([]byte, bool) {
	fi, err := c.f.Stat()
	if err != nil {
		return nil, false
	}
	for id := range uint64(2) {
		p, err := c.read(id, 0, 0)
		if err != nil {
			continue
		}
		if m := p[pageHeaderSize:]; le.Uint64(m[metaTxidOff:]) == txid {
			c.hwm = min(le.Uint64(m[metaHWMOff:]), uint64(fi.Size())/c.ps)
			return m, true
		}
	}
	return nil, false
}

// read reads page id and the overflow pages after it into the buffer of
// depth.
func (c *pageCheck) read(id uint64, overflow uint32, depth int) ([]byte, error) {
	for len(c.bufs) <= depth {
		c.bufs, c.lasts = append(c.bufs, nil), append(c.lasts, nil)
	}
	n := (uint64(overflow) + 1) * c.ps
	if uint64(cap(c.bufs[depth])) < n {
		c.bufs[depth] = make([]byte, n)
	}
	b := c.bufs[depth][:n]
	if _, err := c.f.ReadAt(b, int64(id*c.ps)); err != nil {
		return nil, &shapeError{page: id, why: fmt.Sprintf("it cannot be read: %v", err)}
	}
	return b, nil
}

// reach marks page id and the pages it overflows into reached, and
// returns its bytes, read into the buffer of depth; it refuses a page
// past the high water mark, one reached already or free, and a header
// that names another page.
func (c *pageCheck) reach(id uint64, depth int) ([]byte, pageHeader, error) {
	if id < 2 || id >= c.hwm {
		return nil, pageHeader{}, &shapeError{page: id, why: "a page points past the end of the pages"}
	}
	p, err := c.read(id, 0, depth)
	if err != nil {
		return nil, pageHeader{}, err
	}
	h := readPageHeader(p)
	switch {
	case h.id != id:
		return nil, h, &shapeError{page: id, why: "its header names another page"}
	case id+uint64(h.overflow) >= c.hwm:
		return nil, h, &shapeError{page: id, why: "it overflows past the end of the pages"}
	}
	for i := id; i <= id+uint64(h.overflow); i++ {
		switch {
		case c.has(c.reached, i):
			return nil, h, &shapeError{page: i, why: "page is pointed to twice"}
		case c.has(c.free, i):
			return nil, h, &shapeError{page: i, why: "a page in use is on the free list"}
		}
		c.reached[i/64] |= 1 << (i % 64)
	}
	if h.overflow > 0 {
		if p, err = c.read(id, h.overflow, depth); err != nil {
			return nil, h, err
		}
	}
	return p, h, nil
}

// freelist reads the free list stored on page id (noFreelist: none) and
// marks its pages free, refusing a page freed twice.
func (c *pageCheck) freelist(id uint64) error {
	if id == noFreelist {
		return nil
	}
	p, h, err := c.reach(id, 0)
	if err != nil {
		return err
	}
	if h.flags != freelistPageFlag {
		return fmt.Errorf("the freelist's page %d is not a freelist page", id)
	}
	n, at := uint64(h.count), uint64(pageHeaderSize)
	if n == 0xFFFF { // the count overflows into the first id
		n, at = le.Uint64(p[at:]), at+8
	}
	if n > (uint64(len(p))-at)/8 {
		return fmt.Errorf("the freelist's page %d lists more ids than it holds", id)
	}
	for i := range n {
		f := le.Uint64(p[at+8*i:])
		switch {
		case f < 2 || f >= c.hwm:
			return fmt.Errorf("the freelist frees page %d, past the end of the pages", f)
		case c.has(c.free, f):
			return &shapeError{page: f, why: "already freed"}
		case c.has(c.reached, f):
			return &shapeError{page: f, why: "a page in use is on the free list"}
		}
		c.free[f/64] |= 1 << (f % 64)
	}
	return nil
}

// tree checks the tree whose root is page id, whose keys must be at least
// lo and below hi (nil: no bound), and the trees of the buckets in its
// leaves, reading its root into the buffer of depth (and its children
// into those below). It returns the tree's last key, valid until the next
// read at depth.
func (c *pageCheck) tree(id uint64, lo, hi []byte, depth int) (last []byte, err error) {
	p, h, err := c.reach(id, depth)
	if err != nil {
		return nil, err
	}
	n := uint64(h.count)
	switch h.flags {
	case branchPageFlag:
		if n == 0 || pageHeaderSize+n*branchElemSize > uint64(len(p)) {
			return nil, &shapeError{page: id, why: "a branch page with no elements or more than it holds"}
		}
		prev := lo
		for i := range n {
			e := pageHeaderSize + i*branchElemSize
			key, ok := c.key(p, e, le.Uint32(p[e:]), le.Uint32(p[e+4:]), 0)
			if !ok {
				return nil, &shapeError{page: id, why: "a key lies outside its page"}
			}
			if prev != nil && (bytes.Compare(prev, key) > 0 || i > 0 && bytes.Equal(prev, key)) || hi != nil && bytes.Compare(key, hi) >= 0 {
				return nil, &shapeError{page: id, why: "its keys are out of order"}
			}
			next := hi
			if i+1 < n {
				f := e + branchElemSize
				if next, ok = c.key(p, f, le.Uint32(p[f:]), le.Uint32(p[f+4:]), 0); !ok {
					return nil, &shapeError{page: id, why: "a key lies outside its page"}
				}
			}
			if last, err = c.tree(le.Uint64(p[e+8:]), key, next, depth+1); err != nil {
				return nil, err
			}
			// The child's buffer is read again by the next child.
			c.lasts[depth] = append(c.lasts[depth][:0], last...)
			prev = c.lasts[depth]
		}
		return prev, nil
	case leafPageFlag:
		if pageHeaderSize+n*leafElemSize > uint64(len(p)) {
			return nil, &shapeError{page: id, why: "a leaf page with more elements than it holds"}
		}
		prev := lo
		for i := range n {
			e := pageHeaderSize + i*leafElemSize
			key, ok := c.key(p, e, le.Uint32(p[e+4:]), le.Uint32(p[e+8:]), le.Uint32(p[e+12:]))
			if !ok {
				return nil, &shapeError{page: id, why: "a key or value lies outside its page"}
			}
			if prev != nil && (bytes.Compare(prev, key) > 0 || i > 0 && bytes.Equal(prev, key)) || hi != nil && bytes.Compare(key, hi) >= 0 {
				return nil, &shapeError{page: id, why: "its keys are out of order"}
			}
			prev = key
			if le.Uint32(p[e:])&bucketLeafFlag != 0 {
				if err := c.bucket(id, p, e, key, depth+1); err != nil {
					return nil, err
				}
			}
		}
		return prev, nil
	}
	return nil, &shapeError{page: id, why: fmt.Sprintf("has unexpected type/flags: %#x", h.flags)}
}

// key is the key of the element at e of page p, at pos from it, of size
// ksize, followed by a value of vsize; false when they lie outside p.
func (c *pageCheck) key(p []byte, e uint64, pos, ksize, vsize uint32) ([]byte, bool) {
	from := e + uint64(pos)
	to := from + uint64(ksize)
	if to+uint64(vsize) > uint64(len(p)) {
		return nil, false
	}
	return p[from:to:to], true
}

// bucket checks the tree of the bucket whose entry is the leaf element at
// e of page id (p), under key: its value starts with the bucket's root
// page, 0 for a bucket inline in the value, which bbolt's check skips too.
func (c *pageCheck) bucket(id uint64, p []byte, e uint64, key []byte, depth int) error {
	at := e + uint64(le.Uint32(p[e+4:])) + uint64(le.Uint32(p[e+8:]))
	if le.Uint32(p[e+12:]) < 16 {
		return &shapeError{page: id, why: fmt.Sprintf("bucket %q has no header", key)}
	}
	if root := le.Uint64(p[at:]); root != 0 {
		_, err := c.tree(root, nil, nil, depth)
		return err
	}
	return nil
}
