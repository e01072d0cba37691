package view

import (
	"bytes"
	"encoding/json"
)

// Marshal is json.Marshal without HTML escaping: the JSON every front
// door writes (the CLI's -o json, MCP's structured results, the HTTP
// API), so that the same question gets the same bytes from each.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
