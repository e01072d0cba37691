package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// runCancelled runs flowctl in dir with a context that is already
// cancelled: a command that follows the log (watch, log -f) and is not
// refused ends at once with exit 0 instead of running for ever.
func runCancelled(dir string, args ...string) (stdout, stderr string, code int) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut bytes.Buffer
	e := env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut,
		getenv: func(k string) string { return testEnv[k] }, dir: dir}
	code = run(ctx, args, e)
	return out.String(), errOut.String(), code
}

// wantRefused runs args on f and checks that they exit 2 with one line
// naming every fact, print nothing on stdout and leave the file as it was.
func wantRefused(t *testing.T, f *flowFile, args []string, facts ...string) {
	t.Helper()
	before := f.bytes()
	stdout, stderr, code := runCancelled(f.dir, args...)
	wantError(t, stderr, code, 2, facts...)
	if stdout != "" {
		t.Errorf("%v: stdout = %q, want nothing", args, stdout)
	}
	if !bytes.Equal(before, f.bytes()) {
		t.Errorf("%v changed the file", args)
	}
}

// TestFlags_ClosedSets: a flag that takes one of a closed set of values
// refuses any other with exit 2 and the list of the valid ones, instead of
// filtering on it (an empty table, exit 0) or storing it.
func TestFlags_ClosedSets(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "p")
	f.mustRun("", "task", "add", "first")
	tests := []struct {
		name  string
		args  []string
		facts []string
	}{
		{"TaskStatus", []string{"task", "ls", "--status", "nosuch"}, []string{"--status", "todo", "doing", "done", "blocked", "cancelled"}},
		{"ApprovalStatus", []string{"approval", "ls", "--status", "nosuch"}, []string{"--status", "pending", "granted", "denied"}},
		{"NoteKind", []string{"note", "add", "--kind", "nosuch", "text"}, []string{"--kind", "note", "memory"}},
		{"NoteLsKind", []string{"note", "ls", "--kind", "nosuch"}, []string{"--kind", "note", "memory"}},
		{"WatchFormat", []string{"watch", "--format", "yaml"}, []string{"--format", "text", "jsonl", "mcp"}},
		{"LogType", []string{"log", "--type", "no.such.type"}, []string{"--type", "task.created", "task.*"}},
		{"LogTypeWithoutStar", []string{"log", "--type", "task"}, []string{"--type", "task.created"}},
		{"LogTypePrefixOfNothing", []string{"log", "--type", "tsak.*"}, []string{"--type", "task.created"}},
		{"WatchType", []string{"watch", "--type", "nosuch"}, []string{"--type", "approval.decided"}},
		{"ImportFrom", []string{"import", "--from", "csv", "x.csv"}, []string{"--from", "events", "workflow-json"}},
		{"Output", []string{"task", "ls", "-o", "yaml"}, []string{"yaml", "text", "json", "jsonl"}},
		{"Color", []string{"task", "ls", "--color", "sometimes"}, []string{"--color", "auto", "never"}},
		{"ColorPurple", []string{"task", "ls", "--color", "purple"}, []string{"--color", "auto", "always", "never"}},
		{"MCPText", []string{"mcp", "--text", "terse"}, []string{"--text", "full", "summary"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantRefused(t, f, tt.args, tt.facts...) })
	}

	t.Run("ValidValues", func(t *testing.T) {
		for _, args := range [][]string{
			{"task", "ls", "--status", "todo"},
			{"approval", "ls", "--status", "pending"},
			{"note", "ls", "--kind", "memory"},
			{"log", "--type", "task.*"},
			{"log", "--type", "rollback.applied"},
		} {
			f.mustRun("", args...)
		}
		if out := f.mustRun("", "task", "ls", "--status", "todo"); !strings.Contains(out, "first") {
			t.Errorf("task ls --status todo = %q, want the todo task", out)
		}
	})
}

// TestFlags_Conflicts: two flags that ask for different output formats
// are refused, instead of one of them winning silently.
func TestFlags_Conflicts(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "p")
	for _, args := range [][]string{
		{"task", "ls", "--json", "-o", "text"},
		{"task", "ls", "-o", "jsonl", "--json"},
		{"watch", "--format", "jsonl", "-o", "text"},
		{"watch", "--format", "mcp", "--json"},
	} {
		t.Run(strings.Join(args, "_"), func(t *testing.T) { wantRefused(t, f, args, "two formats") })
	}
	t.Run("Agreeing", func(t *testing.T) {
		if out := f.mustRun("", "task", "ls", "--json", "-o", "json"); strings.TrimSpace(out) != "[]" {
			t.Errorf("--json -o json printed %q, want []", out)
		}
	})
}

