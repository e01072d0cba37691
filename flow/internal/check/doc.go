/*
Package check holds the engine's checks of what a user gives it, below
package flow and without its types.

JSON (flow.CheckJSON) validates user JSON beyond encoding/json: valid
UTF-8, no duplicate keys, no number beyond a double's range (I-JSON, RFC
7493), at most MaxJSONDepth levels of nesting, exactly one value.
JSONWithin and JSONDepth allow more levels for a document that holds user
JSON further down (an MCP tool call's arguments, an export line's view).
DecodeError says in words which field of an object has a value of the
wrong type.

Line and Text check text fields: valid UTF-8, at most a limit of bytes,
not blank when required, and no control character, but for the newlines,
tabs and CRLF line ends multi-line text keeps. Their errors wrap
ErrInvalid, which flow exports as flow.ErrInvalid. CleanLine, CleanText
and CleanLines turn a legacy file's text into text the checks accept,
control characters becoming spaces.

The limits themselves (flow.MaxTitle, flow.MaxText, flow.MaxInput) are
the engine's and stay in flow; the checks take them as arguments.
*/
package check
