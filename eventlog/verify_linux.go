package eventlog

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"

	bolt "go.etcd.io/bbolt"
)

// residentLimit is how much of the file's memory map Verify lets stay
// resident before it gives the pages back.
const residentLimit = 64 << 20

// newPager returns a pager over the part of the file's memory map that
// btx can see.
func (l *Log) newPager(btx *bolt.Tx) *pager {
	return &pager{data: l.db.Info().Data, size: uintptr(btx.Size()), page: uintptr(os.Getpagesize())}
}

// sequential advises the map from bbolt's MADV_RANDOM to MADV_NORMAL
// until restore is called (the last restore, when calls nest): with
// MADV_RANDOM each fault maps one page, with MADV_NORMAL the kernel maps
// the cached pages around it too, which a forward walk takes at a tenth
// of the faults.
func (p *pager) sequential() (restore func()) {
	if p.normal.Add(1) == 1 {
		p.advise(syscall.MADV_NORMAL)
	}
	return func() {
		if p.normal.Add(-1) == 0 {
			p.advise(syscall.MADV_RANDOM)
		}
	}
}

// A pager keeps the resident part of the file's memory map small: trim
// gives its pages back to the kernel (madvise MADV_DONTNEED) once the
// process holds more than residentLimit of file pages. They leave the
// process's resident set and stay in the page cache, so a read of one of
// them again costs a minor fault. The map is shared and read-only:
// dropping pages never loses data, and is safe while other goroutines
// read them.
type pager struct {
	data, size, page uintptr
	normal           atomic.Int32 // sequential's calls not yet restored
}

func (p *pager) advise(advice uintptr) {
	if p.data != 0 && p.size > 0 {
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, p.data, p.size, advice)
	}
}

// trim drops the map's pages if the process holds too many file pages.
func (p *pager) trim() {
	if p.fileResident() > residentLimit {
		p.advise(syscall.MADV_DONTNEED)
	}
}

// fileResident is the size of the process's resident file pages, from
// /proc/self/statm ("size resident shared ..."); on an error it says the
// limit is passed.
func (p *pager) fileResident() uintptr {
	fd, err := statm()
	if err != nil {
		return residentLimit + 1
	}
	var buf [128]byte // trim runs on the page check's goroutine and the walk's at once
	n, err := syscall.Pread(fd, buf[:], 0)
	if err != nil || n <= 0 {
		return residentLimit + 1
	}
	f := bytes.Fields(buf[:n])
	if len(f) < 3 {
		return residentLimit + 1
	}
	shared, err := strconv.ParseUint(string(f[2]), 10, 64)
	if err != nil {
		return residentLimit + 1
	}
	return uintptr(shared) * p.page
}

// statm is /proc/self/statm opened once for the process, which each read
// from its start tells anew: a trim every millisecond of verify's page
// check opened and closed it every time.
var statm = sync.OnceValues(func() (int, error) {
	return syscall.Open("/proc/self/statm", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
})
