package projstore

import "errors"

// ErrDamaged: a projection record (an entity or an entry of the status
// index) fails its checksum or does not decode. The log is untouched; a
// rebuild makes the record again. Package flow exports it as
// flow.ErrDamagedProjection (exit 7).
var ErrDamaged = errors.New("flow: damaged projection record")
