package snapshot

// UintField returns the value of an entity encoding's unsigned integer
// field key (0 when it does not have it, or has it as nil); ok false when
// the encoding is not a map or the field is not an unsigned integer (a
// non-negative fixint, uint 8 to 64). As StringFields, the encoding is
// read up to key, each key taken once.
func UintField(e []byte, key string) (uint64, bool) {
	n, at, ok := mapLen(e, 0)
	if !ok {
		return 0, false
	}
	for range n {
		k, next, ok := strBytes(e, at)
		if !ok {
			return 0, false
		}
		if string(k) == key {
			return uintAt(e, next)
		}
		if at, ok = skip(e, next, 0); !ok {
			return 0, false
		}
	}
	return 0, true
}

// uintAt reads the unsigned integer (or nil: 0) at e[at:].
func uintAt(e []byte, at int) (uint64, bool) {
	if at >= len(e) {
		return 0, false
	}
	switch c := e[at]; {
	case c <= 0x7f:
		return uint64(c), true
	case c == 0xc0:
		return 0, true
	case c >= 0xcc && c <= 0xcf:
		return be(e, at+1, 1<<(c-0xcc))
	}
	return 0, false
}
