package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowctl/flowctl/eventlog"
)

func TestRun_Version(t *testing.T) {
	t.Parallel()
	for _, flag := range []string{"--version", "-v"} {
		t.Run(flag, func(t *testing.T) {
			t.Parallel()
			stdout, stderr, code := runCLI(t, t.TempDir(), "", flag)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			if want := "flowctl version " + version + " "; !strings.HasPrefix(stdout, want) {
				t.Errorf("stdout = %q, want it to start with %q", stdout, want)
			}
			if strings.Count(stdout, "\n") != 1 {
				t.Errorf("stdout is not one line: %q", stdout)
			}
		})
	}
}

func TestRun_Help(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := runCLI(t, t.TempDir(), "", "--help")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	golden(t, "help.golden", stdout)

	t.Run("NoArgsPrintsHelp", func(t *testing.T) {
		t.Parallel()
		got, stderr, code := runCLI(t, t.TempDir(), "")
		if code != 0 || stderr != "" {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		if got != stdout {
			t.Errorf("flowctl with no arguments printed\n%s\nwant the --help text", got)
		}
	})
}

// TestRun_UsageErrors: anything wrong with the command line exits 2 with
// one line on stderr, before any file is touched.
func TestRun_UsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		args []string
		fact string
	}{
		{"UnknownCommand", nil, []string{"frobnicate"}, `"frobnicate"`},
		{"UnknownFlag", nil, []string{"log", "--frobnicate"}, "--frobnicate"},
		{"UnknownGlobalFlag", nil, []string{"--frobnicate", "log"}, "--frobnicate"},
		{"UnexpectedArgument", nil, []string{"log", "extra"}, "extra"},
		{"ImportWithoutFile", nil, []string{"import"}, "arg"},
		{"BadOutputFormat", nil, []string{"log", "-o", "yaml"}, "yaml"},
		{"BadColor", nil, []string{"log", "--color", "sometimes"}, "sometimes"},
		{"ZeroLockTimeout", nil, []string{"log", "--lock-timeout", "0s"}, "--lock-timeout"},
		{"BadLockTimeout", nil, []string{"log", "--lock-timeout", "soon"}, "soon"},
		{"BadLockTimeoutEnv", map[string]string{"FLOW_LOCK_TIMEOUT": "soon"}, []string{"log"}, "FLOW_LOCK_TIMEOUT"},
		{"NegativeLimit", nil, []string{"log", "--limit", "-1"}, "--limit"},
		{"BadExportSince", nil, []string{"export", "--since", "yesterday"}, "yesterday"},
		{"BadImportFormat", nil, []string{"import", "--from", "csv", "x.csv"}, "csv"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			stdout, stderr, code := runCLIEnv(t, dir, tt.env, "", tt.args...)
			wantError(t, stderr, code, 2, tt.fact)
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			if _, err := os.Stat(filepath.Join(dir, ".flow")); err == nil {
				t.Errorf("a usage error created .flow")
			}
		})
	}

	for _, args := range [][]string{
		{"-o", "json", "frobnicate"},
		{"frobnicate", "--json"},
		{"log", "--frobnicate", "-o", "jsonl"},
		{"--output=json", "log", "--frobnicate"},
		{"-ojson", "log", "--limit", "ten"},
		{"log", "-o", "json", "--lock-timeout", "0s"},
	} {
		t.Run("JSONErrorObject/"+strings.Join(args, "_"), func(t *testing.T) {
			t.Parallel()
			stdout, stderr, code := runCLI(t, t.TempDir(), "", args...)
			wantJSONError(t, stderr, code, 2, "invalid")
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
		})
	}

	t.Run("TextErrorDespiteJSONLater", func(t *testing.T) {
		t.Parallel()
		// The last -o wins, as it does when the flags parse.
		_, stderr, code := runCLI(t, t.TempDir(), "", "-o", "json", "-o", "text", "frobnicate")
		wantError(t, stderr, code, 2, "frobnicate")
		if strings.HasPrefix(stderr, "{") {
			t.Errorf("stderr = %q, want text", stderr)
		}
	})
}

