package flow

// As returns a view of the engine that records actor and session on the
// events it appends instead of the engine's own: one process acting for
// several people or agents (a server deciding for the one who asked it),
// and tests. The view shares the engine's store and cache and is valid
// while the engine is open; close the engine, never the view.
func (e *Engine) As(actor, session string) *Engine {
	v := *e
	v.opts.Actor, v.opts.Session = actor, session
	return &v
}
