package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"regexp"
	"strings"
	"syscall"

	"github.com/flowctl/flowctl/flow"
)

// exitCodes is the one table from error codes to exit codes (DESIGN.md §8).
var exitCodes = map[flow.Code]int{
	flow.CodeOK:       0,
	flow.CodeInternal: 1,
	flow.CodeInvalid:  2,
	flow.CodeNotFound: 3,
	flow.CodeConflict: 4,
	flow.CodeBusy:     5,
	flow.CodePending:  6,
	flow.CodeCorrupt:  7,
	flow.CodeVetoed:   8,
}

// codeExit is the error code of a command's own exit status outside the
// table (exec run passing on `exit 42`).
const codeExit flow.Code = "exit"

// hints say what to do next, per code, so that every error carries one;
// a command can give a sharper one with withHint, and a usage error gets
// its command's --help (see report).
var hints = map[flow.Code]string{
	flow.CodeInternal: "this is a bug in flowctl: please report it with the command you ran",
	flow.CodeInvalid:  "see 'flowctl help' for the commands and their flags",
	flow.CodeNotFound: "list what exists with 'flowctl task ls', 'flowctl project ls' or 'flowctl log'",
	flow.CodeConflict: "the message says what stands in the way; 'flowctl task show T-n' shows a task's state and version to retry from",
	flow.CodeBusy:     "another process holds the file; retry, or wait longer with --lock-timeout",
	flow.CodePending:  "a person decides with 'flowctl approval grant A-n' or 'deny'; 'flowctl approval wait A-n' waits",
	flow.CodeCorrupt:  "the file failed a check; keep a copy, see 'flowctl verify', and 'flowctl recover --into NEW' copies every record that still verifies into a new file",
	flow.CodeVetoed:   "a hook refused the command: the message names it and says why; 'flowctl hooks ls' lists the hooks, --no-hooks skips them",
	codeExit:          "the exit status is the command's own, passed on; 'flowctl exec ls' lists what was recorded",
}

// rebuildHint is the hint of a damaged projection record: the log is
// whole, and a rebuild makes the record again from it.
const rebuildHint = "run 'flowctl rebuild' to make the projections again from the log"

// sentinelHint is the hint of an error class sharper than its code.
func sentinelHint(err error) string {
	if errors.Is(err, flow.ErrDamagedProjection) {
		return rebuildHint
	}
	return ""
}

// usageError marks bad flags, arguments and unknown commands (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// exitStatus carries the exit code of a command run by another one
// (quickstart's steps, exec run's command), so that flowctl exits with it.
type exitStatus struct {
	err  error
	code int
	// flowctl marks the status of a flowctl command (quickstart's steps),
	// which means what the code table says; a command exec run ran has
	// a status of its own (code "exit").
	flowctl bool
}

func (e exitStatus) Error() string { return e.err.Error() }
func (e exitStatus) Unwrap() error { return e.err }

// hinted attaches a hint for the user to an error.
type hinted struct {
	err  error
	hint string
}

func (e hinted) Error() string { return e.err.Error() }
func (e hinted) Unwrap() error { return e.err }

func withHint(err error, hint string) error {
	if err == nil {
		return nil
	}
	return hinted{err, hint}
}

// pkgPrefix matches the package prefixes of wrapped sentinel errors,
// which say where an error came from, not what a user should read.
var pkgPrefix = regexp.MustCompile(`(^|: )(flow|store|eventlog|snapshot|projection|cache|digest|legacy): `)

// message is err as one line for a user.
func message(err error) string {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	return flagSentence(pkgPrefix.ReplaceAllString(msg, "$1"))
}

// badFlag matches pflag's error for a flag value that does not parse,
// which quotes Go's parser: invalid argument "abc" for "--if-version"
// flag: strconv.ParseUint: parsing "abc": invalid syntax.
var badFlag = regexp.MustCompile(`invalid argument "(.*)" for "(?:-\w, )?(--[\w-]+)" flag: (strconv\.Parse\w+|time: invalid duration|[^:]*)`)

