package projection

import (
	"bytes"
	"encoding/json"
	"errors"
)

// EmptyContext is the context of a new task.
const EmptyContext JSON = "{}"

// MergePatch applies an RFC 7396 JSON merge patch to the JSON object doc
// and returns the result in canonical form: objects merge recursively,
// null deletes a key, anything else (arrays included) replaces. The patch
// must be an object. Numbers keep their exact text.
func MergePatch(doc, patch JSON) (JSON, error) {
	target, err := decodeObject(doc)
	if err != nil {
		return "", err
	}
	p, err := decodeObject(patch)
	if err != nil {
		return "", err
	}
	return encodeCanonical(mergeObject(target, p))
}

// Canonical returns the canonical form of a JSON object: keys sorted, no
// insignificant space, numbers as written.
func Canonical(doc JSON) (JSON, error) {
	v, err := decodeObject(doc)
	if err != nil {
		return "", err
	}
	return encodeCanonical(v)
}

func mergeObject(target, patch map[string]any) map[string]any {
	for k, pv := range patch {
		switch pv := pv.(type) {
		case nil:
			delete(target, k)
		case map[string]any:
			t, ok := target[k].(map[string]any)
			if !ok {
				t = map[string]any{}
			}
			target[k] = mergeObject(t, pv)
		default:
			target[k] = pv
		}
	}
	return target
}

func decodeObject(doc JSON) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(doc)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	return m, nil
}

func encodeCanonical(v any) (JSON, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return JSON(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}
