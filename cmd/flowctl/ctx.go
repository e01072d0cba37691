package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
	"github.com/spf13/cobra"
)

func (a *app) ctxCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ctx",
		Short: "Read and change a task's context (a JSON object), and its history",
		Long: "Every task has a context: one JSON object for what the work needs to remember (files, branch,\n" +
			"decisions). merge applies an RFC 7396 merge patch (objects merge, null deletes a key, arrays\n" +
			"replace); replace swaps the whole object; set and unset change one top-level key. Each change\n" +
			"is an event, and 'ctx history' lists them per key. The task defaults to FLOW_TASK_ID.",
	}
	cmd.AddCommand(a.ctxGetCommand(), a.ctxPatchCommand(false), a.ctxPatchCommand(true),
		a.ctxSetCommand(), a.ctxUnsetCommand(), a.ctxHistoryCommand())
	return cmd
}

func (a *app) ctxGetCommand() *cobra.Command {
	var key string
	cmd := &cobra.Command{
		Use:   "get [T] [--key K]",
		Short: "Print a task's context object, or one key's value",
		Long: "get prints the context object itself, as JSON (indented in text mode, compact with -o json).\n" +
			"With --key it prints that key's value: as JSON, except that in text mode a string is printed\n" +
			"as its text (like jq -r). A key that is not there exits 3.",
		Example: "  flowctl ctx get T-3\n  flowctl ctx get T-3 --key branch",
		Args:    cobra.MaximumNArgs(1),
	}
	cmd.Flags().StringVar(&key, "key", "", "print only this top-level key's value")
	var at atFlag
	at.add(cmd)
	cmd.RunE = a.action(func(c *cobra.Command, args []string) error {
		id, err := a.taskArg(args, 0)
		if err != nil {
			return err
		}
		return a.withEngine(true, func(s *session) error {
			if err := at.view(s); err != nil {
				return err
			}
			if !c.Flags().Changed("key") {
				tc, err := s.eng.Context(s.project, id)
				if err != nil {
					return err
				}
				return a.printContext(tc.Context)
			}
			v, err := s.eng.ContextValue(s.project, id, key)
			if err != nil {
				return err
			}
			return a.printContextValue(v)
		})
	})
	return cmd
}

// printContext prints a context object: indented for people, compact
// as the JSON document.
func (a *app) printContext(doc projection.JSON) error {
	return a.printer().one(doc, func(w io.Writer) { ctxIndent(w, doc) })
}

// printContextValue prints one value; in text mode a string is its text.
func (a *app) printContextValue(v projection.JSON) error {
	return a.printer().one(v, func(w io.Writer) {
		var s string
		if json.Unmarshal([]byte(v), &s) == nil {
			fmt.Fprintln(w, printable(s))
			return
		}
		ctxIndent(w, v)
	})
}

func ctxIndent(w io.Writer, v projection.JSON) {
	var buf bytes.Buffer
	if err := json.Indent(&buf, []byte(v), "", "  "); err != nil {
		buf.Reset()
		buf.WriteString(string(v))
	}
	fmt.Fprintln(w, buf.String())
}

// ctxPatchCommand is merge, or replace.
func (a *app) ctxPatchCommand(replace bool) *cobra.Command {
	var wo writeOpts
	cmd := &cobra.Command{
		Use:   "merge [T] PATCH",
		Short: "Apply an RFC 7396 merge patch to a task's context and print the result",
		Long: "merge applies PATCH, a JSON object, to the task's context: objects merge recursively, null\n" +
			"deletes a key, anything else (arrays too) replaces. PATCH is JSON as an argument, @FILE, or -\n" +
			"for stdin. It prints the merged context. A patch that changes nothing appends nothing.",
		Example: "  flowctl ctx merge T-3 '{\"branch\":\"fix-parser\",\"files\":[\"parse.go\"]}'\n" +
			"  flowctl ctx merge T-3 '{\"draft\":null}'\n  flowctl ctx merge @patch.json",
		Args: cobra.RangeArgs(1, 2),
	}
	if replace {
		cmd.Use, cmd.Short = "replace [T] OBJECT", "Replace a task's whole context with OBJECT and print it"
		cmd.Long = "replace swaps the task's context for OBJECT, a JSON object given as an argument, @FILE or -."
		cmd.Example = "  flowctl ctx replace T-3 '{\"branch\":\"main\"}'\n  flowctl ctx replace T-3 @context.json"
	}
	wo.addFlags(cmd)
	cmd.RunE = a.action(func(_ *cobra.Command, args []string) error {
		id, err := a.taskArg(args[:len(args)-1], 0)
		if err != nil {
			return err
		}
		patch, err := a.readInput(args[len(args)-1])
		if err != nil {
			return err
		}
		return a.withEngine(false, func(s *session) error {
			tc, err := s.eng.MergeContext(flow.ContextPatch{Project: s.project, ID: id, Patch: string(patch), Replace: replace, Write: wo.write()})
			if err != nil {
				return err
			}
			return a.printContext(tc.Context)
		})
	})
	return cmd
}

