package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/view"
)

// answer is a response built in memory while the file is open, and
// written after it is closed: a slow client never holds the lock.
type answer struct {
	buf    bytes.Buffer
	n      int               // list items so far
	header map[string]string // extra response headers
}

// one writes a single result as the CLI's -o json does: json.Encoder's
// line, HTML not escaped, an engine entity shaped by package view.
func (a *answer) one(v any) error {
	enc := json.NewEncoder(&a.buf)
	enc.SetEscapeHTML(false)
	return enc.Encode(view.Of(v))
}

// add writes one item of a list as the CLI's -o json array does: "[" on
// its own line, one item per line, "," after each but the last. Call end
// after the last item.
func (a *answer) add(v any) error {
	b, err := marshalJSON(view.Of(v))
	if err != nil {
		return err
	}
	sep := ",\n"
	if a.n == 0 {
		sep = "[\n"
	}
	a.n++
	fmt.Fprintf(&a.buf, "%s%s", sep, b)
	return nil
}

// end closes the list: "[]" when it has no item.
func (a *answer) end() {
	if a.n == 0 {
		a.buf.WriteString("[]\n")
		return
	}
	a.buf.WriteString("\n]\n")
}

// marshalJSON is view.Marshal: the JSON every front door writes.
func marshalJSON(v any) ([]byte, error) { return view.Marshal(v) }

func (a *answer) write(w http.ResponseWriter, status int) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	for k, v := range a.header {
		h.Set(k, v)
	}
	w.WriteHeader(status)
	w.Write(a.buf.Bytes())
}

// httpError is an error of the HTTP layer itself: its status and code
// are its own, outside the engine's table (401, 403, 421, 501...).
type httpError struct {
	status int
	code   flow.Code
	err    error
	hint   string
}

func (e *httpError) Error() string { return e.err.Error() }
func (e *httpError) Unwrap() error { return e.err }

// Codes of the HTTP layer, beside the engine's (flow.Code).
const (
	codeUnauthorized flow.Code = "unauthorized"
	codeForbidden    flow.Code = "forbidden"
	codeMisdirected  flow.Code = "misdirected"
)

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{flow.ErrInvalid}, args...)...)
}

func notFound(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{flow.ErrNotFound}, args...)...)
}

func forbidden(hint, format string, args ...any) error {
	return &httpError{status: http.StatusForbidden, code: codeForbidden, err: fmt.Errorf(format, args...), hint: hint}
}

func unauthorized(format string, args ...any) error {
	return &httpError{status: http.StatusUnauthorized, code: codeUnauthorized, err: fmt.Errorf(format, args...),
		hint: "send Authorization: Bearer TOKEN (the token flowctl serve printed or read from --token-file), or open the one-time URL it printed"}
}

// statusOf maps an error code to an HTTP status, as the CLI maps it to an
// exit code.
var statusOf = map[flow.Code]int{
	flow.CodeInvalid:  http.StatusBadRequest,
	flow.CodeNotFound: http.StatusNotFound,
	flow.CodeConflict: http.StatusConflict,
	flow.CodeBusy:     http.StatusServiceUnavailable,
	flow.CodePending:  http.StatusConflict,
	flow.CodeCorrupt:  http.StatusInternalServerError,
	flow.CodeInternal: http.StatusInternalServerError,
	flow.CodeVetoed:   http.StatusForbidden, // a hook's policy refused the change
}

// errorBody is the CLI's JSON error object.
type errorBody struct {
	Code    flow.Code `json:"code"`
	Message string    `json:"message"`
	Hint    string    `json:"hint,omitempty"`
}

// classify names err as the CLI does: its code, message and hint.
func (s *server) classify(err error) (int, errorBody) {
	var he *httpError
	if errors.As(err, &he) {
		return he.status, errorBody{he.code, he.err.Error(), he.hint}
	}
	var b errorBody
	if s.cfg.Classify != nil {
		b.Code, b.Message, b.Hint = s.cfg.Classify(err)
	} else {
		b.Code, b.Message = flow.ErrorCode(err), err.Error()
	}
	status, ok := statusOf[b.Code]
	if !ok {
		status = http.StatusInternalServerError
	}
	return status, b
}

// fail answers err as the CLI's JSON error object (json.Marshal, as the
// CLI's report writes it) with its HTTP status.
func (s *server) fail(w http.ResponseWriter, err error) {
	status, body := s.classify(err)
	b, _ := json.Marshal(map[string]errorBody{"error": body})
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	if status == http.StatusServiceUnavailable {
		h.Set("Retry-After", "1")
	}
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// intParam reads a whole number ≥ 0 from the query, def when absent.
func intParam(r *http.Request, name string, def int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, invalid("%s=%q: must be a whole number, 0 or more", name, v)
	}
	return n, nil
}
