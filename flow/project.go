package flow

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/flowctl/flowctl/flow/internal/check"
	"github.com/flowctl/flowctl/flow/store"
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
func ProjectStream(name string) string { return projection.ProjectStream(name) }

// NewProject is the input of CreateProject.
type NewProject struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Write
}

// CreateProject appends project.created. It returns ErrExists if the
// project exists, ErrInvalid for a bad name.
func (e *Engine) CreateProject(in NewProject) (*projection.Project, error) {
	if err := ValidProjectName(in.Name); err != nil {
		return nil, err
	}
	if err := check.Text("description", in.Description, MaxText, false); err != nil {
		return nil, err
	}
	ref, err := e.command(in.Write, "project.new", in, func(w *writer) (Ref, error) {
		_, err := w.emit(ProjectStream(in.Name), store.NoStream, in.Name, projection.TypeProjectCreated,
			projection.ProjectCreated{Name: in.Name, Description: in.Description})
		var vc *store.VersionConflict
		if errors.As(err, &vc) {
			return Ref{}, fmt.Errorf("%w: project %q", ErrExists, in.Name)
		}
		return Ref{Kind: projection.KindProject, Project: in.Name}, err
	})
	if err != nil {
		return nil, err
	}
	return e.Project(ref.Project)
}

// Project returns a project, or ErrNotFound. The project may be shared
// with the engine's cache and other readers: it is read-only (see the
// package doc).
func (e *Engine) Project(name string) (*projection.Project, error) {
	return cached(e, projectKey(name), loadProject)
}

func loadProject(src source, k cacheKey) (*projection.Project, error) {
	return mustProject(src, k.project)
}

func mustProject(src projection.Store, name string) (*projection.Project, error) {
	p, err := src.Project(name)
	if err == nil && p == nil {
		err = fmt.Errorf("%w: project %q (see 'flowctl project ls')", ErrNotFound, name)
	}
	return p, err
}

// ProjectExists reports whether the project was created.
func (e *Engine) ProjectExists(name string) (bool, error) {
	var ok bool
	err := e.read(func(src source) error {
		p, err := src.Project(name)
		ok = p != nil
		return err
	})
	return ok, err
}
