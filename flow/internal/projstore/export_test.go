package projstore

// SizeHint is sizeHint, for the external tests.
var SizeHint = sizeHint
