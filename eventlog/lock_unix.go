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
func lockingOpener(exclusive bool, timeout time.Duration) func(string, int, os.FileMode) (*os.File, error) {
	return func(path string, flag int, mode os.FileMode) (*os.File, error) {
		f, err := os.OpenFile(path, flag, mode)
		if err != nil {
			return nil, err
		}
		if err := lockFile(f, exclusive, timeout); err != nil {
			f.Close()
			return nil, err
		}
		return f, nil
	}
}

func lockFile(f *os.File, exclusive bool, timeout time.Duration) error {
	how := syscall.LOCK_SH | syscall.LOCK_NB
	if exclusive {
		how = syscall.LOCK_EX | syscall.LOCK_NB
	}
	deadline := time.Now().Add(timeout)
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
