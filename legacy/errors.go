package legacy

import (
	"errors"
	"fmt"
	"strings"
)

// BadEntries is every bad entry an import found in its input, in the
// order read: an import checks every entry before it writes anything and
// reports them all in one run (and still writes nothing). Import returns
// it when more than one entry is bad, a lone *ImportError otherwise.
// errors.Is sees the class of each (flow.ErrInvalid, ...), errors.As the
// first *ImportError.
type BadEntries []*ImportError

func (b BadEntries) Error() string {
	var s strings.Builder
	file := b[0].File
	fmt.Fprintf(&s, "%d bad entries", len(b))
	for i, e := range b {
		sep := ": "
		if i > 0 {
			sep = "; "
		}
		s.WriteString(sep)
		if e.File != file || e.Line == 0 {
			s.WriteString(e.Error())
			continue
		}
		fmt.Fprintf(&s, "%s:%d: %v", e.File, e.Line, e.Err)
	}
	return s.String()
}

func (b BadEntries) Unwrap() []error {
	out := make([]error, len(b))
	for i, e := range b {
		out[i] = e
	}
	return out
}

// badEntries collects the bad entries of one input.
type badEntries struct{ list BadEntries }

// add keeps err when it is an entry's (*ImportError) and reports whether
// the caller goes on with the next entry; any other error (a read that
// failed) ends the walk.
func (b *badEntries) add(err error) bool {
	var ie *ImportError
	if !errors.As(err, &ie) {
		return false
	}
	b.list = append(b.list, ie)
	return true
}

// err is nil, the one bad entry, or all of them.
func (b *badEntries) err() error {
	switch len(b.list) {
	case 0:
		return nil
	case 1:
		return b.list[0]
	}
	return b.list
}
