// Package snapshot encodes, decodes and verifies a projection state: a
// header, a deterministic msgpack body and a CRC32C over everything,
// checked before any byte is decoded (DESIGN.md §6).
package snapshot
