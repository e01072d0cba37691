package digest

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
)

// DefaultAlpha is the smoothing factor of the weighted success rate per
// tool: each new record counts for 30%, the past for 70%.
const DefaultAlpha = 0.3

// EWMAPrior is the weighted success rate of a tool before its first
// record, as the seeds' execution-pattern memory starts every tool at 0.5.
const EWMAPrior = 0.5

// CodeCommand is the command and tool name of records that ran code (the
// seeds' exec log) rather than a command line.
const CodeCommand = "code"

// StatsOptions configure Stats.
type StatsOptions struct {
	Alpha float64 // in (0, 1]; 0 means DefaultAlpha
	// TaskLimit, when above 0, keeps only the first TaskLimit tasks (by
	// id) in Tasks, each counted and titled; TaskCount counts them all.
	TaskLimit int
}

// ExecStats summarises a project's exec records: success and elapsed time
// overall, per command and per task, and a weighted success rate per tool.
// Every list is sorted (commands and tools by name, tasks by id with
// records of no task last) and never nil. Rates and means are rounded to
// six decimals.
type ExecStats struct {
	Project  string         `json:"project"`
	Alpha    float64        `json:"alpha"`
	Prior    float64        `json:"prior"`
	Total    Outcomes       `json:"total"`
	Commands []CommandStats `json:"commands"`
	Tasks    []TaskStats    `json:"tasks"`
	Tools    []ToolStats    `json:"tools"`
	// TaskCount is how many tasks (and "" for records of no task) have
	// records: len(Tasks) but under a TaskLimit.
	TaskCount int `json:"-"`
}

// Outcomes counts runs and their elapsed times.
type Outcomes struct {
	Runs        int          `json:"runs"`
	Successes   int          `json:"successes"`
	Failures    int          `json:"failures"`
	SuccessRate float64      `json:"success_rate"` // successes / runs; 0 without runs
	Elapsed     ElapsedStats `json:"elapsed_ms"`
}

// ElapsedStats summarises elapsed times in milliseconds; Count leaves out
// records whose time is not a finite number. P50 is the
// nearest-rank median: the smallest time with at least half the runs at
// or below it, always one that was measured.
type ElapsedStats struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	Max   float64 `json:"max"`
}

// CommandStats are the outcomes of one command (see CommandKey).
type CommandStats struct {
	Command string `json:"command"`
	Tool    string `json:"tool"`
	Outcomes
}

// TaskStats are the outcomes of one task's records; Task is "" for
// records of no task.
type TaskStats struct {
	Task  string `json:"task"`
	Title string `json:"title,omitempty"`
	Outcomes
}

// ToolStats are the outcomes of one tool (a program name) with EWMA, its
// exponentially weighted success rate over its records in seq order:
// starting at Prior, each record moves it to (1-alpha)*ewma + alpha*x,
// x being 1 for a success and 0 for a failure.
type ToolStats struct {
	Tool    string  `json:"tool"`
	EWMA    float64 `json:"ewma"`
	LastSeq uint64  `json:"last_seq"`
	Outcomes
}

// Stats computes the statistics of a project's exec records, read in one
// flow.Engine.Read (on a view At a point, the records at that point). It
// reads the exec summary (flow.Reader.ExecRows: a row of the fields it
// needs per record) rather than the record itself, which the file keeps
// as its event. It returns flow.ErrInvalid for an alpha outside (0, 1]
// and flow.ErrNotFound for an unknown project.
func Stats(e *flow.Engine, project string, opts StatsOptions) (*ExecStats, error) {
	alpha := opts.Alpha
	if alpha == 0 {
		alpha = DefaultAlpha
	}
	if !(alpha > 0 && alpha <= 1) {
		return nil, fmt.Errorf("%w: alpha %v: use a number in (0, 1]", flow.ErrInvalid, opts.Alpha)
	}
	var out *ExecStats
	err := e.Read(func(r *flow.Reader) error {
		if _, err := r.Project(project); err != nil {
			return err
		}
		rows, err := r.ExecRows(project)
		if err != nil {
			return err
		}
		out = computeStats(project, alpha, rows, opts.TaskLimit)
		// Titles come from the status index: a task list would decode
		// every task of the project for one string each. A few are read
		// by key.
		if opts.TaskLimit > 0 && len(out.Tasks) < out.TaskCount {
			for i := range out.Tasks {
				if id := out.Tasks[i].Task; id != "" {
					t, err := r.Task(project, id)
					switch {
					case err == nil:
						out.Tasks[i].Title = t.Title
					case !errors.Is(err, flow.ErrNotFound):
						return err
					}
				}
			}
			return nil
		}
		tasks, err := r.TaskIndex(project)
		titles := make(map[string]string, len(tasks))
		for _, t := range tasks {
			titles[t.ID] = t.Title
		}
		for i := range out.Tasks {
			out.Tasks[i].Title = titles[out.Tasks[i].Task]
		}
		return err
	})
	return out, err
}

