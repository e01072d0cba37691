package history

import "github.com/flowctl/flowctl/snapshot"

// aheadBuffers is how many deltas' bodies a far read holds decompressed
// at once: the one it reads, those checked ahead of it (aheadBuffers-2)
// and the one being checked.
const aheadBuffers = 4

// deltasAhead checks deltas (snapshot.DeltaReader.Check) on a goroutine
// of its own, in order, a few ahead of the one they are taken for
// (next): their decompression and hashing run beside the reading of
// those before them, and of the log. Each body is decompressed into one
// of aheadBuffers buffers, which the goroutine writes again only after
// the caller has taken the body after it: a body next returns is valid
// until next is called again.
type deltasAhead struct {
	out  chan checkedDelta
	done chan struct{}
}

// checkedDelta is a delta's body, checked, or the error of its check.
type checkedDelta struct {
	body []byte
	err  error
}

// checkAhead starts checking the deltas vs, in order.
func checkAhead(vs [][]byte) *deltasAhead {
	d := &deltasAhead{out: make(chan checkedDelta, aheadBuffers-2), done: make(chan struct{})}
	if len(vs) == 0 {
		return d
	}
	go func() {
		var readers [aheadBuffers]snapshot.DeltaReader
		for k, v := range vs {
			body, err := readers[k%aheadBuffers].Check(v)
			select {
			case d.out <- checkedDelta{body, err}:
			case <-d.done:
				return
			}
		}
	}()
	return d
}

// next returns the next delta's body, checked, or the error of its
// check: valid until next is called again.
func (d *deltasAhead) next() ([]byte, error) {
	c := <-d.out
	return c.body, c.err
}

// stop ends the checks ahead (those not taken are dropped).
func (d *deltasAhead) stop() { close(d.done) }
