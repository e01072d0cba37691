package check

// JSONPrefix scans the JSON value that starts b and returns its length,
// when fastJSON's checks pass on it with at most maxDepth levels of
// nesting: what follows it in b is the caller's. b must be valid UTF-8
// (the caller checked the whole of what holds it once). false only means
// that the fast scan does not settle it: the caller then checks the whole
// the slow way (JSONDepth), which words the error.
func JSONPrefix(b []byte, maxDepth int) (int, bool) {
	s := scanner{b: b, maxDepth: maxDepth}
	if !s.value(0) {
		return 0, false
	}
	return s.i, true
}
