package flow

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/projection"
)

var projectName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ValidProjectName reports whether name can name a project: 1–64 letters,
// digits, '.', '_' or '-', starting with a letter or digit.
func ValidProjectName(name string) error {
	if !projectName.MatchString(name) {
		return fmt.Errorf("%w: project name %q: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit",
			ErrInvalid, name)
	}
	return nil
}

// ProjectStream is the stream of a project's own events.
func ProjectStream(name string) string { return "project/" + name }

// CreateProject appends project.created. It returns ErrExists if the
// project exists, ErrInvalid for a bad name.
func (e *Engine) CreateProject(name, description string) (seq uint64, err error) {
	if err := ValidProjectName(name); err != nil {
		return 0, err
	}
	ev, err := e.newEvent(projection.TypeProjectCreated, projection.SchemaProjectCreated, name,
		projection.ProjectCreated{Name: name, Description: description})
	if err != nil {
		return 0, err
	}
	err = e.update(func(tx *eventlog.Tx) error {
		res, err := tx.Append(ProjectStream(name), eventlog.NoStream, ev)
		if err == nil {
			seq = res.Seqs[0]
		}
		return err
	})
	var vc *eventlog.VersionConflict
	if errors.As(err, &vc) {
		return 0, fmt.Errorf("%w: project %q", ErrExists, name)
	}
	return seq, err
}

// ProjectExists reports whether the project was created.
func (e *Engine) ProjectExists(name string) (bool, error) {
	var ok bool
	err := e.view(func(tx *eventlog.Tx) error {
		v, _ := tx.StreamVersion(ProjectStream(name))
		ok = v > 0
		return nil
	})
	return ok, err
}
