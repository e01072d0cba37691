package eventlog

import (
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"strings"
)

// bbolt finds most damage to a page only when a transaction touches the
// page, and then panics. The functions below turn such a panic into a
// *CorruptionError that names the page in words, so that no Go panic text
// reaches a user.

// pagePanics match the bbolt panic messages that name the damaged page.
var pagePanics = []*regexp.Regexp{
	regexp.MustCompile(`Page expected to be: (\d+)`),
	regexp.MustCompile(`page (\d+): has unexpected type`),
	regexp.MustCompile(`invalid page type: (\d+)`),
	regexp.MustCompile(`^page (\d+): `),
}

// damageError is the *CorruptionError for r, a panic raised by bbolt (or
// a memory fault) while it read a page.
func damageError(r any) error {
	if isFault(r) {
		return &CorruptionError{Reason: "the file is shorter than its pages need (truncated) or could not be read"}
	}
	return &CorruptionError{Reason: damageReason(fmt.Sprint(r))}
}

// damageReason says in words which part of the file a bbolt panic (or a
// structure error of bbolt's Check) found damaged.
func damageReason(msg string) string {
	msg = strings.TrimPrefix(msg, "panic: ")
	for _, re := range pagePanics {
		if m := re.FindStringSubmatch(msg); m != nil {
			if id, err := strconv.ParseUint(m[1], 10, 64); err == nil {
				return fmt.Sprintf("page %d of the file is damaged", id)
			}
		}
	}
	switch {
	case strings.Contains(msg, "freelist"):
		return "the file's list of free pages is damaged"
	case strings.Contains(msg, "high water mark"), strings.Contains(msg, "page ID ("):
		return "a page of the file points past the end of its pages"
	}
	return "a page of the file is damaged"
}

// raisedByBolt reports whether the panic being recovered was raised in
// bbolt's code (a damaged page), not in the caller's. It must be called
// by the deferred function that recovers.
func raisedByBolt() bool {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	panicking := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic" || f.Function == "runtime.sigpanic":
			panicking = true
		case panicking && strings.HasPrefix(f.Function, "runtime."):
		case panicking:
			return strings.HasPrefix(f.Function, "go.etcd.io/bbolt")
		}
		if !more {
			return false
		}
	}
}
