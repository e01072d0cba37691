package history

// bornIndex finds the entities a far read notes (far.born) by kind and
// id: an id whose number is past its kind's counter at a (as the ids of
// the entities created after a are, one after the other) by that number
// in a list, any other in a map. So the ids a scan meets again and again
// are looked up without hashing them, and the index grows by appending.
type bornIndex struct {
	base  [4]int     // the counters at a (0 when unknown)
	byNum [4][]int32 // by number past base: born's index + 1, or 0
	other [4]map[string]int
}

// maxIndexGap is how far past the numbers it holds an id's number may be
// to be indexed by it: a bigger one (not the next ids of a kind) goes to
// the map.
const maxIndexGap = 1 << 16

// slot is where byNum holds the entity of kind i with id; false when it
// is not held by number.
func slot[S ~string | ~[]byte](x *bornIndex, i int, id S) (int, bool) {
	n, ok := idNumber(farPrefixes[i], id)
	if !ok || n <= x.base[i] {
		return 0, false
	}
	j := n - x.base[i] - 1
	return j, j < len(x.byNum[i])+maxIndexGap
}

// get returns the index in born of the entity of kind i with id.
func (x *bornIndex) get(i int, id string) (int, bool) { return bornAt(x, i, id) }

// bornAt is get of an id held as a string or as bytes (a delta's, not
// copied).
func bornAt[S ~string | ~[]byte](x *bornIndex, i int, id S) (int, bool) {
	if j, ok := slot(x, i, id); ok && j < len(x.byNum[i]) && x.byNum[i][j] > 0 {
		return int(x.byNum[i][j]) - 1, true
	}
	k, ok := x.other[i][string(id)] // put there before byNum reached it
	return k, ok
}

// put indexes the entity of kind i with id at k in born.
func (x *bornIndex) put(i int, id string, k int) { bornPut(x, i, id, k) }

// bornPut is put of an id held as a string or as bytes (a delta's: made
// a string only when the map holds it).
func bornPut[S ~string | ~[]byte](x *bornIndex, i int, id S, k int) {
	if j, ok := slot(x, i, id); ok {
		if j >= len(x.byNum[i]) {
			x.byNum[i] = append(x.byNum[i], make([]int32, j+1-len(x.byNum[i]))...)
		}
		x.byNum[i][j] = int32(k) + 1
		return
	}
	if x.other[i] == nil {
		x.other[i] = map[string]int{}
	}
	x.other[i][string(id)] = k
}

// idNumber is projection.IDNumber of id: n of "prefix-n", without a
// leading zero, at most nine digits, above zero.
func idNumber[S ~string | ~[]byte](prefix string, id S) (int, bool) {
	if len(id) < len(prefix)+2 || string(id[:len(prefix)]) != prefix || id[len(prefix)] != '-' {
		return 0, false
	}
	rest := id[len(prefix)+1:]
	if rest[0] == '0' || len(rest) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
