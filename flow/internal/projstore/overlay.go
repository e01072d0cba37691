package projstore

// An overlay lets a fold read entities that an earlier fold left
// unwritten: a bulk import folds the events of one transaction while the
// writer still writes what the fold before made (flow's bulkFolder), and
// the entities that fold changed are not in the store yet.

// Unwritten is what a Tx folded and has not flushed: its dirty entities,
// as they are when Unwritten is called. The Tx must not fold again (its
// next Flush may run meanwhile, which only reads them).
type Unwritten struct{ dirty map[entityKey]any }

// Unwritten returns the entities s holds unflushed.
func (s *Tx) Unwritten() Unwritten { return Unwritten{s.dirty} }

// ReadOver makes s, a command's Tx (Writer), read an entity it does not
// hold from layers, the newest last, before the store: a copy of the
// newest layer's (nil when that one removed it). The layers must stay as
// they are while s reads; a layer already in the store may stay, as it
// holds what the store does.
func (s *Tx) ReadOver(layers []Unwritten) { s.over = layers }

// overlaid looks k up in s's layers, newest first: ok is false when none
// holds it.
func (s *Tx) overlaid(k entityKey) (v any, ok bool) {
	for i := len(s.over) - 1; i >= 0; i-- {
		if v, ok := s.over[i].dirty[k]; ok {
			return v, true
		}
	}
	return nil, false
}

// getOverlaid is get's read of an entity a layer holds: a copy that s
// keeps, as a read of the store's.
func getOverlaid[T any](s *Tx, k entityKey, v any) (*T, error) {
	if _, gone := v.(deleted); gone {
		return nil, nil
	}
	c, err := copyEntity(v.(*T))
	if err == nil {
		s.keepClean(k, c)
	}
	return c, err
}

// Encode encodes the entities s holds unflushed, so that a Flush on
// another goroutine writes them without encoding them (a bulk import's
// folder encodes what it folded, its writer writes). A put after drops
// the entity's value.
func (s *Tx) Encode() error {
	s.encoded = make(map[entityKey][]byte, len(s.keys))
	for _, k := range s.keys {
		if _, gone := s.dirty[k].(deleted); gone {
			continue
		}
		b, err := s.enc.encode(k.key, s.dirty[k])
		if err != nil {
			return err
		}
		s.encoded[k] = b
	}
	return nil
}
