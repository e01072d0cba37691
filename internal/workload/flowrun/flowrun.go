// Package flowrun runs the Ops of package workload through the engine's
// public commands (flow.Engine), many to a write transaction.
package flowrun

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/flow/capture"
	"github.com/flowctl/flowctl/internal/workload"
	"github.com/flowctl/flowctl/projection"
)

// ErrOutOfStep reports that the engine assigned another id than the Op
// carries: the file held events before the workload's first.
var ErrOutOfStep = errors.New("flowrun: the engine's ids are not the workload's")

// BatchOps is how many Ops Write runs in one transaction.
const BatchOps = 1000

// Write runs g's Ops on e until g has handed out n of them (at least one
// per project): first the projects' creation in one transaction, then
// BatchOps Ops a transaction. progress, if not nil, hears after each
// transaction how many Ops of n are done.
//
// The Ops of the next transaction are drawn on a goroutine of their own
// while one runs: g is Write's until it returns, and after an error it may
// have handed out a transaction or two of Ops more than ran.
func Write(ctx context.Context, e *flow.Engine, g *workload.Generator, n uint64, progress func(done, total uint64)) error {
	if err := Batch(e, g.Fill(nil, g.Projects())); err != nil {
		return err
	}
	done := g.Ops()
	next, free, stop := make(chan []workload.Op, 1), make(chan []workload.Op, 3), make(chan struct{})
	for range 3 { // one running, one ready, one being drawn
		free <- make([]workload.Op, 0, BatchOps)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(next)
		for g.Ops() < n {
			var ops []workload.Op
			select {
			case ops = <-free:
			case <-stop:
				return
			}
			ops = g.Fill(ops[:0], int(min(BatchOps, n-g.Ops())))
			select {
			case next <- ops:
			case <-stop:
				return
			}
		}
	}()
	defer func() {
		close(stop)
		wg.Wait()
	}()
	for ops := range next {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := Batch(e, ops); err != nil {
			return err
		}
		done += uint64(len(ops))
		if progress != nil {
			progress(done, n)
		}
		free <- ops
	}
	return nil
}

// Batch runs ops on e in one transaction (flow.Engine.Batch).
func Batch(e *flow.Engine, ops []workload.Op) error {
	return e.Batch(func(b *flow.Engine) error {
		for _, op := range ops {
			if err := Run(b, op); err != nil {
				return err
			}
		}
		return nil
	})
}

// execStdout is the captured output of every exec record.
var execStdout = capture.String(workload.ExecStdout)

// Run runs one Op on e. It returns the command's error, or ErrOutOfStep
// when the id the engine assigned is not the Op's.
func Run(e *flow.Engine, op workload.Op) error {
	id, err := run(e, op)
	if err == nil && id != op.ID {
		err = fmt.Errorf("%w: %s %s %s made %s", ErrOutOfStep, op.Project, op.Kind, op.ID, id)
	}
	return err
}

// run runs op and returns the id of what it created, or op.ID when it
// created nothing.
func run(e *flow.Engine, op workload.Op) (string, error) {
	switch op.Kind {
	case workload.CreateProject:
		p, err := e.CreateProject(flow.NewProject{Name: op.ID, Description: op.Text})
		if err != nil {
			return "", err
		}
		return p.Name, nil
	case workload.AddPlan:
		p, err := e.AddPlan(flow.NewPlan{Project: op.Project, Title: op.Title, Description: op.Text})
		if err != nil {
			return "", err
		}
		return p.ID, nil
	case workload.AddTask:
		return addTask(e, op)
	case workload.StartTask, workload.FinishTask:
		return op.ID, moveTask(e, op)
	case workload.AddStep:
		s, err := e.AddStep(flow.NewStep{Project: op.Project, Task: op.Task, Title: op.Title})
		if err != nil {
			return "", err
		}
		return s.ID, nil
	case workload.StartStep, workload.ProgressStep, workload.CompleteStep:
		return op.ID, moveStep(e, op)
	case workload.MergeContext:
		_, err := e.MergeContext(flow.ContextPatch{Project: op.Project, ID: op.Task, Patch: op.Text})
		return op.ID, err
	case workload.AddNote:
		_, err := e.AddNote(flow.NewNote{Project: op.Project, Task: op.Task, Kind: flow.NoteKindNote, Text: op.Text})
		return op.ID, err
	case workload.RecordExec:
		x, err := e.RecordExec(flow.NewExec{Project: op.Project, Task: op.Task, Step: op.Step,
			Command: workload.ExecCommand, Cwd: workload.ExecCwd, ExitCode: 0, Success: true,
			ElapsedMS: workload.ExecElapsedMS, Stdout: execStdout, AddedVars: []string{workload.ExecAddedVar}})
		if err != nil {
			return "", err
		}
		return x.ID, nil
	case workload.RequestApproval:
		a, err := e.RequestApproval(flow.NewApproval{Project: op.Project, Task: op.Task,
			Message: workload.ApprovalMessage, Action: workload.ApprovalAction})
		if err != nil {
			return "", err
		}
		return a.ID, nil
	case workload.GrantApproval:
		_, err := e.As(workload.ApprovalGrantor, "").DecideApproval(flow.Decision{Project: op.Project, ID: op.ID, Grant: true, Comment: workload.ApprovalComment})
		return op.ID, err
	case workload.Checkpoint:
		c, err := e.CreateCheckpoint(flow.NewCheckpoint{Project: op.Project, Label: workload.CheckpointLabel})
		if err != nil {
			return "", err
		}
		return c.ID, nil
	}
	return "", fmt.Errorf("flowrun: unknown op %s", op.Kind)
}

func addTask(e *flow.Engine, op workload.Op) (string, error) {
	in := flow.NewTask{Project: op.Project, Plan: op.Plan, Title: op.Title, Description: op.Text,
		Owner: workload.Owner, Tags: workload.Tags(), Priority: op.Priority,
		Deps: append([]string(nil), op.Deps...)} // AddTask normalizes its input in place; a batch may run again
	t, err := e.AddTask(in)
	if err != nil {
		return "", err
	}
	return t.ID, nil
}

func moveTask(e *flow.Engine, op workload.Op) error {
	to := projection.StatusDoing
	if op.Kind == workload.FinishTask {
		to = projection.StatusDone
	}
	_, err := e.MoveTask(flow.Move{Project: op.Project, ID: op.Task, To: to})
	return err
}

func moveStep(e *flow.Engine, op workload.Op) error {
	m := flow.StepMove{Project: op.Project, ID: op.ID, To: projection.StepInProgress}
	switch op.Kind {
	case workload.ProgressStep:
		progress := workload.StepProgress
		m.Progress, m.Note = &progress, workload.StepNote
	case workload.CompleteStep:
		m.To, m.Result = projection.StepCompleted, workload.StepResult
	}
	_, err := e.MoveStep(m)
	return err
}
