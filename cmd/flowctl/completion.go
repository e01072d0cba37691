package main

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Dynamic shell completion: the ids of the file (with their titles as
// descriptions), project names, checkpoints for points, event types and
// the closed sets of enum flags. Completion opens the file read-only and
// reads the status index (ids, statuses and titles: one prefix scan of
// small values), never the log or every task.

// completionLockTimeout bounds completion's wait for the file lock.
const completionLockTimeout = 300 * time.Millisecond

// completer lists the candidates of one argument or flag value.
type completer func(a *app, eng *flow.Engine, project string) ([]cobra.Completion, error)

// argCompleters complete a command's first argument, by command path.
var argCompleters = map[string]completer{
	"task show": completeTasks, "task edit": completeTasks, "task start": completeTasks,
	"task done": completeTasks, "task block": completeTasks, "task cancel": completeTasks,
	"task reopen": completeTasks, "task claim": completeTasks, "task release": completeTasks,
	"task heartbeat": completeTasks, "dep add": completeTasks, "dep rm": completeTasks,
	"dep ls": completeTasks, "ctx get": completeTasks, "ctx merge": completeTasks,
	"ctx replace": completeTasks, "ctx set": completeTasks, "ctx unset": completeTasks,
	"ctx history": completeTasks, "step add": completeTasks, "step ls": completeTasks,
	"report": completeTasks, "graph": completeTasks,
	"step start": completeSteps, "step progress": completeSteps, "step done": completeSteps,
	"step fail": completeSteps, "step skip": completeSteps,
	"approval show": completeApprovals, "approval grant": completeApprovals,
	"approval deny": completeApprovals, "approval wait": completeApprovals,
	"approval check": completeApprovals,
	"plan show":      completePlans, "plan close": completePlans,
	"exec show": completeExecs, "diff": completePoints,
	"project switch": completeProjects, "project show": completeProjects, "project archive": completeProjects,
}

// secondArg are the commands whose second argument takes the same
// candidates as the first (dep add T D, diff A B).
var secondArg = map[string]bool{"dep add": true, "dep rm": true, "diff": true}

// flagCompleters complete a flag's value, by flag name, on every command
// that has the flag.
var flagCompleters = map[string]completer{
	"task": completeTasks, "dep": completeTasks,
	"step": completeSteps, "plan": completePlans,
	"at": completePoints, "to": completePoints,
	"project": completeProjects,
	"type":    completeEventTypes,
}

// addCompletions wires the completers into the tree that rootCommand
// built.
func (a *app) addCompletions(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.TrimPrefix(c.CommandPath(), root.Name()+" ")
		if f, ok := argCompleters[path]; ok && c.ValidArgsFunction == nil {
			c.ValidArgsFunction = a.completeArgs(f, secondArg[path])
		}
		c.LocalFlags().VisitAll(func(fl *pflag.Flag) {
			if f, ok := flagCompleters[fl.Name]; ok {
				c.RegisterFlagCompletionFunc(fl.Name, a.completeFlag(f))
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	root.RegisterFlagCompletionFunc("output", fixedCompletions("text", "json", "jsonl"))
	root.RegisterFlagCompletionFunc("color", fixedCompletions("auto", "always", "never"))
}

func fixedCompletions(values ...string) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}

func (a *app) completeArgs(f completer, two bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 1 || len(args) == 1 && !two {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return a.complete(cmd, f, prefix)
	}
}

func (a *app) completeFlag(f completer) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return a.complete(cmd, f, prefix)
	}
}

// complete opens the file read-only and lists f's candidates that start
// with prefix. Any failure (no file, no project) offers nothing.
func (a *app) complete(cmd *cobra.Command, f completer, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	none := cobra.ShellCompDirectiveNoFileComp
	if err := a.resolveGlobals(cmd); err != nil {
		return nil, none
	}
	a.g.quiet = true // no warnings on the shell's line
	// A writer holding the file must not freeze the shell: give up soon.
	a.g.lockTimeout = min(a.g.lockTimeout, completionLockTimeout)
	eng, err := a.open(true)
	if err != nil {
		return nil, none
	}
	defer eng.Close()
	project, _ := a.currentProject(eng)
	a.completingWord = prefix
	all, err := f(a, eng, project)
	if err != nil {
		return nil, none
	}
	var out []cobra.Completion
	for _, c := range all {
		if strings.HasPrefix(c, prefix) {
			out = append(out, c)
		}
	}
	return out, none | cobra.ShellCompDirectiveKeepOrder
}

// described is a candidate with its description, one line, cut short.
func described(id, desc string) cobra.Completion {
	desc = printable(desc)
	if len(desc) > 60 { // bytes: only a long one can have over 60 runes
		if r := []rune(desc); len(r) > 60 {
			desc = string(r[:59]) + "…"
		}
	}
	return cobra.CompletionWithDesc(id, desc)
}

func completeTasks(a *app, eng *flow.Engine, project string) ([]cobra.Completion, error) {
	return a.indexed(eng.TaskIndex(project))
}

// indexed makes candidates of the status index's entries: the id, with
// the status and title as its description. It keeps only the ids that
// start with the word being completed, before it describes them.
func (a *app) indexed(entries []flow.IndexEntry, err error) ([]cobra.Completion, error) {
	var out []cobra.Completion
	for _, e := range entries {
		if strings.HasPrefix(e.ID, a.completingWord) {
			out = append(out, described(e.ID, e.Status+": "+e.Title))
		}
	}
	return out, err
}

// completeSteps lists the steps of the tasks still open.
func completeSteps(_ *app, eng *flow.Engine, project string) ([]cobra.Completion, error) {
	tasks, err := eng.TaskIndex(project)
	if err != nil {
		return nil, err
	}
	var out []cobra.Completion
	for _, e := range tasks {
		if e.Status == projection.StatusDone || e.Status == projection.StatusCancelled {
			continue
		}
		t, err := eng.Task(project, e.ID)
		if err != nil {
			return nil, err
		}
		for _, s := range t.Steps {
			out = append(out, described(s.ID, s.Status+": "+s.Title))
		}
	}
	return out, nil
}

// completeApprovals lists the pending approvals first, then the decided.
func completeApprovals(a *app, eng *flow.Engine, project string) ([]cobra.Completion, error) {
	aps, err := eng.ApprovalIndex(project)
	slices.SortStableFunc(aps, func(x, y flow.IndexEntry) int {
		return boolRank(x.Status != projection.ApprovalPending) - boolRank(y.Status != projection.ApprovalPending)
	})
	return a.indexed(aps, err)
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

func completePlans(a *app, eng *flow.Engine, project string) ([]cobra.Completion, error) {
	return a.indexed(eng.PlanIndex(project))
}

func completeExecs(_ *app, eng *flow.Engine, project string) ([]cobra.Completion, error) {
	xs, err := eng.Execs(project, flow.ExecFilter{})
	if err != nil {
		return nil, err
	}
	out := make([]cobra.Completion, 0, len(xs))
	for _, x := range xs {
		out = append(out, described(x.ID, "exit "+strconv.Itoa(x.ExitCode)+": "+x.Command))
	}
	return out, nil
}

// completePoints lists the checkpoints, newest first.
func completePoints(_ *app, eng *flow.Engine, project string) ([]cobra.Completion, error) {
	cps, err := eng.Checkpoints(project)
	if err != nil {
		return nil, err
	}
	out := make([]cobra.Completion, 0, len(cps))
	for i := len(cps) - 1; i >= 0; i-- {
		c := cps[i]
		out = append(out, described(c.ID, "seq "+strconv.FormatUint(c.AtSeq, 10)+" "+c.Label))
	}
	return out, nil
}

func completeProjects(_ *app, eng *flow.Engine, _ string) ([]cobra.Completion, error) {
	ps, err := eng.Projects()
	if err != nil {
		return nil, err
	}
	out := make([]cobra.Completion, 0, len(ps))
	for _, p := range ps {
		out = append(out, described(p.Name, p.Description))
	}
	return out, nil
}

func completeEventTypes(*app, *flow.Engine, string) ([]cobra.Completion, error) {
	return eventTypes, nil
}
