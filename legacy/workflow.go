package legacy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/flowctl/flowctl/flow"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// workflowDoc is a parsed workflow.json.
type workflowDoc struct {
	project     string
	description string
	tasks       []workflowTask
	warnings    []string
}

// workflowTask is one entry of "tasks": a task to create.
type workflowTask struct {
	line   int
	n      int    // entry number, from 1
	ref    string // the original id
	status string // flowctl's
	deps   []string
	in     flow.NewTask
}

// legacyStatuses maps the statuses of the legacy system (and the usual
// synonyms of other tools) to flowctl's, after lower-casing and turning
// '-' and ' ' into '_'. Anything else is refused: a status that means
// something to its author is not guessed.
var legacyStatuses = map[string]string{
	"": projection.StatusTodo, "todo": projection.StatusTodo, "to_do": projection.StatusTodo,
	"pending": projection.StatusTodo, "open": projection.StatusTodo, "new": projection.StatusTodo,
	"ready": projection.StatusTodo, "planned": projection.StatusTodo,
	"doing": projection.StatusDoing, "in_progress": projection.StatusDoing, "inprogress": projection.StatusDoing,
	"running": projection.StatusDoing, "active": projection.StatusDoing, "started": projection.StatusDoing,
	"wip":  projection.StatusDoing,
	"done": projection.StatusDone, "completed": projection.StatusDone, "complete": projection.StatusDone,
	"finished": projection.StatusDone, "closed": projection.StatusDone, "success": projection.StatusDone,
	"blocked": projection.StatusBlocked, "failed": projection.StatusBlocked, "error": projection.StatusBlocked,
	"on_hold": projection.StatusBlocked, "waiting": projection.StatusBlocked,
	"cancelled": projection.StatusCancelled, "canceled": projection.StatusCancelled,
	"skipped": projection.StatusCancelled, "dropped": projection.StatusCancelled,
}

// Status maps a status of the legacy system to flowctl's; ok is
// false for a status it does not know.
func Status(s string) (status string, ok bool) {
	key := strings.NewReplacer("-", "_", " ", "_").Replace(strings.ToLower(strings.TrimSpace(s)))
	status, ok = legacyStatuses[key]
	return status, ok
}

func importWorkflow(e *flow.Engine, in Input) (*Result, error) {
	data, err := in.read()
	if err != nil {
		return nil, err
	}
	doc, err := parseWorkflow(in.Name, data)
	if err != nil {
		return nil, err
	}
	project := in.Project
	if project == "" {
		project = doc.project
	}
	if project == "" {
		return nil, &ImportError{File: in.Name, Err: fmt.Errorf(`%w: the file has no "project": name the project to import into`, flow.ErrInvalid)}
	}
	if err := flow.ValidProjectName(project); err != nil {
		return nil, &ImportError{File: in.Name, Err: err}
	}
	res := &Result{Format: FromWorkflowJSON, Project: project, Read: len(doc.tasks), Warnings: doc.warnings}
	err = runImport(e, FromWorkflowJSON, project, res, func(im *flow.Importer, res *Result) error {
		return addWorkflow(im, in.Name, doc, project, res)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// parseWorkflow reads {"project": NAME, "description": ..., "created":
// ..., "tasks": [...]}; other top-level keys are warned about.
func parseWorkflow(name string, data []byte) (*workflowDoc, error) {
	if err := checkDocument(name, data); err != nil {
		return nil, err
	}
	top, entries, err := workflowParts(name, data)
	if err != nil {
		return nil, err
	}
	doc := &workflowDoc{}
	if doc.project, err = top.str("project", false); err != nil {
		return nil, err
	}
	if doc.description, err = top.str("description", false); err != nil {
		return nil, err
	}
	doc.description = flow.CleanText(doc.description)
	top.used["created"], top.used["tasks"] = true, true
	if w := top.unused(""); w != "" {
		doc.warnings = append(doc.warnings, w)
	}
	seen := map[string]int{} // ref -> entry index
	var bad badEntries
	for i, en := range entries {
		t, warns, err := parseWorkflowTask(name, en, i+1)
		if err != nil {
			if bad.add(err) {
				continue
			}
			return nil, err
		}
		if j, dup := seen[t.ref]; dup {
			bad.add(&ImportError{File: name, Line: en.line, Err: fmt.Errorf("%w: task %d: id %q is also the id of task %d (line %d)",
				flow.ErrInvalid, i+1, t.ref, j+1, entries[j].line)})
			continue
		}
		seen[t.ref] = i
		doc.tasks = append(doc.tasks, t)
		doc.warnings = append(doc.warnings, warns...)
	}
	if err := bad.err(); err != nil {
		return nil, err
	}
	if err := flow.CheckJSON(data); err != nil { // what the entries' checks cannot see: the top level
		return nil, &ImportError{File: name, Err: fmt.Errorf("%w: %v", flow.ErrInvalid, err)}
	}
	return doc, nil
}

// workflowParts splits the document into its top-level object (without
// "tasks") and the entries of "tasks", each with its line.
func workflowParts(name string, data []byte) (*object, []rawEntry, error) {
	notObject := &ImportError{File: name, Line: 1, Err: fmt.Errorf(`%w: a workflow.json is an object {"project": ..., "tasks": [...]}`, flow.ErrInvalid)}
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, notObject
	}
	top := &object{file: name, keys: map[string]json.RawMessage{}, used: map[string]bool{}}
	var entries []rawEntry
	hasTasks := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, notObject
		}
		key, _ := tok.(string)
		if key == "tasks" && !hasTasks {
			hasTasks = true
			line := lineAt(data, dec.InputOffset())
			if entries, err = arrayEntries(dec, data); err != nil {
				return nil, nil, &ImportError{File: name, Line: line, Err: fmt.Errorf(`%w: "tasks" is not an array of tasks`, flow.ErrInvalid)}
			}
			continue
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, notObject
		}
		top.keys[key] = raw
	}
	if !hasTasks {
		return nil, nil, &ImportError{File: name, Line: 1, Err: fmt.Errorf(`%w: the file has no "tasks" array`, flow.ErrInvalid)}
	}
	return top, entries, nil
}

