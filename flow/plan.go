package flow

import (
	"github.com/flowctl/flowctl/flow/internal/check"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// NewPlan is the input of AddPlan.
type NewPlan struct {
	Project     string `json:"project"`
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
	Write
}

// AddPlan creates a plan with the next P-n of its project.
func (e *Engine) AddPlan(in NewPlan) (*projection.Plan, error) {
	if err := check.Line("title", in.Title, MaxTitle, true); err != nil {
		return nil, err
	}
	if err := check.Text("description", in.Description, MaxText, false); err != nil {
		return nil, err
	}
	ref, err := e.command(in.Write, "plan.new", in, func(w *writer) (Ref, error) {
		p, err := openProject(w, in.Project)
		if err != nil {
			return Ref{}, err
		}
		id := projection.ShortID(projection.PrefixPlan, p.Counters.Plans+1)
		_, err = w.emit(projection.PlanStream(in.Project, id), store.NoStream, in.Project, projection.TypePlanCreated,
			projection.PlanCreated{ID: id, Title: in.Title, Description: in.Description})
		return Ref{Kind: projection.KindPlan, Project: in.Project, ID: id}, err
	})
	if err != nil {
		return nil, err
	}
	return e.Plan(ref.Project, ref.ID)
}

// ClosePlan is the input of ClosePlan.
type ClosePlan struct {
	Project string `json:"project"`
	ID      string `json:"id"`
	Reason  string `json:"reason,omitempty"`
	Write
}

// ClosePlan closes a plan; closing a closed plan changes nothing.
func (e *Engine) ClosePlan(in ClosePlan) (*projection.Plan, error) {
	if err := check.Text("reason", in.Reason, MaxText, false); err != nil {
		return nil, err
	}
	ref, err := e.command(in.Write, "plan.close", in, func(w *writer) (Ref, error) {
		ref := Ref{Kind: projection.KindPlan, Project: in.Project, ID: in.ID}
		p, err := mustPlan(w, in.Project, in.ID)
		if err != nil {
			return ref, err
		}
		stream := projection.PlanStream(in.Project, in.ID)
		if p.Status == "closed" {
			return ref, checkVersion(in.Write, p.Version, stream)
		}
		_, err = w.emit(stream, in.expect(), in.Project, projection.TypePlanClosed, projection.PlanClosed{ID: in.ID, Reason: in.Reason})
		return ref, err
	})
	if err != nil {
		return nil, err
	}
	return e.Plan(ref.Project, ref.ID)
}

// Plan returns a plan, or ErrNotFound.
func (e *Engine) Plan(project, id string) (*projection.Plan, error) {
	var p *projection.Plan
	err := e.read(func(src source) error {
		var err error
		p, err = mustPlan(src, project, id)
		return err
	})
	return p, err
}

// Plans lists a project's plans in id order (EachPlan, collected).
func (e *Engine) Plans(project string) ([]*projection.Plan, error) {
	var out []*projection.Plan
	err := e.EachPlan(project, appendTo(&out))
	return out, err
}

// EachPlan calls fn with each of a project's plans in id order, one
// decoded at a time; fn returning ErrStop ends the walk (see EachTask).
// ErrNotFound for an unknown project.
func (e *Engine) EachPlan(project string, fn func(*projection.Plan) error) error {
	return e.read(func(src source) error {
		if _, err := mustProject(src, project); err != nil {
			return err
		}
		return planWalk(src).each(src, project, fn)
	})
}

// Projects lists every project by name.
func (e *Engine) Projects() ([]*projection.Project, error) {
	var out []*projection.Project
	err := e.read(func(src source) error {
		var err error
		out, err = src.Projects()
		return err
	})
	return out, err
}

// ArchiveProject is the input of ArchiveProject.
type ArchiveProject struct {
	Name   string `json:"name"`
	Reason string `json:"reason,omitempty"`
	Write
}

// ArchiveProject closes a project to new work; its history stays.
func (e *Engine) ArchiveProject(in ArchiveProject) (*projection.Project, error) {
	if err := check.Text("reason", in.Reason, MaxText, false); err != nil {
		return nil, err
	}
	_, err := e.command(in.Write, "project.archive", in, func(w *writer) (Ref, error) {
		ref := Ref{Kind: projection.KindProject, Project: in.Name}
		p, err := mustProject(w, in.Name)
		if err != nil {
			return ref, err
		}
		stream := projection.ProjectStream(in.Name)
		if p.Archived {
			return ref, checkVersion(in.Write, p.Version, stream)
		}
		_, err = w.emit(stream, in.expect(), in.Name, projection.TypeProjectArchived, projection.ProjectArchived{Reason: in.Reason})
		return ref, err
	})
	if err != nil {
		return nil, err
	}
	return e.Project(in.Name)
}
