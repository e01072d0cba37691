package eventlog

import "syscall"

// bulkResidentLimit is how much of the file's memory map TrimResident
// lets stay resident: less than Verify's residentLimit, as the read it
// bounds (an import's fold) holds the state of a project besides.
const bulkResidentLimit = 32 << 20

// TrimResident gives the pages of the file's memory map back to the
// kernel once the process holds more than bulkResidentLimit of file
// pages (as Verify's pager does): a read of the whole file through one
// or more transactions, as an import's fold of each project it appended,
// keeps its resident memory bounded. The pages stay in the page cache; a
// read of one of them again costs a minor fault. Safe while other
// transactions read the map.
func (tx *Tx) TrimResident() {
	p := tx.log.newPager(tx.btx)
	if p.fileResident() > bulkResidentLimit {
		p.advise(syscall.MADV_DONTNEED)
	}
}