// parseWorkflowTask reads one entry: id, name (or title), status, deps,
// meta.owner, meta.tags, description, priority.
func parseWorkflowTask(file string, en rawEntry, n int) (workflowTask, []string, error) {
	o, err := newObject(file, en.line, fmt.Sprintf("task %d", n), en.raw)
	if err != nil {
		return workflowTask{}, nil, err
	}
	t := workflowTask{line: en.line, n: n}
	if t.ref, err = o.ident("id", true); err != nil {
		return t, nil, err
	}
	if strings.TrimSpace(t.ref) == "" {
		return t, nil, o.errorf(flow.ErrInvalid, `"id" is empty`)
	}
	o.what = fmt.Sprintf("task %d (%q)", n, t.ref)
	if err := t.fields(o); err != nil {
		return t, nil, err
	}
	meta, err := o.sub("meta")
	if err != nil {
		return t, nil, err
	}
	var warns []string
	if meta != nil {
		if t.in.Owner, err = meta.str("owner", false); err != nil {
			return t, nil, err
		}
		if t.in.Tags, err = meta.strs("tags"); err != nil {
			return t, nil, err
		}
		warns = appendWarning(warns, meta.unused("meta."))
	}
	t.in.Ref = t.ref
	t.in.Clean()
	if err := o.wrap(t.in.Check()); err != nil {
		return t, nil, err
	}
	return t, appendWarning(warns, o.unused("")), nil
}

func appendWarning(warns []string, w string) []string {
	if w == "" {
		return warns
	}
	return append(warns, w)
}

// fields reads the entry's own fields (meta aside).
func (t *workflowTask) fields(o *object) error {
	var err error
	if t.in.Title, err = o.str("name", false); err != nil {
		return err
	}
	if title, err := o.str("title", false); err != nil {
		return err
	} else if t.in.Title == "" {
		t.in.Title = title
	}
	if strings.TrimSpace(t.in.Title) == "" {
		return o.errorf(flow.ErrInvalid, `"name" is missing or empty`)
	}
	status, err := o.str("status", false)
	if err != nil {
		return err
	}
	var ok bool
	if t.status, ok = Status(status); !ok {
		return o.errorf(flow.ErrInvalid, "unknown status %q (known: todo, pending, doing, in_progress, done, completed, blocked, failed, cancelled, skipped and their synonyms)", status)
	}
	if t.deps, err = o.idents("deps"); err != nil {
		return err
	}
	slices.Sort(t.deps)
	t.deps = slices.Compact(t.deps)
	if t.in.Description, err = o.str("description", false); err != nil {
		return err
	}
	pri, err := o.number("priority")
	if err != nil {
		return err
	}
	if pri != math.Trunc(pri) || math.Abs(pri) > 1<<31 {
		return o.errorf(flow.ErrInvalid, `"priority" %v is not an integer`, pri)
	}
	t.in.Priority = int(pri)
	return nil
}