// TestRun_FileLocation covers how commands find the file: --db, then
// FLOW_DB, then a walk up from the working directory.
func TestRun_FileLocation(t *testing.T) {
	t.Parallel()

	t.Run("WalkUpFromSubdirectory", func(t *testing.T) {
		t.Parallel()
		f := mustInit(t, "--project", "walked")
		sub := filepath.Join(f.dir, "a", "b", "c")
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := runCLI(t, sub, "", "log", "-o", "json")
		if code != 0 {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		if evs := decodeEvents(t, stdout); len(evs) != 1 || evs[0].Project != "walked" {
			t.Errorf("log from %s found %+v, want the project.created of the parent's file", sub, evs)
		}
	})

	t.Run("NotFoundWithHint", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		// (import creates the file: TestImport_CreatesTheFile)
		for _, args := range [][]string{{"log"}, {"verify"}, {"export"}} {
			_, stderr, code := runCLI(t, dir, "", args...)
			wantError(t, stderr, code, 3, ".flow/flow.db", "flowctl init")
		}
		if _, err := os.Stat(filepath.Join(dir, ".flow")); err == nil {
			t.Errorf("a read of a missing file created .flow")
		}
	})

	t.Run("NotFoundJSON", func(t *testing.T) {
		t.Parallel()
		_, stderr, code := runCLI(t, t.TempDir(), "", "log", "--json")
		e := wantJSONError(t, stderr, code, 3, "not_found")
		if !strings.Contains(e.Error.Hint, "flowctl init") {
			t.Errorf("hint = %q, want it to suggest flowctl init", e.Error.Hint)
		}
	})

	t.Run("MissingDBFlagFile", func(t *testing.T) {
		t.Parallel()
		_, stderr, code := runCLI(t, t.TempDir(), "", "log", "--db", "nope.db")
		wantError(t, stderr, code, 3, "nope.db")
	})

	t.Run("FlowDBEnv", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		env := map[string]string{"FLOW_DB": "custom/x.db"} // relative: to the working directory
		if _, stderr, code := runCLIEnv(t, dir, env, "", "init", "--project", "viaenv"); code != 0 {
			t.Fatalf("init: exit %d, stderr %q", code, stderr)
		}
		path := filepath.Join(dir, "custom", "x.db")
		f := &flowFile{t: t, dir: dir, path: path}
		t.Cleanup(f.mustVerify)
		if _, err := os.Stat(filepath.Join(dir, ".flow")); err == nil {
			t.Errorf("init with FLOW_DB also created .flow")
		}
		stdout, stderr, code := runCLIEnv(t, dir, env, "", "log", "-o", "json")
		if code != 0 {
			t.Fatalf("log: exit %d, stderr %q", code, stderr)
		}
		if evs := decodeEvents(t, stdout); len(evs) != 1 || evs[0].Project != "viaenv" {
			t.Errorf("log with FLOW_DB = %+v, want the viaenv project", evs)
		}
	})

	t.Run("DBFlagOverridesFlowDB", func(t *testing.T) {
		t.Parallel()
		f := mustInit(t, "--project", "default")
		other := mustInitAt(t, f.dir, filepath.Join(f.dir, "other.db"), "--db", "other.db", "--project", "other")
		env := map[string]string{"FLOW_DB": f.path}
		stdout, stderr, code := runCLIEnv(t, f.dir, env, "", "log", "-o", "json", "--db", other.path)
		if code != 0 {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		if evs := decodeEvents(t, stdout); len(evs) != 1 || evs[0].Project != "other" {
			t.Errorf("log --db other.db with FLOW_DB set = %+v, want the file of --db", evs)
		}
	})

	t.Run("FlowDBOverridesWalk", func(t *testing.T) {
		t.Parallel()
		f := mustInit(t, "--project", "walked")
		other := mustInit(t, "--project", "other")
		stdout, stderr, code := runCLIEnv(t, f.dir, map[string]string{"FLOW_DB": other.path}, "", "log", "-o", "json")
		if code != 0 {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		if evs := decodeEvents(t, stdout); len(evs) != 1 || evs[0].Project != "other" {
			t.Errorf("log with FLOW_DB = %+v, want the file of FLOW_DB, not the one in the working directory", evs)
		}
	})
}

// TestRun_Busy: a command that cannot get the file lock gives up after
// --lock-timeout (or FLOW_LOCK_TIMEOUT) with exit 5 and a retry hint.
func TestRun_Busy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"Write", nil, []string{"init", "--project", "x", "--lock-timeout", "200ms"}},
		{"Read", nil, []string{"log", "--lock-timeout", "200ms"}},
		{"Verify", nil, []string{"verify", "--lock-timeout", "200ms"}},
		{"Import", nil, []string{"import", "-", "--lock-timeout", "200ms"}},
		{"EnvTimeout", map[string]string{"FLOW_LOCK_TIMEOUT": "200ms"}, []string{"init", "--project", "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := mustInit(t)
			before := f.bytes()
			holder, err := eventlog.Open(f.path, eventlog.Options{})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, stderr, code := runCLIEnv(t, f.dir, tt.env, "", tt.args...)
			elapsed := time.Since(start)
			if err := holder.Close(); err != nil {
				t.Fatal(err)
			}
			wantError(t, stderr, code, 5, "locked", "--lock-timeout")
			if elapsed < 150*time.Millisecond || elapsed > 1500*time.Millisecond {
				t.Errorf("gave up after %v, want about 200ms", elapsed)
			}
			if !bytes.Equal(before, f.bytes()) {
				t.Errorf("a busy command changed the file")
			}
		})
	}

	t.Run("JSON", func(t *testing.T) {
		t.Parallel()
		f := mustInit(t)
		holder, err := eventlog.Open(f.path, eventlog.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer holder.Close()
		_, stderr, code := f.run("", "log", "-o", "json", "--lock-timeout", "100ms")
		if e := wantJSONError(t, stderr, code, 5, "busy"); e.Error.Hint == "" {
			t.Errorf("busy error has no hint: %q", stderr)
		}
	})

	t.Run("ReadersShareTheFile", func(t *testing.T) {
		t.Parallel()
		f := mustInit(t, "--project", "shared")
		reader, err := eventlog.Open(f.path, eventlog.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer reader.Close()
		if _, stderr, code := f.run("", "log", "--lock-timeout", "200ms"); code != 0 {
			t.Errorf("log beside another reader: exit %d, stderr %q", code, stderr)
		}
	})
}

// TestRun_UnknownSubcommandOfAGroupIsUsage: a typo under a command group
// exits 2, as at the root, instead of printing the group's help with 0.
func TestRun_UnknownSubcommandOfAGroupIsUsage(t *testing.T) {
	f := mustInit(t, "--project", "p")
	for _, args := range [][]string{{"ctx", "show", "T-1"}, {"task", "nosuch"}, {"snapshot", "bogus"}, {"approval", "x"}} {
		before := f.bytes()
		_, stderr, code := f.run("", args...)
		wantError(t, stderr, code, 2, "unknown command", args[1])
		if string(before) != string(f.bytes()) {
			t.Errorf("%v changed the file", args)
		}
	}
	if _, _, code := f.run("", "task"); code != 0 {
		t.Errorf("a bare command group exits %d, want 0 (its help)", code)
	}
}

func TestRun_VersionCommand(t *testing.T) {
	t.Parallel()
	t.Run("JSON", func(t *testing.T) {
		t.Parallel()
		stdout, stderr, code := runCLI(t, t.TempDir(), "", "version", "-o", "json")
		if code != 0 || stderr != "" {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, stdout)
		}
		for _, k := range []string{"version", "commit", "commit_time", "dirty", "go", "file_format"} {
			if _, ok := got[k]; !ok {
				t.Errorf("no %q in %s", k, stdout)
			}
		}
		if len(got) != 6 {
			t.Errorf("got %d fields, want 6: %s", len(got), stdout)
		}
		if got["version"] != version || got["file_format"] != float64(eventlog.FormatVersion) {
			t.Errorf("version %v, file_format %v; want %s and %d", got["version"], got["file_format"], version, eventlog.FormatVersion)
		}
		if g, _ := got["go"].(string); !strings.HasPrefix(g, "go1.") {
			t.Errorf("go = %q, want the toolchain's version", g)
		}
	})
	t.Run("Text", func(t *testing.T) {
		t.Parallel()
		stdout, _, code := runCLI(t, t.TempDir(), "", "version")
		if code != 0 || !strings.HasPrefix(stdout, "flowctl version "+version+" ") || !strings.Contains(stdout, "\ncommit:") {
			t.Errorf("exit %d, stdout %q", code, stdout)
		}
	})
	t.Run("ArgsRefused", func(t *testing.T) {
		t.Parallel()
		if _, _, code := runCLI(t, t.TempDir(), "", "version", "extra"); code != 2 {
			t.Errorf("exit %d, want 2", code)
		}
	})
}
