package main

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// enumValue is a flag that takes one of a closed set of values. pflag
// calls Set while it parses, so an unknown value is a usage error (exit 2)
// that lists the valid ones, before anything is opened.
type enumValue struct {
	dst   *string
	valid []string
}

var _ pflag.Value = (*enumValue)(nil)

func (e *enumValue) String() string { return *e.dst }
func (e *enumValue) Type() string   { return "string" }

func (e *enumValue) Set(v string) error {
	if err := oneOf(v, e.valid); err != nil {
		return err
	}
	*e.dst = v
	return nil
}

// oneOf refuses v unless it is one of valid, listing them. The MCP tools
// check their closed-set arguments with it too.
func oneOf(v string, valid []string) error {
	if !slices.Contains(valid, v) {
		return fmt.Errorf("use one of: %s", strings.Join(valid, ", "))
	}
	return nil
}

// enumVar defines a closed-set flag on fs: def is its default (it need not
// be valid: "" often means no filter) and valid what it takes.
func enumVar(fs *pflag.FlagSet, dst *string, name, def string, valid []string, usage string) {
	*dst = def
	fs.Var(&enumValue{dst: dst, valid: valid}, name, usage)
}

// enumVarP is enumVar with a one-letter shorthand.
func enumVarP(fs *pflag.FlagSet, dst *string, name, short, def string, valid []string, usage string) {
	*dst = def
	fs.VarP(&enumValue{dst: dst, valid: valid}, name, short, usage)
}

// The closed sets of flowctl's flags.
var (
	outputFormats    = []string{"text", "json", "jsonl"}
	colorModes       = []string{"auto", "always", "never"}
	taskStatuses     = []string{projection.StatusTodo, projection.StatusDoing, projection.StatusDone, projection.StatusBlocked, projection.StatusCancelled}
	approvalStatuses = []string{projection.ApprovalPending, flow.ApprovalStatusExpired, projection.ApprovalGranted, projection.ApprovalDenied}
	noteKinds        = []string{flow.NoteKindNote, flow.NoteKindMemory}
	watchFormats     = []string{"text", "jsonl", "mcp", "mcp-full"}
)

// eventTypes is every event type there is: log and watch --type refuse a
// pattern that matches none of them.
var eventTypes = projection.Types()

// typePattern is a --type value: an event type, or a prefix ending in *
// (task.*) that matches at least one type.
type typePattern struct{ dst *string }

func (p typePattern) String() string { return *p.dst }
func (p typePattern) Type() string   { return "string" }

func (p typePattern) Set(v string) error {
	if err := flow.CheckTypePattern(v); err != nil {
		return err
	}
	*p.dst = v
	return nil
}

// versionValue is --if-version: a stream version, which starts at 1.
// 0 is refused rather than read as "no check": leave the flag out for that.
type versionValue struct{ dst *uint64 }

func (v versionValue) String() string { return strconv.FormatUint(*v.dst, 10) }
func (v versionValue) Type() string   { return "uint64" }

func (v versionValue) Set(s string) error {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return errors.New("a version is a whole number from 1")
	}
	if n == 0 {
		return errors.New("versions start at 1 (leave --if-version out for no check)")
	}
	*v.dst = n
	return nil
}

// ifVersionVar defines --if-version on cmd.
func ifVersionVar(cmd *cobra.Command, dst *uint64, usage string) {
	cmd.Flags().Var(versionValue{dst}, "if-version", usage)
}
