package flow

import (
	"github.com/flowctl/flowctl/flow/internal/check"
	"github.com/flowctl/flowctl/projection"
)

// NewCheckpoint is the input of CreateCheckpoint.
type NewCheckpoint struct {
	Project string `json:"project"`
	Label   string `json:"label,omitempty"`
	Task    string `json:"task,omitempty"`
	GitHead string `json:"git_head,omitempty"`
	Write
}

// CreateCheckpoint records a named point: the project's state up to the
// current head, which it also stores as a snapshot, in the same
// transaction.
func (e *Engine) CreateCheckpoint(in NewCheckpoint) (*projection.Checkpoint, error) {
	if err := check.Line("label", in.Label, MaxTitle, false); err != nil {
		return nil, err
	}
	if err := check.Line("git head", in.GitHead, MaxTitle, false); err != nil {
		return nil, err
	}
	ref, err := e.command(in.Write, "checkpoint.new", in, func(w *writer) (Ref, error) {
		p, err := mustProject(w, in.Project)
		if err != nil {
			return Ref{}, err
		}
		if in.Task != "" {
			if _, err := mustTask(w, in.Project, in.Task); err != nil {
				return Ref{}, err
			}
		}
		head, _ := w.tx.Head()
		if err := w.putSnapshot(in.Project); err != nil {
			return Ref{}, err
		}
		id := projection.ShortID(projection.PrefixCheckpoint, p.Counters.Checkpoints+1)
		_, err = w.emit(projection.ProjectStream(in.Project), in.expect(), in.Project, projection.TypeCheckpointCreated,
			projection.CheckpointCreated{ID: id, Label: in.Label, AtSeq: head, Task: in.Task, GitHead: in.GitHead})
		return Ref{Kind: "checkpoint", Project: in.Project, ID: id}, err
	})
	if err != nil {
		return nil, err
	}
	return e.Checkpoint(ref.Project, ref.ID)
}

// Checkpoint returns a checkpoint, or ErrNotFound.
func (e *Engine) Checkpoint(project, id string) (*projection.Checkpoint, error) {
	var out *projection.Checkpoint
	err := e.read(func(src source) error {
		c, err := src.Checkpoint(project, id)
		if err == nil && c == nil {
			err = notFound("checkpoint", id, project)
		}
		out = c
		return err
	})
	return out, err
}

// Checkpoints lists a project's checkpoints in id order.
func (e *Engine) Checkpoints(project string) ([]*projection.Checkpoint, error) {
	var out []*projection.Checkpoint
	err := e.read(func(src source) error {
		if _, err := mustProject(src, project); err != nil {
			return err
		}
		var err error
		out, err = src.Checkpoints(project)
		return err
	})
	return out, err
}

// ParseCheckpointID accepts "C-2", "c-2" or "2".
func ParseCheckpointID(s string) (string, error) {
	return parseShortID(projection.PrefixCheckpoint, "checkpoint", s)
}
