package serve

import (
	_ "embed"
	"net/http"
)

// openAPIDoc is the API's OpenAPI 3.1 document, written by hand; a test
// checks that it lists exactly the routes the server registers.
//
//go:embed openapi.json
var openAPIDoc []byte

// GET /api/v1/openapi.json.
func (s *server) openAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Write(openAPIDoc)
}