// TestFlags_IfVersion: --if-version 0 is refused (it used to mean "no
// check", so any version passed), and the commands that create an entity
// take no --if-version at all instead of creating whatever it says.
func TestFlags_IfVersion(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "p")
	f.mustRun("", "task", "add", "first")
	f.mustRun("", "task", "edit", "T-1", "--title", "again") // v2
	for _, args := range [][]string{
		{"task", "edit", "T-1", "--title", "x", "--if-version", "0"},
		{"task", "start", "T-1", "--if-version", "0"},
		{"ctx", "set", "T-1", "a", "1", "--if-version", "0"},
		{"exec", "run", "--task", "T-1", "--if-version", "0", "--", "true"},
		{"task", "edit", "T-1", "--title", "x", "--if-version", "-1"},
	} {
		t.Run("Zero/"+strings.Join(args[:2], "_"), func(t *testing.T) { wantRefused(t, f, args, "--if-version") })
	}
	for _, args := range [][]string{
		{"task", "add", "second", "--if-version", "5"},
		{"plan", "new", "a plan", "--if-version", "5"},
		{"project", "new", "other", "--if-version", "5"},
	} {
		t.Run("Create/"+strings.Join(args[:2], "_"), func(t *testing.T) { wantRefused(t, f, args, "--if-version") })
	}
	t.Run("StaleIsAConflict", func(t *testing.T) {
		_, stderr, code := f.run("", "task", "edit", "T-1", "--title", "x", "--if-version", "1")
		wantError(t, stderr, code, 4)
		f.mustRun("", "task", "edit", "T-1", "--title", "x", "--if-version", "2")
	})
}

// walkCommands calls fn for every command below root that runs (a group
// that only prints its help is left out; checkpoint, a group that runs,
// is not).
func walkCommands(root *cobra.Command, fn func(c *cobra.Command)) {
	for _, c := range root.Commands() {
		walkCommands(c, fn)
		if _, decided := globalUses[commandPath(c)]; decided || !c.HasSubCommands() {
			fn(c)
		}
	}
}

// closedSetFlags are the names of flags that take one of a closed set of
// values, wherever they appear: each must be an enumValue (or, --type, a
// typePattern), so that a new one cannot take any string by accident.
var closedSetFlags = []string{"status", "kind", "format", "from", "text", "type", "output", "color"}

// creatingCommands make a new entity: they take no --if-version.
var creatingCommands = []string{"task add", "plan new", "project new"}

// TestFlags_EveryCommand walks the whole command tree: every command has
// a decision on the global flags, refuses each it does not honour, and
// every closed-set flag and --if-version refuses a junk value.
func TestFlags_EveryCommand(t *testing.T) {
	t.Parallel()
	root := fullTree()
	seen := map[string]bool{}
	walkCommands(root, func(c *cobra.Command) {
		path := commandPath(c)
		seen[path] = true
		u, ok := globalUses[path]
		if !ok {
			t.Errorf("'flowctl %s' has no line in globalUses: decide which of --project, --actor, --session it honours", path)
		}
		for _, g := range globalFlags {
			if c.LocalNonPersistentFlags().Lookup(g.name) != nil {
				continue // its own flag (log --actor)
			}
			value := "junk"
			if g.name == "no-hooks" {
				value = "true" // a bool flag
			}
			err := parsedRefusal(t, path, "--"+g.name, value)
			switch {
			case u&g.use != 0 && err != nil:
				t.Errorf("flowctl %s --%s: %v, want it honoured", path, g.name, err)
			case u&g.use == 0 && (err == nil || !strings.Contains(err.Error(), "--"+g.name)):
				t.Errorf("flowctl %s --%s: %v, want it refused", path, g.name, err)
			}
		}
		c.LocalFlags().VisitAll(func(fl *pflag.Flag) { checkLocalFlag(t, path, fl) })
		if slices.Contains(creatingCommands, path) && c.Flags().Lookup("if-version") != nil {
			t.Errorf("flowctl %s creates an entity but takes --if-version", path)
		}
	})
	for path := range globalUses {
		if !seen[path] {
			t.Errorf("globalUses has %q, which is no command", path)
		}
	}
}

