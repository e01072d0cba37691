package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// uses is the set of the global flags that not every command can honour
// which a command honours. Every command honours --db, --lock-timeout,
// --color, -q and -o/--json (errors too are printed in the -o format); a
// command refuses --project, --actor or --session it does not use, with
// exit 2, rather than ignore it. The environment (FLOW_PROJECT, FLOW_ACTOR,
// FLOW_SESSION) is ambient and is never refused.
type uses uint8

const (
	usesProject uses = 1 << iota // works on one project (or filters by it)
	usesActor                    // records the actor, or answers for them
	usesSession                  // records the session
	usesHooks                    // runs the hooks around its writes (--no-hooks)

	reads  = usesProject                                       // a read of the current project
	writes = usesProject | usesActor | usesSession | usesHooks // a change: the actor and session are recorded
	asking = usesProject | usesActor                           // a read that answers for the actor
	named  = usesActor | usesSession | usesHooks               // a change of the project NAME names
	whole  = uses(0)                                           // works on the whole file
)

// globalUses is every command's decision, by its path below flowctl. A
// command missing here takes every global flag: TestFlags_EveryCommand
// fails until it has its line. Some decisions depend on a command's own
// flags and are checked where it runs: import (events) refuses --project,
// --actor and --session; snapshot ls/verify --all refuses --project;
// rollback --dry-run refuses --actor, --session and --if-version.
var globalUses = map[string]uses{
	"init": writes, "quickstart": writes,
	"log": reads, "watch": reads, "verify": whole, "rebuild": whole, "compact": whole, "upgrade": whole, "version": whole, "recover": whole,
	"export": reads, "import": writes, "migrate": whole,
	"project new": named, "project archive": named, "project switch": whole,
	"project ls": reads, "project show": reads, "project set": writes, "project fork": writes, "undo": writes,
	"plan new": writes, "plan close": writes, "plan ls": reads, "plan show": reads,
	"task add": writes, "task edit": writes, "task start": writes, "task done": writes,
	"task block": writes, "task cancel": writes, "task reopen": writes,
	"task claim": writes, "task heartbeat": writes, "task release": writes,
	"task ls": reads, "task show": reads,
	"dep add": writes, "dep rm": writes, "dep ls": reads, "dep tree": reads, "ready": asking,
	"ctx merge": writes, "ctx replace": writes, "ctx set": writes, "ctx unset": writes,
	"ctx get": reads, "ctx history": reads,
	"step add": writes, "step start": writes, "step progress": writes, "step done": writes,
	"step fail": writes, "step skip": writes, "step ls": reads, "step retry": writes, "step show": reads,
	"note add": writes, "note ls": reads,
	"approval request": writes, "approval grant": writes, "approval deny": writes,
	"approval ls": reads, "approval show": reads, "approval wait": reads, "approval check": reads,
	"exec run": writes, "exec record": writes, "exec ls": reads, "exec show": reads,
	"status": asking, "report": asking, "stats": reads, "prime": writes, "diff": reads, "graph": reads,
	"search": reads, "session ls": whole,
	"checkpoint": writes, "checkpoint ls": reads, "rollback": writes,
	"snapshot ls": reads, "snapshot verify": reads, "snapshot export": reads, "snapshot import": whole,
	"mcp": writes, "serve": writes,
	"hooks ls": whole, "hooks test": whole,
	// cobra's own commands
	"help": whole, "completion bash": whole, "completion zsh": whole, "completion fish": whole, "completion powershell": whole,
}

// globalFlags are the refusable global flags: each flag's use, and why a
// command without it cannot honour it.
var globalFlags = []struct {
	name string
	use  uses
	why  string
}{
	{"project", usesProject, "it does not work on the current project"},
	{"actor", usesActor, "it records no event and answers for no one"},
	{"session", usesSession, "it records no event"},
	{"no-hooks", usesHooks, "it records no event, so no hook runs"},
}

// refuseGiven refuses any of flags given to cmd, for a reason: the checks
// that depend on a command's own flags (import --from events).
func refuseGiven(cmd *cobra.Command, why string, flags ...string) error {
	for _, name := range flags {
		if cmd.Flags().Changed(name) {
			return usageError{fmt.Errorf("--%s does not apply to 'flowctl %s' here: %s", name, commandPath(cmd), why)}
		}
	}
	return nil
}

// usesOf is the decision of the command that args run (quickstart's
// steps): every flag for one that has none.
func usesOf(args []string) uses {
	for n := min(2, len(args)); n > 0; n-- {
		if u, ok := globalUses[strings.Join(args[:n], " ")]; ok {
			return u
		}
	}
	return usesProject | usesActor | usesSession
}

// honours reports whether u honours the global flag name.
func (u uses) honours(name string) bool {
	for _, g := range globalFlags {
		if g.name == name {
			return u&g.use != 0
		}
	}
	return true
}

// commandPath is cmd's path below the root: "task ls".
func commandPath(cmd *cobra.Command) string {
	return strings.TrimPrefix(strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()), " ")
}

// refuseUnused refuses a global flag given to a command that cannot honour
// it. A command's own flag of the same name (log --actor) is its own.
func refuseUnused(cmd *cobra.Command) error {
	u, ok := globalUses[commandPath(cmd)]
	if !ok {
		return nil // a command group's help, or cobra's __complete (shells pass every flag)
	}
	own := cmd.LocalNonPersistentFlags()
	for _, g := range globalFlags {
		if u&g.use == 0 && cmd.Flags().Changed(g.name) && own.Lookup(g.name) == nil {
			return usageError{fmt.Errorf("--%s does not apply to 'flowctl %s': %s", g.name, commandPath(cmd), g.why)}
		}
	}
	return nil
}