// flagWants says what a flag's value must be, by the parser that refused
// it; flagFloor is the least whole number a flag takes when not 0.
var (
	flagWants = map[string]string{
		"strconv.ParseInt":       "a whole number",
		"strconv.ParseFloat":     "a number",
		"strconv.ParseBool":      "true or false",
		"time: invalid duration": "a duration such as 500ms, 30s or 2m",
	}
	flagFloor = map[string]int{"--if-version": 1}
)

// flagSentence rewrites pflag's error for a value that does not parse as
// a sentence about the flag, without Go's parser in it.
func flagSentence(msg string) string {
	m := badFlag.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	value, flag, parser := m[1], m[2], m[3]
	want, ok := flagWants[parser]
	switch {
	case parser == "strconv.ParseUint":
		want = fmt.Sprintf("a whole number ≥ %d", flagFloor[flag])
	case !ok:
		return msg
	}
	return fmt.Sprintf("%s must be %s, not %q", flag, want, value)
}

func codeOf(err error) flow.Code {
	var u usageError
	if errors.As(err, &u) {
		return flow.CodeInvalid
	}
	var s exitStatus
	if errors.As(err, &s) {
		for code, exit := range exitCodes {
			if exit == s.code && s.flowctl {
				return code
			}
		}
		return codeExit
	}
	return flow.ErrorCode(err)
}

func hintOf(err error, code flow.Code) string {
	var h hinted
	if errors.As(err, &h) {
		return h.hint
	}
	if hint := sentinelHint(err); hint != "" {
		return hint
	}
	if hint := systemHint(err); hint != "" {
		return hint
	}
	var s exitStatus
	if errors.As(err, &s) && !s.flowctl {
		return hints[codeExit]
	}
	return hints[code]
}

// systemHint says what to do about the failures of the system under the
// file that are no fault of flowctl's (exit 1, as DESIGN.md's table has
// no code of their own): a failed write changed nothing, so the hint is
// how to let the next one succeed.
func systemHint(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return "the disk is full: free some space and retry; the failed write was not applied"
	case errors.Is(err, syscall.EROFS):
		return "the file system is read-only: reads work, writes need it mounted read-write"
	case errors.Is(err, fs.ErrPermission):
		return "check the permissions of the file and its directory"
	}
	var ne *net.OpError
	if errors.As(err, &ne) {
		return "the database server could not be reached: check the URL's host and port, that the server runs, and the network; nothing was written"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Sprintf("check the path %s: there is nothing there", pe.Path)
		}
		return fmt.Sprintf("check the path %s", pe.Path)
	}
	return ""
}

// report prints err on w, as text (the message, then the hint on a
// second line) or as the JSON error object, and returns the exit code.
// usage is the --help line of the command that failed, the hint of a
// usage error that carries none of its own.
func report(w io.Writer, err error, asJSON bool, usage string) int {
	code := codeOf(err)
	msg := message(err)
	hint := hintOf(err, code)
	var u usageError
	var h hinted
	if errors.As(err, &u) && !errors.As(err, &h) && usage != "" {
		hint = usage
	}
	if asJSON {
		type body struct {
			Code    flow.Code `json:"code"`
			Message string    `json:"message"`
			Hint    string    `json:"hint,omitempty"`
		}
		b, _ := json.Marshal(map[string]body{"error": {code, msg, hint}})
		fmt.Fprintf(w, "%s\n", b)
	} else if hint != "" {
		fmt.Fprintf(w, "flowctl: %s\nhint: %s\n", msg, hint)
	} else {
		fmt.Fprintf(w, "flowctl: %s\n", msg)
	}
	var s exitStatus
	if errors.As(err, &s) {
		return s.code
	}
	return exitCodes[code]
}
