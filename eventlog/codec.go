package eventlog

import (
	"bytes"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// decoder reads the envelope's primitives with a sticky error, and checks
// every length against the bytes left so that a forged length can never
// make it allocate more than the record holds.
type decoder struct {
	*msgpack.Decoder
	r *bytes.Reader
}

func newDecoder(b []byte) decoder {
	r := bytes.NewReader(b)
	return decoder{msgpack.NewDecoder(r), r}
}

func (d decoder) uint(err *error) uint64 {
	if *err != nil {
		return 0
	}
	v, e := d.DecodeUint64()
	*err = e
	return v
}

func (d decoder) int(err *error) int64 {
	if *err != nil {
		return 0
	}
	v, e := d.DecodeInt64()
	*err = e
	return v
}

// raw returns a copy of the next str or bin value; nil for msgpack nil.
func (d decoder) raw(err *error) []byte {
	if *err != nil {
		return nil
	}
	n, e := d.DecodeBytesLen()
	switch {
	case e != nil:
		*err = e
		return nil
	case n < 0:
		return nil
	case n > d.r.Len():
		*err = errorf("length %d runs past the end of the record", n)
		return nil
	}
	b := make([]byte, n)
	_, *err = d.r.Read(b)
	return b
}

func (d decoder) str(err *error) string { return string(d.raw(err)) }

func (d decoder) bytes(err *error) []byte { return d.raw(err) }

// fixed reads a bin value of exactly len(dst) bytes into dst.
func (d decoder) fixed(dst []byte, err *error) {
	b := d.raw(err)
	if *err == nil && len(b) != len(dst) {
		*err = errorf("field is %d bytes, want %d", len(b), len(dst))
	}
	copy(dst, b)
}

// optional reads a bin value that is either nil/empty or exactly len(dst) bytes.
func (d decoder) optional(dst []byte, err *error) {
	b := d.raw(err)
	if *err == nil && len(b) != 0 && len(b) != len(dst) {
		*err = errorf("field is %d bytes, want 0 or %d", len(b), len(dst))
	}
	copy(dst, b)
}

func (d decoder) remaining() int { return d.r.Len() }

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