func (a *app) ctxSetCommand() *cobra.Command {
	var wo writeOpts
	cmd := &cobra.Command{
		Use:   "set [T] KEY VALUE",
		Short: "Set one top-level key of a task's context and print the context",
		Long: "set is the merge patch {KEY: VALUE}. VALUE is JSON when it parses as JSON (42, true, [1,2],\n" +
			"{\"a\":1}, \"quoted\"); otherwise it is taken as a string, so 'set branch main' stores \"main\".\n" +
			"To store the string \"42\", quote it: '\"42\"'. A VALUE starting with {, [ or \" must be valid JSON.\n" +
			"An object VALUE merges into an object already at KEY; null deletes KEY, as in a merge patch.\n" +
			"A VALUE that starts with - needs -- before it: 'ctx set T-3 delta -- -5'.",
		Example: "  flowctl ctx set T-3 branch fix-parser\n  flowctl ctx set T-3 attempts 2\n  flowctl ctx set files '[\"a.go\",\"b.go\"]'",
		Args:    cobra.RangeArgs(2, 3),
	}
	wo.addFlags(cmd)
	cmd.RunE = a.action(func(_ *cobra.Command, args []string) error {
		id, err := a.taskArg(args[:len(args)-2], 0)
		if err != nil {
			return err
		}
		key := args[len(args)-2]
		value, err := ctxValueArg(args[len(args)-1])
		if err != nil {
			return err
		}
		return a.withEngine(false, func(s *session) error {
			tc, err := s.eng.SetContextKey(flow.ContextKey{Project: s.project, ID: id, Key: key, Value: value, Write: wo.write()})
			if err != nil {
				return err
			}
			return a.printContext(tc.Context)
		})
	})
	return cmd
}

// ctxValueArg reads set's VALUE: JSON if it parses, else a string. A
// VALUE that starts like an object, an array or a string must parse, and
// a number must be within the range of a double (1e999 is refused, not
// taken as a string).
func ctxValueArg(arg string) (string, error) {
	if len(arg) > flow.MaxInput {
		return "", fmt.Errorf("%w: VALUE is over %d bytes", flow.ErrInvalid, flow.MaxInput)
	}
	if !utf8.ValidString(arg) {
		return "", fmt.Errorf("%w: VALUE is not valid UTF-8", flow.ErrInvalid)
	}
	err := flow.CheckJSON([]byte(arg))
	if err == nil {
		return arg, nil
	}
	if t := strings.TrimSpace(arg); t != "" && strings.ContainsRune("{[\"", rune(t[0])) || overflows(t) {
		return "", fmt.Errorf("%w: VALUE is not valid JSON: %v", flow.ErrInvalid, err)
	}
	b, err := marshalJSON(arg)
	return string(b), err
}

// overflows reports whether s is a number beyond the range of a double.
func overflows(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return errors.Is(err, strconv.ErrRange) && json.Valid([]byte(s))
}

func (a *app) ctxUnsetCommand() *cobra.Command {
	var wo writeOpts
	cmd := &cobra.Command{
		Use:     "unset [T] KEY",
		Short:   "Delete one top-level key of a task's context and print the context",
		Long:    "unset is the merge patch {KEY: null}. Unsetting a key that is not there appends nothing.",
		Example: "  flowctl ctx unset T-3 draft",
		Args:    cobra.RangeArgs(1, 2),
	}
	wo.addFlags(cmd)
	cmd.RunE = a.action(func(_ *cobra.Command, args []string) error {
		id, err := a.taskArg(args[:len(args)-1], 0)
		if err != nil {
			return err
		}
		return a.withEngine(false, func(s *session) error {
			tc, err := s.eng.UnsetContextKey(flow.ContextKey{Project: s.project, ID: id, Key: args[len(args)-1], Write: wo.write()})
			if err != nil {
				return err
			}
			return a.printContext(tc.Context)
		})
	})
	return cmd
}

func (a *app) ctxHistoryCommand() *cobra.Command {
	var key string
	cmd := &cobra.Command{
		Use:   "history [T] [--key K]",
		Short: "List every change to each top-level key of a task's context",
		Long: "history lists, oldest first, each change to a top-level key: seq, time, actor, op and the key's\n" +
			"new value (null when removed). op is set (a merge or set), unset (a merge, unset or replace\n" +
			"removed the key) or replace (a replace gave the key a new value).",
		Example: "  flowctl ctx history T-3\n  flowctl ctx history T-3 --key branch -o json",
		Args:    cobra.MaximumNArgs(1),
	}
	cmd.Flags().StringVar(&key, "key", "", "only this key's changes")
	cmd.RunE = a.action(func(_ *cobra.Command, args []string) error {
		id, err := a.taskArg(args, 0)
		if err != nil {
			return err
		}
		return a.withEngine(true, func(s *session) error {
			h, err := s.eng.ContextHistory(s.project, id, key)
			if err != nil {
				return err
			}
			return printList(a.printer(), h, func(w io.Writer) { writeCtxHistory(w, h) })
		})
	})
	return cmd
}

func writeCtxHistory(w io.Writer, h []flow.ContextEntry) {
	rows := make([][]string, len(h))
	for i, e := range h {
		rows[i] = []string{fmt.Sprint(e.Seq), fmtTime(projection.TimeOf(e.Time)), e.Actor, e.Key, e.Op, ctxShort(e.Value)}
	}
	table(w, "SEQ\tTIME\tACTOR\tKEY\tOP\tVALUE", rows)
}

// ctxShort cuts a long value for a table cell.
func ctxShort(v projection.JSON) string {
	const limit = 60
	s := string(v)
	if s == "" {
		s = "null"
	}
	if len(s) > limit {
		return strings.ToValidUTF8(s[:limit], "") + "..."
	}
	return s
}