// computeStats is Stats on rows already read, in seq order, without the
// tasks' titles; limit > 0 keeps the first limit tasks.
func computeStats(project string, alpha float64, rows []flow.ExecRow, limit int) *ExecStats {
	st := &ExecStats{Project: project, Alpha: alpha, Prior: EWMAPrior}
	byCommand := map[string][]*flow.ExecRow{}
	taskRuns := map[string]int{} // tasks are many, with few runs each: grouped once counted (taskStats)
	byTool := map[string][]*flow.ExecRow{}
	// Records repeat a few command lines: each is split once.
	type line struct {
		command string
		code    bool
	}
	type keyTool struct{ key, tool string }
	keys := map[line]keyTool{}
	all := make([]*flow.ExecRow, len(rows))
	for i := range rows {
		x := &rows[i]
		all[i] = x
		l := line{x.Command, x.Code}
		kt, ok := keys[l]
		if !ok {
			kt.key, kt.tool = commandKey(x.Command, x.Code)
			keys[l] = kt
		}
		key, tool := kt.key, kt.tool
		byCommand[key] = append(byCommand[key], x)
		taskRuns[x.Task]++
		byTool[tool] = append(byTool[tool], x)
	}
	st.Total = outcomesOf(all)
	st.Commands = commandStats(byCommand)
	st.Tasks, st.TaskCount = taskStats(all, taskRuns, limit), len(taskRuns)
	st.Tools = toolStats(byTool, alpha)
	return st
}

func commandStats(groups map[string][]*flow.ExecRow) []CommandStats {
	out := []CommandStats{}
	for _, key := range statsKeys(groups) {
		x := groups[key][0]
		_, tool := commandKey(x.Command, x.Code)
		out = append(out, CommandStats{Command: key, Tool: tool, Outcomes: outcomesOf(groups[key])})
	}
	return out
}

// taskStats counts the rows of each task that has runs runs (rows' Task
// keys it), the first limit tasks by id when limit > 0. The rows of those
// are grouped in one slice, each task's at its own place in it.
func taskStats(rows []*flow.ExecRow, runs map[string]int, limit int) []TaskStats {
	ids := make([]string, 0, len(runs))
	for id := range runs {
		ids = append(ids, id)
	}
	sortTaskIDs(ids)
	if limit > 0 && limit < len(ids) {
		ids = ids[:limit]
	}
	next := make(map[string]int, len(ids)) // where the task's next row goes
	n := 0
	for _, id := range ids {
		next[id] = n
		n += runs[id]
	}
	grouped := make([]*flow.ExecRow, n)
	for _, x := range rows {
		if at, ok := next[x.Task]; ok {
			grouped[at] = x
			next[x.Task] = at + 1
		}
	}
	out := make([]TaskStats, len(ids))
	at := 0
	for i, id := range ids {
		out[i] = TaskStats{Task: id, Outcomes: outcomesOf(grouped[at : at+runs[id]])}
		at += runs[id]
	}
	return out
}

// sortTaskIDs sorts ids as projection.CompareIDs does, "" (records of no
// task) last. The keys it sorts hold no pointer (a sort of strings under
// a running GC pays a write barrier per move): the id's number and its
// index; ids that tie on the number are compared whole.
func sortTaskIDs(ids []string) {
	type place struct{ n, i int }
	order := make([]place, len(ids))
	// by number alone when every id is "T-n" with n as Itoa writes it (and
	// at most one ""): no two tie, and the order is CompareIDs'.
	byNumber := true
	for i, id := range ids {
		n := math.MaxInt // no task: last
		if id != "" {
			pre, num, _ := strings.Cut(id, "-")
			n, _ = strconv.Atoi(num)
			byNumber = byNumber && pre == "T" && n >= 0 && n < math.MaxInt && strconv.Itoa(n) == num
		}
		order[i] = place{n, i}
	}
	if byNumber {
		slices.SortFunc(order, func(a, b place) int { return cmp.Compare(a.n, b.n) })
	} else {
		slices.SortFunc(order, func(a, b place) int {
			x, y := ids[a.i], ids[b.i]
			if (x == "") != (y == "") {
				return cmp.Compare(y, x) // no task last
			}
			px, _, _ := strings.Cut(x, "-")
			py, _, _ := strings.Cut(y, "-")
			if c := strings.Compare(px, py); c != 0 {
				return c
			}
			if a.n != b.n {
				return cmp.Compare(a.n, b.n)
			}
			return strings.Compare(x, y)
		})
	}
	sorted := make([]string, len(ids))
	for j, p := range order {
		sorted[j] = ids[p.i]
	}
	copy(ids, sorted)
}

