package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"unicode/utf8"
)

// MaxJSONDepth is the deepest nesting of objects and arrays accepted in
// any JSON input.
const MaxJSONDepth = 64

// JSON validates user JSON beyond what encoding/json checks: valid
// UTF-8 (encoding/json would silently replace bad bytes), no duplicate
// keys in an object (encoding/json keeps the last), no number beyond the
// range of an IEEE 754 double (I-JSON, RFC 7493: 1e999 is refused; a long
// integer within the range is kept as written), at most MaxJSONDepth
// levels of nesting, and exactly one value.
func JSON(b []byte) error {
	return JSONDepth(b, MaxJSONDepth)
}

// JSONWithin is JSON for a document whose values are user JSON
// held up to levels levels down (the arguments of an MCP tool call, whose
// patch or action is one level down): it allows MaxJSONDepth+levels
// levels of nesting, so that such a value is refused for its depth only by
// the command that stores it.
func JSONWithin(b []byte, levels int) error {
	return JSONDepth(b, MaxJSONDepth+levels)
}

// JSONDepth is JSON with maxDepth levels of nesting.
func JSONDepth(b []byte, maxDepth int) error {
	if fastJSON(b, maxDepth) {
		return nil // the common case, without a decoder (fastjson.go)
	}
	return slowJSON(b, maxDepth)
}

// slowJSON is JSONDepth through encoding/json's tokens, which word the
// error.
func slowJSON(b []byte, maxDepth int) error {
	if !utf8.Valid(b) {
		return errors.New("not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := checkValue(dec, 0, maxDepth); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more than one JSON value")
	}
	return nil
}

// checkValue reads one value from dec, recursing into objects and arrays.
func checkValue(dec *json.Decoder, depth, maxDepth int) error {
	tok, err := dec.Token()
	if err != nil {
		return jsonError(err)
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return checkNumber(tok)
	}
	if depth++; depth > maxDepth {
		return fmt.Errorf("nested deeper than %d levels", maxDepth)
	}
	if delim == '[' {
		for dec.More() {
			if err := checkValue(dec, depth, maxDepth); err != nil {
				return err
			}
		}
	} else if err := checkObject(dec, depth, maxDepth); err != nil {
		return err
	}
	_, err = dec.Token() // the closing delimiter
	return jsonError(err)
}

func checkObject(dec *json.Decoder, depth, maxDepth int) error {
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return jsonError(err)
		}
		key := tok.(string)
		if seen[key] {
			return fmt.Errorf("duplicate key %q", key)
		}
		seen[key] = true
		if err := checkValue(dec, depth, maxDepth); err != nil {
			return err
		}
	}
	return nil
}

// checkNumber refuses a number whose magnitude no double holds: one that
// parses to ±Inf. Precision beyond a double's is not checked.
func checkNumber(tok json.Token) error {
	n, ok := tok.(json.Number)
	if !ok {
		return nil
	}
	if f, _ := strconv.ParseFloat(string(n), 64); math.IsInf(f, 0) {
		return fmt.Errorf("number %.40s is out of the range of a double (I-JSON, RFC 7493)", n)
	}
	return nil
}

// DecodeError says which field of a JSON object has a value of the
// wrong type, in words rather than encoding/json's Go types.
func DecodeError(err error) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return jsonError(err)
	}
	want := "a " + te.Type.Kind().String()
	switch te.Type.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		want = "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		want = "a whole number ≥ 0"
	case reflect.Float32, reflect.Float64:
		want = "a number"
	case reflect.Bool:
		want = "true or false"
	case reflect.Struct, reflect.Map:
		want = "an object"
	case reflect.Slice, reflect.Array:
		want = "an array"
	}
	if te.Field == "" {
		return fmt.Errorf("the value must be %s, not %s", want, te.Value)
	}
	return fmt.Errorf("%q must be %s, not %s", te.Field, want, te.Value)
}

func jsonError(err error) error {
	if err == io.EOF {
		return errors.New("unexpected end of JSON input")
	}
	return err
}
