package eventlog

import (
	"encoding/binary"
	"hash/fnv"
)

// The little of bbolt's page layout (go.etcd.io/bbolt, internal/common
// page.go and meta.go) that the open-time check of the meta pages and
// Salvage's page scan need. bbolt writes it in the machine's byte order;
// flowctl runs on little-endian machines only (amd64, arm64).
const (
	pageHeaderSize  = 16 // id u64, flags u16, count u16, overflow u32
	leafElemSize    = 16 // flags u32, pos u32, ksize u32, vsize u32
	metaPageFlag    = 0x04
	leafPageFlag    = 0x02
	bucketLeafFlag  = 0x01
	boltMagic       = 0xED0CDAED
	boltVersion     = 2
	metaChecksumOff = 56 // the meta's checksum follows 56 bytes of fields
	metaSize        = metaChecksumOff + 8
)

var le = binary.LittleEndian

// pageHeader is the header of a bbolt page.
type pageHeader struct {
	id       uint64
	flags    uint16
	count    uint16
	overflow uint32
}

func readPageHeader(b []byte) pageHeader {
	return pageHeader{id: le.Uint64(b), flags: le.Uint16(b[8:]), count: le.Uint16(b[10:]), overflow: le.Uint32(b[12:])}
}

// validMeta reports whether page (at least a header and a meta) is a
// bbolt meta page with its id, magic, version and checksum right, and
// returns the page size it records.
func validMeta(page []byte, id uint64) (pageSize int, ok bool) {
	if len(page) < pageHeaderSize+metaSize {
		return 0, false
	}
	h := readPageHeader(page)
	m := page[pageHeaderSize : pageHeaderSize+metaSize]
	sum := fnv.New64a()
	sum.Write(m[:metaChecksumOff])
	ok = h.id == id && h.flags == metaPageFlag && le.Uint32(m) == boltMagic &&
		le.Uint32(m[4:]) == boltVersion && le.Uint64(m[metaChecksumOff:]) == sum.Sum64()
	return int(le.Uint32(m[8:])), ok
}
