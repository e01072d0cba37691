package flow

import "github.com/flowctl/flowctl/flow/internal/check"

// MaxJSONDepth is the deepest nesting of objects and arrays accepted in
// any JSON input.
const MaxJSONDepth = check.MaxJSONDepth

// CheckJSON validates user JSON beyond what encoding/json checks: valid
// UTF-8 (encoding/json would silently replace bad bytes), no duplicate
// keys in an object (encoding/json keeps the last), no number beyond the
// range of an IEEE 754 double (I-JSON, RFC 7493: 1e999 is refused; a long
// integer within the range is kept as written), at most MaxJSONDepth
// levels of nesting, and exactly one value (package input).
func CheckJSON(b []byte) error { return check.JSON(b) }

// CheckJSONWithin is CheckJSON for a document whose values are user JSON
// held up to levels levels down (the arguments of an MCP tool call, whose
// patch or action is one level down): it allows MaxJSONDepth+levels
// levels of nesting, so that such a value is refused for its depth only by
// the command that stores it.
func CheckJSONWithin(b []byte, levels int) error { return check.JSONWithin(b, levels) }

// MaxInput is the largest JSON input accepted from a user (context
// patches, actions, exec records): the payload limit of one event.
const MaxInput = 1 << 20
