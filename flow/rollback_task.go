package flow

import "errors"

// CheckRollbackTask refuses a rollback of one task that exists neither
// now nor at the point to: ErrNotFound, as a read of it would say. A task
// that exists now but not at the point is Rollback's to refuse (a
// conflict); one that exists only at the point (a rollback took it away)
// can be brought back. An empty task is a whole-project rollback: nil.
func (e *Engine) CheckRollbackTask(project, task string, to Point) error {
	if task == "" {
		return nil
	}
	_, errNow := e.Task(project, task)
	if !errors.Is(errNow, ErrNotFound) {
		return errNow
	}
	_, errThen := e.At(project, to).Task(project, task)
	if errors.Is(errThen, ErrNotFound) {
		return errNow
	}
	return errThen
}
