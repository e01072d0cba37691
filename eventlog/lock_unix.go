//go:build unix

package eventlog

import (
	"errors"
	"math/rand/v2"
	"os"
	"syscall"
	"time"
)

// lockingOpener returns an OpenFile function for bbolt that takes the
// file's flock itself, retrying with jittered sleeps until the deadline,
// then fails with ErrBusy. bbolt's own flock on the same descriptor then
// succeeds at once. Its fixed 50 ms polling would otherwise serialize
// short CLI commands in steps of 50 ms.
//
// A file replaced while the lock was awaited (Compact renames a new file
// over the old one while it holds the old one's lock) is opened again:
// the lock, and the writes it guards, must be the file's that the path
// names, not those of an unlinked one.
func lockingOpener(exclusive bool, timeout time.Duration) func(string, int, os.FileMode) (*os.File, error) {
	return func(path string, flag int, mode os.FileMode) (*os.File, error) {
		deadline := time.Now().Add(timeout)
		for {
			f, err := os.OpenFile(path, flag, mode)
			if err != nil {
				return nil, err
			}
			if err := lockFile(f, exclusive, deadline); err != nil {
				f.Close()
				return nil, err
			}
			current, err := namedBy(f, path)
			if current || err != nil {
				if err != nil {
					f.Close()
					return nil, err
				}
				return f, nil
			}
			f.Close()
		}
	}
}

// namedBy reports whether path still names the file f has open.
func namedBy(f *os.File, path string) (bool, error) {
	held, err := f.Stat()
	if err != nil {
		return false, err
	}
	named, err := os.Stat(path)
	if err != nil {
		return false, err
	}
	return os.SameFile(held, named), nil
}

func lockFile(f *os.File, exclusive bool, deadline time.Time) error {
	how := syscall.LOCK_SH | syscall.LOCK_NB
	if exclusive {
		how = syscall.LOCK_EX | syscall.LOCK_NB
	}
	wait := 500 * time.Microsecond
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			return err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return ErrBusy
		}
		// Full jitter over an exponentially growing window, capped at 20 ms,
		// so that waiting processes do not wake in lockstep.
		sleep := min(time.Duration(rand.Int64N(int64(wait)))+50*time.Microsecond, left)
		time.Sleep(sleep)
		wait = min(wait*2, 20*time.Millisecond)
	}
}