// addWorkflow creates the project if it is missing, then one task per
// entry whose ref the project does not have yet, in dependency order
// (file order where the file allows it).
func addWorkflow(im *flow.Importer, file string, doc *workflowDoc, project string, res *Result) error {
	p, err := im.Project(project)
	if err != nil {
		return err
	}
	if p == nil {
		if err := im.CreateProject(project, doc.description); err != nil {
			return err
		}
		res.Created.Projects++
	} else if _, err := im.OpenProject(project); err != nil {
		return err
	}
	refs, err := loadRefs(im, project)
	if err != nil {
		return err
	}
	res.Tasks = make([]Task, len(doc.tasks))
	fresh := make([]bool, len(doc.tasks))
	for i, t := range doc.tasks {
		if id, ok := refs.ref(t.ref); ok {
			res.Tasks[i] = Task{Ref: t.ref, ID: id}
			res.Skipped++
			continue
		}
		fresh[i] = true
	}
	order, err := workflowOrder(file, doc.tasks, fresh, refs)
	if err != nil {
		return err
	}
	for n, i := range order {
		im.Progress(n, len(order))
		id, err := createImportedTask(im, project, doc.tasks[i], refs)
		if err != nil {
			return &ImportError{File: file, Line: doc.tasks[i].line, Err: err}
		}
		refs.add(doc.tasks[i].ref, id)
		res.Tasks[i] = Task{Ref: doc.tasks[i].ref, ID: id, Created: true}
		res.Created.Tasks++
	}
	return nil
}

func createImportedTask(im *flow.Importer, project string, t workflowTask, refs *refIndex) (string, error) {
	deps := make([]string, 0, len(t.deps))
	for _, d := range t.deps {
		id, _ := refs.ref(d) // workflowOrder made sure it is there
		deps = append(deps, id)
	}
	slices.SortFunc(deps, projection.CompareTaskIDs)
	status := t.status
	if status == projection.StatusTodo {
		status = ""
	}
	return im.CreateTask(project, projection.TaskCreated{Title: t.in.Title, Description: t.in.Description, Deps: slices.Compact(deps),
		Owner: t.in.Owner, Tags: t.in.Tags, Priority: t.in.Priority, Ref: t.ref, Status: status})
}

// workflowOrder orders the fresh entries so that each comes after the
// entries it depends on, taking the earliest entry in the file whenever
// several could come next. A dependency must be an entry of the file or
// a task of the project; a cycle among the entries is refused.
func workflowOrder(file string, tasks []workflowTask, fresh []bool, refs *refIndex) ([]int, error) {
	index := map[string]int{}
	for i, t := range tasks {
		if fresh[i] {
			index[t.ref] = i
		}
	}
	indeg := make([]int, len(tasks))
	next := make([][]int, len(tasks))
	total := 0
	for i, t := range tasks {
		if !fresh[i] {
			continue
		}
		total++
		for _, d := range t.deps {
			if j, ok := index[d]; ok {
				indeg[i]++
				next[j] = append(next[j], i)
			} else if _, ok := refs.ref(d); !ok {
				return nil, &ImportError{File: file, Line: t.line, Err: fmt.Errorf("%w: task %d (%q): dependency %q is not a task of the file or of the project",
					flow.ErrNotFound, t.n, t.ref, d)}
			}
		}
	}
	var ready, order []int
	for i := range tasks {
		if fresh[i] && indeg[i] == 0 {
			ready = append(ready, i)
		}
	}
	for len(ready) > 0 {
		i := ready[0]
		ready = ready[1:]
		order = append(order, i)
		for _, j := range next[i] {
			if indeg[j]--; indeg[j] == 0 {
				k, _ := slices.BinarySearch(ready, j)
				ready = slices.Insert(ready, k, j)
			}
		}
	}
	if len(order) < total {
		return nil, cycleError(file, tasks, index, indeg)
	}
	return order, nil
}

// cycleError names one cycle among the entries left with dependencies
// that never came: walk from the earliest of them to a dependency still
// waiting until an entry repeats.
func cycleError(file string, tasks []workflowTask, index map[string]int, indeg []int) error {
	start := slices.IndexFunc(indeg, func(d int) bool { return d > 0 })
	pos := map[int]int{}
	var path []int
	for i := start; ; {
		if k, seen := pos[i]; seen {
			path = append(path[k:], i)
			break
		}
		pos[i] = len(path)
		path = append(path, i)
		j := waitingDep(tasks[i], index, indeg)
		if j < 0 {
			return fmt.Errorf("flow: no dependency cycle through task %q", tasks[i].ref) // cannot happen
		}
		i = j
	}
	names := make([]string, len(path))
	for k, i := range path {
		names[k] = strconv.Quote(tasks[i].ref)
	}
	first := slices.Min(path[:len(path)-1])
	return &ImportError{File: file, Line: tasks[first].line, Err: fmt.Errorf("%w: dependency cycle: %s (each depends on the next)",
		store.ErrConflict, strings.Join(names, " → "))}
}

// waitingDep returns the entry of a dependency of t that never came, or -1.
func waitingDep(t workflowTask, index map[string]int, indeg []int) int {
	for _, d := range t.deps {
		if j, ok := index[d]; ok && indeg[j] > 0 {
			return j
		}
	}
	return -1
}
