package flow

import (
	"reflect"
	"testing"

	"github.com/flowctl/flowctl/projection"
	"pgregory.net/rapid"
)

// contextHistoryScan is ContextHistory as it was before it read the
// task's stream and the project's rollback index: a fold of every event
// of the project. It is the oracle of
// TestProperty_ContextHistoryEqualsProjectScan.
func contextHistoryScan(e *Engine, project, id, key string) ([]ContextEntry, error) {
	if _, err := e.Task(project, id); err != nil {
		return nil, err
	}
	h := contextWalk{cur: map[string]projection.JSON{}, key: key, task: id, stream: projection.TaskStream(project, id)}
	if err := e.Events(Filter{Project: project, Raw: true}, h.event); err != nil {
		return nil, err
	}
	return h.out, nil
}

// TestProperty_ContextHistoryEqualsProjectScan checks the history read
// from a task's stream and the project's rollbacks against the fold of
// the project's whole log, for every task (and one of its keys) of random
// histories with context changes and rollbacks of tasks and projects.
func TestProperty_ContextHistoryEqualsProjectScan(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := newTTMachine(t, rt)
		defer m.e.Close()
		actions := m.actions()
		actions["Context2"], actions["Context3"], actions["Rollback2"] = m.Context, m.Context, m.Rollback
		rt.Repeat(actions)
		for _, p := range ttProjects {
			for _, id := range ttIDs(projection.PrefixTask, m.counters(rt, p).Tasks) {
				for _, key := range []string{"", "a", "b"} {
					got, gerr := m.e.ContextHistory(p, id, key)
					want, werr := contextHistoryScan(m.e, p, id, key)
					if (gerr == nil) != (werr == nil) || (gerr != nil && ErrorCode(gerr) != ErrorCode(werr)) {
						rt.Fatalf("%s %s key %q: error %v, the scan's %v", p, id, key, gerr, werr)
					}
					if !reflect.DeepEqual(got, want) {
						rt.Fatalf("%s %s key %q:\n got %+v\nwant %+v", p, id, key, got, want)
					}
				}
			}
		}
		m.finish(rt)
	})
}
