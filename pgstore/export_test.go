package pgstore

// Silence makes appends notify nobody until the returned func restores
// them.
func Silence() (restore func()) {
	silent.Store(true)
	return func() { silent.Store(false) }
}