func toolStats(groups map[string][]*flow.ExecRow, alpha float64) []ToolStats {
	out := []ToolStats{}
	for _, tool := range statsKeys(groups) {
		xs := groups[tool]
		wins := make([]bool, len(xs))
		for i, x := range xs {
			wins[i] = x.Success
		}
		out = append(out, ToolStats{Tool: tool, EWMA: round6(ewmaOf(wins, alpha, EWMAPrior)),
			LastSeq: xs[len(xs)-1].Seq, Outcomes: outcomesOf(xs)})
	}
	return out
}

func statsKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// outcomes counts xs.
func outcomesOf(xs []*flow.ExecRow) Outcomes {
	var o Outcomes
	times := make([]float64, 0, len(xs))
	for _, x := range xs {
		o.Runs++
		if x.Success {
			o.Successes++
		} else {
			o.Failures++
		}
		times = append(times, x.ElapsedMS)
	}
	if o.Runs > 0 {
		o.SuccessRate = round6(float64(o.Successes) / float64(o.Runs))
	}
	o.Elapsed = elapsedOf(times)
	return o
}

// elapsedOf summarises times (in any order), leaving out the ones that
// are not finite.
func elapsedOf(times []float64) ElapsedStats {
	sorted := slices.DeleteFunc(slices.Clone(times), func(t float64) bool { return math.IsNaN(t) || math.IsInf(t, 0) })
	if len(sorted) == 0 {
		return ElapsedStats{}
	}
	slices.Sort(sorted)
	sum := 0.0
	for _, t := range sorted {
		sum += t
	}
	return ElapsedStats{
		Count: len(sorted),
		Mean:  round6(sum / float64(len(sorted))),
		P50:   nearestRank(sorted, 50),
		Max:   sorted[len(sorted)-1],
	}
}

// percentile returns the nearest-rank p-th percentile of sorted (not
// empty): the value at rank ceil(p/100 * n).
func nearestRank(sorted []float64, p float64) float64 {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// ewma folds outcomes, oldest first, into an exponentially weighted
// success rate that starts at prior.
func ewmaOf(wins []bool, alpha, prior float64) float64 {
	r := prior
	for _, w := range wins {
		x := 0.0
		if w {
			x = 1
		}
		r = (1-alpha)*r + alpha*x
	}
	return r
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// CommandKey groups an exec record: key is the program's base name plus
// its first argument when that is not a flag ("go test -race ./..." is
// "go test", "ls -la" is "ls"), after leading NAME=value assignments;
// tool is the program's base name ("go"). Records that ran code have key
// and tool CodeCommand; records with neither command nor code "unknown".
func CommandKey(x *projection.Exec) (key, tool string) {
	return commandKey(x.Command, x.Code != "")
}

// commandKey is CommandKey of a record of command that ran code or not.
func commandKey(command string, code bool) (key, tool string) {
	words := commandWords(command)
	for len(words) > 0 && envAssignment(words[0]) {
		words = words[1:]
	}
	switch {
	case len(words) == 0 && code:
		return CodeCommand, CodeCommand
	case len(words) == 0:
		return "unknown", "unknown"
	}
	tool = path.Base(words[0])
	if len(words) > 1 && !strings.HasPrefix(words[1], "-") {
		return tool + " " + words[1], tool
	}
	return tool, tool
}

func envAssignment(word string) bool {
	name, _, ok := strings.Cut(word, "=")
	return ok && name != "" && !strings.ContainsAny(name, "/-.")
}

// commandWords splits a command line as a POSIX shell would split plain
// words: on blanks, with '...' and "..." quoting and \ escapes.
func commandWords(s string) []string {
	var words []string
	var cur strings.Builder
	inWord, quote, escaped := false, rune(0), false
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case r == '\\' && quote != '\'':
			escaped, inWord = true, true
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}
