// Package projection holds the event catalog (one typed payload per event
// type, with explicit msgpack tags and a schema version) and the pure fold
// from events to state. It does no I/O and reads no clock: times and ids
// arrive in the events.
package projection

// Version is the version of the projection layout and fold. When the code's
// version differs from the one stored with a file's projections, the engine
// rebuilds them from the log.
const Version = 4
