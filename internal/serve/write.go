package serve

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/flowctl/flowctl/flow"
)

// IdempotencyHeader carries a write's idempotency key, as the CLI's
// --idempotency-key: a retry with the same key returns the first result
// and changes nothing.
const IdempotencyHeader = "Idempotency-Key"

// maxBody bounds a write's JSON body.
const maxBody = flow.MaxInput + 4096

// serveWrite answers a write: it checks that writes are allowed and
// authorised, reads the JSON body into in, opens the file writable
// (read-only for a dry run), resolves {p}, runs fn with the one engine
// call the CLI makes, closes the file and writes fn's answer.
func (s *server) serveWrite(w http.ResponseWriter, r *http.Request, in any, fn func(c *call, a *answer) error) {
	a := &answer{}
	err := readBody(r, in)
	if err == nil {
		err = s.writeAllowed(r, in)
	}
	if err == nil {
		err = s.with(r, isDryRun(in), project, func(c *call) error { return fn(c, a) })
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	a.write(w, http.StatusOK)
}

// readBody decodes a JSON object body; an empty body is {}.
func readBody(r *http.Request, in any) error {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return err
	}
	if len(b) > maxBody {
		return invalid("the body is over %d bytes", maxBody)
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(in); err != nil {
		return invalid("the body is not the JSON object this endpoint takes: %v", err)
	}
	if dec.More() {
		return invalid("the body holds more than one JSON value")
	}
	return nil
}

// dryRunner is a body that may ask for a dry run, which writes nothing
// and so needs no token and runs in read-only mode.
type dryRunner interface{ dry() bool }

func isDryRun(in any) bool {
	d, ok := in.(dryRunner)
	return ok && d.dry()
}

// writeOpts are the fields every write body takes.
type writeOpts struct {
	IfVersion uint64 `json:"if_version,omitempty"`
}

func (o writeOpts) write(r *http.Request) flow.Write {
	return flow.Write{IfVersion: o.IfVersion, Key: r.Header.Get(IdempotencyHeader)}
}

// decideBody is the body of approvals/{id}/grant and deny.
type decideBody struct {
	Comment string `json:"comment,omitempty"`
	writeOpts
}

// POST /api/v1/projects/{p}/approvals/{id}/grant|deny: `approval
// grant|deny A --comment C -o json`.
func (s *server) decide(grant bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var in decideBody
		s.serveWrite(w, r, &in, func(c *call, a *answer) error {
			id, err := flow.ParseApprovalID(r.PathValue("id"))
			if err != nil {
				return err
			}
			ap, err := c.eng.DecideApproval(flow.Decision{Project: c.project, ID: id, Grant: grant, Comment: in.Comment, Write: in.write(r)})
			if err != nil {
				return err
			}
			return a.one(ap)
		})
	}
}

// moveBody is the body of tasks/{id}/move.
type moveBody struct {
	To    string `json:"to"`
	Note  string `json:"note,omitempty"`
	Force bool   `json:"force,omitempty"`
	writeOpts
}

// POST /api/v1/projects/{p}/tasks/{id}/move: `task start|done|block|
// cancel|reopen T --reason NOTE -o json`, by the status to move to.
func (s *server) move(w http.ResponseWriter, r *http.Request) {
	var in moveBody
	s.serveWrite(w, r, &in, func(c *call, a *answer) error {
		id, err := flow.ParseTaskID(r.PathValue("id"))
		if err != nil {
			return err
		}
		if in.To == "" {
			return invalid("to: give the status to move to: %s", strings.Join(taskStatuses, ", "))
		}
		if err := oneOf("to", in.To, taskStatuses); err != nil {
			return err
		}
		t, err := c.eng.MoveTask(flow.Move{Project: c.project, ID: id, To: in.To, Reason: in.Note, Force: in.Force, Write: in.write(r)})
		if err != nil {
			return err
		}
		f, err := c.eng.TaskFamily(c.project, t.ID) // as task show prints it
		if err != nil {
			return err
		}
		return a.one(f)
	})
}

// noteBody is the body of tasks/{id}/notes.
type noteBody struct {
	Text string `json:"text"`
	Kind string `json:"kind,omitempty"` // note (default) or memory
	writeOpts
}

// POST /api/v1/projects/{p}/tasks/{id}/notes: `note add --task T TEXT -o
// json`.
func (s *server) note(w http.ResponseWriter, r *http.Request) {
	var in noteBody
	s.serveWrite(w, r, &in, func(c *call, a *answer) error {
		id, err := flow.ParseTaskID(r.PathValue("id"))
		if err != nil {
			return err
		}
		kind := in.Kind
		if kind == "" {
			kind = flow.NoteKindNote
		}
		n, err := c.eng.AddNote(flow.NewNote{Project: c.project, Task: id, Kind: kind, Text: in.Text, Write: in.write(r)})
		if err != nil {
			return err
		}
		return a.one(n)
	})
}

// rollbackBody is the body of rollback. A rollback that is not a dry run
// must be confirmed with the project's name.
type rollbackBody struct {
	To      string `json:"to"`
	Task    string `json:"task,omitempty"`
	Reason  string `json:"reason,omitempty"`
	DryRun  bool   `json:"dry_run"`
	Confirm string `json:"confirm,omitempty"`
	// Limit is how many changes the answer lists (nil: DefaultDiffLimit,
	// 0: all); the rollback itself restores everything.
	Limit *int `json:"limit,omitempty"`
	writeOpts
}

func (b *rollbackBody) dry() bool { return b.DryRun }

// POST /api/v1/projects/{p}/rollback: `rollback --to POINT [--task T]
// [--dry-run] --limit N -o json`: the answer lists the first limit
// changes (DefaultDiffLimit unless the body says, 0: all), with total and
// truncated.
func (s *server) rollback(w http.ResponseWriter, r *http.Request) {
	var in rollbackBody
	s.serveWrite(w, r, &in, func(c *call, a *answer) error {
		ri, err := in.input(c)
		if err != nil {
			return err
		}
		if err := c.eng.CheckRollbackTask(c.project, ri.Task, ri.To); err != nil {
			return err
		}
		res, err := c.eng.Rollback(ri)
		if err != nil {
			return err
		}
		return a.one(res)
	})
}

// input checks the body and turns it into the engine's input.
func (b *rollbackBody) input(c *call) (flow.RollbackInput, error) {
	in := flow.RollbackInput{Project: c.project, Reason: b.Reason, DryRun: b.DryRun, Limit: DefaultDiffLimit, Write: b.write(c.r)}
	if b.Limit != nil {
		if *b.Limit < 0 {
			return in, invalid("limit %d: must be 0 or more", *b.Limit)
		}
		in.Limit = *b.Limit
	}
	if b.To == "" {
		return in, invalid("to: give the point to go back to: a checkpoint (C-1), a seq (42), an RFC 3339 time")
	}
	if b.DryRun && (b.IfVersion != 0 || b.Confirm != "") {
		return in, invalid("a dry run appends nothing: it takes no if_version or confirm")
	}
	if !b.DryRun && b.Confirm != c.project {
		return in, invalid("confirm: a rollback appends events that restore the project: set confirm to the project's name, %q (or dry_run: true to preview)", c.project)
	}
	var err error
	if in.To, err = ParsePoint(b.To); err != nil {
		return in, err
	}
	if b.Task != "" {
		if in.Task, err = flow.ParseTaskID(b.Task); err != nil {
			return in, err
		}
	}
	return in, nil
}
