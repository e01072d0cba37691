package serve

import (
	"errors"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
)

// DefaultTaskLimit is how many tasks a page of GET …/tasks holds when the
// request names no limit (limit=0 asks for every match, as `task ls`
// prints them). A project of thousands of tasks is megabytes of JSON:
// more than the 50 ms a call may take, so the list comes in pages.
const DefaultTaskLimit = 100

// DefaultDiffLimit is how many changes a page of GET …/diff and of a
// rollback's answer (POST …/rollback) lists when the request names no
// limit (limit=0 lists them all, as `diff` and `rollback` print them): a
// diff of a busy project is megabytes of JSON.
const DefaultDiffLimit = 100

// NextOffsetHeader names the offset of the next page of a diff whose page
// has more changes after it: pass it as offset=.
const NextOffsetHeader = "X-Flowctl-Next-Offset"

// NextAfterHeader names the cursor of the next page of a task list whose
// page is full and has more after it: the last task id of the page, to
// pass as after=.
const NextAfterHeader = "X-Flowctl-Next-After"

// eachTaskPage adds to a the tasks of c's project that match f, at most
// limit of them (0: all), and when more match after them sets
// NextAfterHeader to the last one's id.
func eachTaskPage(c *call, a *answer, f flow.TaskFilter, limit int) error {
	n, last, more := 0, "", false
	err := c.eng.EachTask(c.project, f, func(t *projection.Task) error {
		if limit > 0 && n == limit {
			more = true
			return flow.ErrStop
		}
		n, last = n+1, t.ID
		return a.add(t)
	})
	if err != nil && !errors.Is(err, flow.ErrStop) {
		return err
	}
	a.end()
	if more {
		a.header = map[string]string{NextAfterHeader: last}
	}
	return nil
}
