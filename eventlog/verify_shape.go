package eventlog

import (
	"fmt"
	"unsafe"

	bolt "go.etcd.io/bbolt"
)

// The shape check runs before anything else reads the file: the check
// of the page structure (verify_pages.go), the record walk and the
// caller's reads then run beside each other. A read of a damaged page
// panics (recovered into a *CorruptionError) or reads garbage, but ends;
// what could make a read never end is a branch page that leads back to
// itself, which a cursor would descend forever. The
// shape check reads the branch pages of the root bucket and of every
// bucket in it, and the header of each page they point to, and refuses a
// page pointed to twice (a cycle, or two parents), a page past the high
// water mark, a header whose id is not its own, and a type other than
// branch or leaf. It reads no leaf's elements: a fraction of the pages'
// bytes, in one pass. Every tree whose branch pages pass is a tree: each
// descent ends within as many steps as it has pages.
//
// The shape check finds less than checkPages, and what it finds it
// names as checkPages does ("page N of the file is damaged"). When it
// refuses the file, Verify reports that and reads nothing more.
//
// What it leaves: a leaf-level pointer to a page no tree holds that is a
// branch page (a freed one, say) whose own children lead back up. That
// takes a damaged pointer holding exactly such a page's id; every other
// read of such a file (any command's) would loop the same way.

const (
	branchPageFlag = 0x01
	branchElemSize = 16 // pos u32, ksize u32, pgid u64
	metaRootOff    = 16 // the root bucket's root page, in a meta
	metaHWMOff     = 40 // the high water mark (pages in use)
	metaTxidOff    = 48
)

// shapeError is a problem the shape check found: a page and what is
// wrong with it.
type shapeError struct {
	page uint64
	why  string
}

func (e *shapeError) Error() string { return fmt.Sprintf("page %d: %s", e.page, e.why) }

// checkShape checks that the root bucket's pages and those of every
// bucket in it form trees (see above). It reads btx's pages through the
// file's memory map, under MADV_NORMAL (a parent's children are mostly
// pages in a row), trimming through pg as it goes.
func (l *Log) checkShape(btx *bolt.Tx, pg *pager) error {
	info := l.db.Info()
	size := uintptr(btx.Size())
	if info.Data == 0 || size == 0 || info.PageSize <= 0 {
		return nil
	}
	// The map is outside Go's heap and stays in place while btx is open:
	// its address, which bbolt gives as a uintptr, is read as a pointer.
	base := *(*unsafe.Pointer)(unsafe.Pointer(&info.Data))
	s := shape{data: unsafe.Slice((*byte)(base), size), ps: uint64(info.PageSize), pg: pg}
	defer pg.sequential()()
	root, ok := s.meta(uint64(btx.ID()))
	if !ok {
		return &shapeError{page: 0, why: "no meta page holds the transaction's id"}
	}
	s.seen = make([]uint64, (s.hwm+63)/64)
	if err := s.tree(root); err != nil {
		return err
	}
	return btx.ForEach(func(_ []byte, b *bolt.Bucket) error {
		if id := uint64(b.RootPage()); id != 0 { // 0: an inline bucket, in its parent's page
			return s.tree(id)
		}
		return nil
	})
}

// shape is the state of a shape check: the mapped pages, their size, the
// high water mark and the pages seen so far (a bit each).
type shape struct {
	data []byte
	ps   uint64
	hwm  uint64
	seen []uint64
	pg   *pager
	n    int // branch pages read
}

// meta finds the meta page of transaction txid and returns its root
// bucket's root page, setting s.hwm.
func (s *shape) meta(txid uint64) (root uint64, ok bool) {
	for id := range uint64(2) {
		p := s.page(id)
		if p == nil || len(p) < pageHeaderSize+metaSize {
			continue
		}
		m := p[pageHeaderSize:]
		if le.Uint64(m[metaTxidOff:]) == txid {
			s.hwm = min(le.Uint64(m[metaHWMOff:]), uint64(len(s.data))/s.ps)
			return le.Uint64(m[metaRootOff:]), true
		}
	}
	return 0, false
}

// page is the first page-size bytes of page id, nil past the map.
func (s *shape) page(id uint64) []byte {
	if id >= uint64(len(s.data))/s.ps {
		return nil
	}
	return s.data[id*s.ps : (id+1)*s.ps]
}

// tree checks the tree whose root is page id, a level at a time. bbolt's
// trees are balanced: all of a tree's leaves are at one depth. The first
// page of each level says whether it is a level of branches, whose pages
// are all read, or of leaves, which are not read: only their ids are
// checked, to be in the file and to be no page already seen. A cursor
// that meets a branch page where a leaf should be can then only descend
// into pages no tree holds, never back into one.
func (s *shape) tree(root uint64) error {
	level := []uint64{root}
	for len(level) > 0 {
		for _, id := range level {
			if err := s.see(id); err != nil {
				return err
			}
		}
		if p := s.page(level[0]); readPageHeader(p).flags&branchPageFlag == 0 {
			return nil // leaves
		}
		var next []uint64
		for _, id := range level {
			var err error
			if next, err = s.branch(id, next); err != nil {
				return err
			}
		}
		level = next
	}
	return nil
}

// see marks page id seen, and refuses it when it is not a page of the
// file's or was seen already.
func (s *shape) see(id uint64) error {
	if id < 2 || id >= s.hwm {
		return &shapeError{page: id, why: "a page points past the end of the pages"}
	}
	if s.seen[id/64]&(1<<(id%64)) != 0 {
		return &shapeError{page: id, why: "page is pointed to twice"}
	}
	s.seen[id/64] |= 1 << (id % 64)
	return nil
}

// branch appends the children of page id, which must be a branch page,
// to next.
func (s *shape) branch(id uint64, next []uint64) ([]uint64, error) {
	if s.n++; s.n%trimStep == 0 {
		s.pg.trim()
	}
	p := s.page(id)
	h := readPageHeader(p)
	switch {
	case h.id != id:
		return nil, &shapeError{page: id, why: "its header names another page"}
	case h.flags != branchPageFlag:
		return nil, &shapeError{page: id, why: "a leaf or no page among branches"}
	case id+uint64(h.overflow) >= s.hwm:
		return nil, &shapeError{page: id, why: "it overflows past the end of the pages"}
	}
	n := uint64(h.count)
	if n == 0 || pageHeaderSize+n*branchElemSize > (uint64(h.overflow)+1)*s.ps {
		return nil, &shapeError{page: id, why: "a branch page with no elements or more than it holds"}
	}
	if h.overflow > 0 {
		p = s.data[id*s.ps : (id+1+uint64(h.overflow))*s.ps]
	}
	for i := range n {
		next = append(next, le.Uint64(p[pageHeaderSize+i*branchElemSize+8:]))
	}
	return next, nil
}
