// Package projection holds the event catalog (one typed payload per event
// type, with explicit msgpack tags and a schema version) and the pure fold
// from events to state. It does no I/O and reads no clock: times and ids
// arrive in the events.
package projection