// fullTree is the command tree with cobra's help and completion commands,
// which cobra adds only when it executes.
func fullTree() *cobra.Command {
	root := (&app{}).rootCommand()
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	return root
}

// parsedRefusal parses flag=value on the command at path of a fresh tree
// and returns what refuseUnused says.
func parsedRefusal(t *testing.T, path, flag, value string) error {
	t.Helper()
	c, _, err := fullTree().Find(strings.Fields(path))
	if err != nil || commandPath(c) != path {
		t.Fatalf("found %q for %q: %v", commandPath(c), path, err)
	}
	if err := c.ParseFlags([]string{flag + "=" + value}); err != nil {
		t.Fatalf("flowctl %s %s=%s: %v", path, flag, value, err)
	}
	return refuseUnused(c)
}

// checkLocalFlag checks one of a command's own flags: a closed-set flag
// refuses junk, and --if-version refuses 0.
func checkLocalFlag(t *testing.T, path string, fl *pflag.Flag) {
	t.Helper()
	switch v := fl.Value.(type) {
	case *enumValue:
		if err := v.Set("junk"); err == nil || !strings.Contains(err.Error(), strings.Join(v.valid, ", ")) {
			t.Errorf("flowctl %s --%s junk: %v, want the valid values listed", path, fl.Name, err)
		}
		return
	case typePattern:
		if err := v.Set("junk"); err == nil {
			t.Errorf("flowctl %s --%s junk: accepted", path, fl.Name)
		}
		return
	case versionValue:
		if err := v.Set("0"); err == nil {
			t.Errorf("flowctl %s --%s 0: accepted", path, fl.Name)
		}
		return
	case *pointValue:
		if err := v.Set("junk"); err == nil {
			t.Errorf("flowctl %s --%s junk: accepted", path, fl.Name)
		}
		return
	}
	if path == "migrate" && fl.Name == "from" {
		return // a store's path or URL, as --to is
	}
	if slices.Contains(closedSetFlags, fl.Name) || fl.Name == "if-version" {
		t.Errorf("flowctl %s --%s is a %s, not a closed-set flag", path, fl.Name, fl.Value.Type())
	}
}

// TestFlags_GlobalRefused: a global flag a command cannot honour exits 2
// and leaves the file as it was, end to end.
func TestFlags_GlobalRefused(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "p")
	f.mustRun("", "task", "add", "first")
	exported := exportTo(t, f, t.TempDir(), "events.jsonl")
	for _, args := range [][]string{
		{"task", "ls", "--actor", "bob"},
		{"task", "show", "T-1", "--session", "s1"},
		{"verify", "--project", "p"},
		{"rebuild", "--actor", "bob"}, // rebuild --project P is its own flag
		{"compact", "--actor", "bob"},
		{"project", "new", "other", "--project", "p"},
		{"project", "switch", "p", "--session", "s1"},
		{"import", exported, "--project", "p"},
		{"import", exported, "--actor", "bob"},
		{"snapshot", "ls", "--all", "--project", "p"},
		{"snapshot", "verify", "--all", "--project", "p"},
	} {
		t.Run(strings.Join(args, "_"), func(t *testing.T) {
			flag := args[len(args)-2]
			wantRefused(t, f, args, flag, "does not apply")
		})
	}
	t.Run("Honoured", func(t *testing.T) {
		f.mustRun("", "status", "--actor", "bob")
		f.mustRun("", "log", "--actor", "tester") // log's own filter
		f.mustRun("", "snapshot", "ls", "--project", "p")
	})
}

// TestFlags_RollbackDryRun: a dry run appends nothing, so the flags that
// guard or label an append are refused instead of ignored (MCP's
// rollback refuses if_version without apply: TestMCP_RollbackDryRun).
func TestFlags_RollbackDryRun(t *testing.T) {
	t.Parallel()
	f := mcpFile(t)
	for _, flag := range []string{"--if-version", "--actor", "--session"} {
		wantRefused(t, f, []string{"rollback", "--to", "1", "--dry-run", flag, "1"}, flag, "--dry-run")
	}
	f.mustRun("", "rollback", "--to", "1", "--dry-run")
}
