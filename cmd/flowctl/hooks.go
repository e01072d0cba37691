package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/spf13/cobra"
)

// hooks is the hooks configuration of this invocation's writes:
// FLOW_HOOKS_DIR, --no-hooks or FLOW_NO_HOOKS=1, FLOW_HOOK_TIMEOUT, and
// inside a hook FLOW_HOOK_DEPTH, FLOW_HOOK and FLOW_HOOK_RUN.
func (a *app) hooks() (*flow.Hooks, error) {
	h := &flow.Hooks{Dir: a.getenv("FLOW_HOOKS_DIR"), Hook: a.getenv("FLOW_HOOK")}
	if h.Dir != "" {
		h.Dir = a.abs(h.Dir)
	}
	switch v := a.getenv("FLOW_NO_HOOKS"); v {
	case "", "0", "false":
		h.Skip = a.g.noHooks
	case "1", "true":
		h.Skip = true
	default:
		return nil, usageError{fmt.Errorf("FLOW_NO_HOOKS=%q is not 1 or 0", v)}
	}
	if v := a.getenv("FLOW_HOOK_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, usageError{fmt.Errorf("FLOW_HOOK_TIMEOUT=%q is not a positive duration such as 1s or 500ms", v)}
		}
		h.Timeout = d
	}
	if v := a.getenv("FLOW_HOOK_DEPTH"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, usageError{fmt.Errorf("FLOW_HOOK_DEPTH=%q is not a number of hooks", v)}
		}
		h.Depth = n
	}
	if v := a.getenv("FLOW_HOOK_RUN"); v != "" && h.Depth > 0 {
		id, err := store.ParseID(v)
		if err != nil {
			return nil, usageError{fmt.Errorf("FLOW_HOOK_RUN=%q is not a hook run's id", v)}
		}
		h.Run = id
	}
	return h, nil
}

// hooksDir is the hooks directory of this invocation: FLOW_HOOKS_DIR, or
// hooks/ beside the file.
func (a *app) hooksDir() (db, dir string, err error) {
	h, err := a.hooks()
	if err != nil {
		return "", "", err
	}
	if h.Dir != "" {
		db, _ := a.dbPath() // only FLOW_DB for the hooks
		return db, h.Dir, nil
	}
	if db, err = a.dbPath(); err != nil {
		return "", "", withHint(err, "the hooks live in hooks/ beside the file, or in FLOW_HOOKS_DIR")
	}
	if dir = flow.HooksDir(db, nil); dir == "" {
		return "", "", withHint(fmt.Errorf("%w: %s is not a file, so it has no hooks directory beside it", flow.ErrInvalid, db),
			"set FLOW_HOOKS_DIR")
	}
	return db, dir, nil
}

func (a *app) hooksCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hooks",
		Short: "List and try the hooks that approve and hear every write",
		Long: "Hooks are executables in .flow/hooks/ (or FLOW_HOOKS_DIR): pre-commit and pre-commit.d/* run\n" +
			"before a command's events commit and can veto it (exit 2, reason on stderr); post-commit and\n" +
			"post-commit.d/* run after it. See the README's \"Hooks\" section.",
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(a.hooksLsCommand(), a.hooksTestCommand())
	return cmd
}

func (a *app) hooksLsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "ls",
		Short: "List the hook files: path, SHA-256, and whether a command would run each",
		Long: "ls lists the hooks in the order they run, with each file's SHA-256 and whether a command would\n" +
			"run it: a hook runs only when it is executable, owned by you or root, and not writable by group\n" +
			"or others (nor is its directory).",
		Example: "  flowctl hooks ls\n  flowctl hooks ls -o json",
		Args:    cobra.NoArgs,
		RunE: a.action(func(*cobra.Command, []string) error {
			_, dir, err := a.hooksDir()
			if err != nil {
				return err
			}
			files, err := flow.ListHooks(dir)
			if err != nil {
				return err
			}
			return printList(a.printer(), files, func(w io.Writer) { writeHooksTable(w, dir, files) })
		}),
	}
}

func writeHooksTable(w io.Writer, dir string, files []flow.HookFile) {
	if len(files) == 0 {
		fmt.Fprintf(w, "no hooks in %s\n", dir)
		return
	}
	rows := make([][]string, len(files))
	for i, f := range files {
		runs := "yes"
		if !f.Runs {
			runs = "no: " + f.Refused
		}
		rows[i] = []string{f.Path, f.SHA256, runs}
	}
	table(w, "PATH\tSHA256\tRUNS", rows)
}

func (a *app) hooksTestCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "test pre-commit|post-commit < events.jsonl",
		Short: "Run the hooks of a point on events from stdin, as a command would, and print their verdicts",
		Long: "test reads one JSON object per line on stdin, either a hook's input line ({\"api\":1,...}) or an\n" +
			"event as 'flowctl log -o jsonl' prints it (given to the hooks with before and after null), and\n" +
			"runs the point's hooks on them as a command would. It changes no file. The exit is 0 when every\n" +
			"hook allows, 8 when one vetoes or fails.",
		Example: "  flowctl log -n 1 -o jsonl | flowctl hooks test pre-commit",
		Args:    cobra.ExactArgs(1),
		RunE: a.action(func(_ *cobra.Command, args []string) error {
			db, dir, err := a.hooksDir()
			if err != nil {
				return err
			}
			h, err := a.hooks()
			if err != nil {
				return err
			}
			input, err := hookInput(a.stdin, args[0])
			if err != nil {
				return err
			}
			verdicts, err := flow.TestHooks(dir, args[0], db, input, h, a.warn)
			if perr := printList(a.printer(), verdicts, func(w io.Writer) { writeVerdicts(w, dir, args[0], verdicts) }); err == nil {
				err = perr
			}
			return err
		}),
	}
}

// hookInput reads the lines of `hooks test`: hook input lines as they
// are, events wrapped into one.
func hookInput(r io.Reader, point string) ([]byte, error) {
	var out []byte
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 4*flow.MaxInput)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if err := flow.CheckJSON(line); err != nil {
			return nil, fmt.Errorf("stdin line %d: %w", n, err)
		}
		var probe struct {
			API   *int    `json:"api"`
			Type  *string `json:"type"`
			Event any     `json:"event"`
		}
		if err := json.Unmarshal(line, &probe); err != nil {
			return nil, fmt.Errorf("%w: stdin line %d is not a JSON object", flow.ErrInvalid, n)
		}
		switch {
		case probe.API != nil && probe.Event != nil:
			out = append(out, line...)
		case probe.Type != nil:
			out = fmt.Appendf(out, `{"api":%d,"hook":%q,"event":%s,"before":null,"after":null}`, flow.HookAPI, point, line)
		default:
			return nil, fmt.Errorf("%w: stdin line %d is neither a hook's input line nor an event", flow.ErrInvalid, n)
		}
		out = append(out, '\n')
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: reading stdin: %w", flow.ErrInvalid, err)
	}
	if len(out) == 0 {
		return nil, usageError{errors.New("no events on stdin: pipe one JSON object per line (e.g. flowctl log -n 1 -o jsonl)")}
	}
	return out, nil
}

func writeVerdicts(w io.Writer, dir, point string, verdicts []flow.HookVerdict) {
	if len(verdicts) == 0 {
		fmt.Fprintf(w, "no %s hooks in %s\n", point, dir)
		return
	}
	rows := make([][]string, len(verdicts))
	for i, v := range verdicts {
		rows[i] = []string{v.Name, v.Verdict, v.Reason}
	}
	table(w, "HOOK\tVERDICT\tREASON", rows)
}
