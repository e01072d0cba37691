package digest

import (
	"cmp"
	"fmt"
	"math"
	"path"
	"slices"
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
// returns flow.ErrInvalid for an alpha outside (0, 1] and flow.ErrNotFound
// for an unknown project.
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
		execs, err := r.Execs(project)
		if err != nil {
			return err
		}
		// Titles come from the status index: a task list would decode
		// every task of the project for one string each.
		tasks, err := r.TaskIndex(project)
		titles := make(map[string]string, len(tasks))
		for _, t := range tasks {
			titles[t.ID] = t.Title
		}
		out = computeStats(project, alpha, execs, titles)
		return err
	})
	return out, err
}

// computeStats is Stats on records already read.
func computeStats(project string, alpha float64, execs []*projection.Exec, titles map[string]string) *ExecStats {
	execs = slices.Clone(execs)
	slices.SortStableFunc(execs, func(a, b *projection.Exec) int { return cmp.Compare(a.Seq, b.Seq) })
	st := &ExecStats{Project: project, Alpha: alpha, Prior: EWMAPrior}
	byCommand := map[string][]*projection.Exec{}
	byTask := map[string][]*projection.Exec{}
	byTool := map[string][]*projection.Exec{}
	// Records repeat a few command lines: each is split once.
	type line struct {
		command string
		code    bool
	}
	type keyTool struct{ key, tool string }
	keys := map[line]keyTool{}
	for _, x := range execs {
		l := line{x.Command, x.Code != ""}
		kt, ok := keys[l]
		if !ok {
			kt.key, kt.tool = CommandKey(x)
			keys[l] = kt
		}
		key, tool := kt.key, kt.tool
		byCommand[key] = append(byCommand[key], x)
		byTask[x.Task] = append(byTask[x.Task], x)
		byTool[tool] = append(byTool[tool], x)
	}
	st.Total = outcomesOf(execs)
	st.Commands = commandStats(byCommand)
	st.Tasks = taskStats(byTask, titles)
	st.Tools = toolStats(byTool, alpha)
	return st
}

func commandStats(groups map[string][]*projection.Exec) []CommandStats {
	out := []CommandStats{}
	for _, key := range statsKeys(groups) {
		_, tool := CommandKey(groups[key][0])
		out = append(out, CommandStats{Command: key, Tool: tool, Outcomes: outcomesOf(groups[key])})
	}
	return out
}

func taskStats(groups map[string][]*projection.Exec, titles map[string]string) []TaskStats {
	out := []TaskStats{}
	for id, xs := range groups {
		out = append(out, TaskStats{Task: id, Title: titles[id], Outcomes: outcomesOf(xs)})
	}
	slices.SortFunc(out, func(a, b TaskStats) int {
		if (a.Task == "") != (b.Task == "") {
			return cmp.Compare(b.Task, a.Task) // no task last
		}
		return projection.CompareIDs(a.Task, b.Task)
	})
	return out
}

func toolStats(groups map[string][]*projection.Exec, alpha float64) []ToolStats {
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
func outcomesOf(xs []*projection.Exec) Outcomes {
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
	words := commandWords(x.Command)
	for len(words) > 0 && envAssignment(words[0]) {
		words = words[1:]
	}
	switch {
	case len(words) == 0 && x.Code != "":
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
