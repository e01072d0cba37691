package main

import (
	"os"
	"strconv"
	"syscall"
)

// fileSystems names the statfs magic numbers of common Linux file systems.
var fileSystems = map[int64]string{
	0xEF53:     "ext4",
	0x58465342: "xfs",
	0x9123683E: "btrfs",
	0x01021994: "tmpfs",
	0x794C7630: "overlayfs",
	0x2FC12FC1: "zfs",
	0x65735546: "fuse",
	0x6969:     "nfs",
}

// fsType names the file system that holds dir.
func fsType(dir string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return "unknown file system"
	}
	if name, ok := fileSystems[int64(st.Type)]; ok {
		return name
	}
	return "file system type 0x" + strconv.FormatInt(int64(st.Type), 16)
}

// allocated returns the bytes the file system allocated for the file at
// path: less than its size where it is sparse (bbolt grows a file by
// truncating it larger, in steps of 16 MB). The file is synced first: a
// file system that allocates at writeback (ext4, xfs) counts no blocks
// for data still in the page cache.
func allocated(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return 0, err
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return 0, err
	}
	return st.Blocks * 512, nil
}
