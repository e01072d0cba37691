package projection

// Event types, as stored. Names are never renumbered or reused.
const (
	TypeProjectCreated = "project.created"
)

// Schema versions of the payloads above.
const (
	SchemaProjectCreated = 1
)

// ProjectCreated is the payload of project.created, the first event of
// stream project/<name>.
type ProjectCreated struct {
	Name        string `msgpack:"name"`
	Description string `msgpack:"description,omitempty"`
}
