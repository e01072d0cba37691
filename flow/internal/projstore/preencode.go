package projstore

import (
	"sync"
	"sync/atomic"

	"github.com/flowctl/flowctl/projection"
)

// A Flush writes each entity a batch's commands folded, in the order
// first put: the status index's rows and counts, then the entity, sealed.
// Encoding an entity (its msgpack, packed, compressed, sealed) is a
// function of the entity alone, which nothing changes while Flush runs:
// a Flush of many entities has them encoded on a second goroutine, ahead
// of its writes, and writes exactly the bytes it would have encoded.

// preEncodeMin is the fewest entities a Flush encodes on a second
// goroutine; preEncodeChunk how many it hands over at a time.
const (
	preEncodeMin   = 64
	preEncodeChunk = 32
)

// preEncoded is what the goroutine encodes: by index in the keys Flush
// walks, the sealed value and the entity's msgpack (the FlushFunc's).
type preEncoded struct {
	vals  []preValue
	ready []chan struct{} // by chunk: closed once its values are set
	stop  atomic.Bool     // set when Flush no longer wants them
	done  sync.WaitGroup
}

type preValue struct {
	sealed, msgpack []byte
	err             error
}

// preEncode starts encoding the entities dirty holds under keys, in
// order, on a goroutine of its own. A deleted entity gets no value.
func preEncode(keys []entityKey, dirty map[entityKey]any) *preEncoded {
	vs := make([]any, len(keys)) // the goroutine reads no map
	for i, k := range keys {
		vs[i] = dirty[k]
	}
	p := &preEncoded{vals: make([]preValue, len(keys)), ready: make([]chan struct{}, (len(keys)+preEncodeChunk-1)/preEncodeChunk)}
	for i := range p.ready {
		p.ready[i] = make(chan struct{})
	}
	p.done.Add(1)
	go func() {
		defer p.done.Done()
		var enc encoder
		var arena []byte // the chunk's msgpack, one allocation
		for i, v := range vs {
			if i%preEncodeChunk == 0 {
				arena = make([]byte, 0, 512*preEncodeChunk)
			}
			if !p.stop.Load() {
				p.vals[i], arena = enc.preEncode(keys[i].key, v, arena)
			}
			if i%preEncodeChunk == preEncodeChunk-1 || i == len(vs)-1 {
				close(p.ready[i/preEncodeChunk])
			}
		}
	}()
	return p
}

// preEncode is what putEntity encodes for v: the sealed value and the
// msgpack a FlushFunc hears, appended to arena (which it returns).
func (e *encoder) preEncode(key string, v any, arena []byte) (preValue, []byte) {
	if _, gone := v.(deleted); gone {
		return preValue{}, arena
	}
	b, err := e.encode(key, v)
	if err != nil {
		return preValue{err: err}, arena
	}
	m := e.mp
	if m == nil { // an exec, stored by reference
		m, _ = projection.AppendEntity(e.xp[:0], v)
		e.xp = m
	}
	start := len(arena)
	arena = append(arena, m...)
	return preValue{sealed: b, msgpack: arena[start:len(arena):len(arena)]}, arena
}

// value waits for the value of the i-th entity.
func (p *preEncoded) value(i int) preValue {
	<-p.ready[i/preEncodeChunk]
	return p.vals[i]
}

// end stops the goroutine and waits for it.
func (p *preEncoded) end() {
	p.stop.Store(true)
	p.done.Wait()
}
