package main

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestErrors_NoGoInternals: an input or a file that Go's parsers or bbolt
// refuse is reported as a sentence about the input or the file, one line,
// with the right exit code; none of Go's own error texts reach the user.
// (A damaged page: TestRecover.)
func TestErrors_NoGoInternals(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	random := make([]byte, 70000)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	for _, tc := range []struct {
		name    string
		file    []byte // a file to point --db at instead of the flow file
		stdin   string
		args    []string
		code    int
		message string
	}{
		{"FlagUint", nil, "", []string{"task", "edit", "T-1", "--title", "b", "--if-version", "abc"}, 2, `invalid argument "abc" for "--if-version" flag: a version is a whole number from 1`},
		{"FlagUintNegative", nil, "", []string{"task", "edit", "T-1", "--title", "b", "--if-version", "-1"}, 2, `invalid argument "-1" for "--if-version" flag: a version is a whole number from 1`},
		{"FlagDuration", nil, "", []string{"task", "ls", "--lock-timeout", "zz"}, 2, `--lock-timeout must be a duration such as`},
		{"ImportFieldType", nil, `{"id":"0190f0c2-0000-7000-8000-000000000001","stream":"s","version":"x","type":"t","time":"2025-01-01T00:00:00Z"}`,
			[]string{"import", "-"}, 2, `line 1: not an event object: "version" must be a whole number ≥ 0, not string`},
		{"NotFlowctlFile/Random100", random[:100], "", []string{"verify"}, 7, "is not a flowctl file"},
		{"NotFlowctlFile/Random70k", random, "", []string{"task", "add", "x"}, 7, "is not a flowctl file"},
		{"NotFlowctlFile/TooSmall", make([]byte, 5000), "", []string{"log"}, 7, "is not a flowctl file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := mustInit(t, "--project", "p")
			f.mustRun("", "task", "add", "a")
			args := tc.args
			if tc.file != nil {
				path := filepath.Join(t.TempDir(), "other.db")
				if err := os.WriteFile(path, tc.file, 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--db", path)
			}
			_, stderr, code := f.run(tc.stdin, args...)
			wantError(t, stderr, code, tc.code, tc.message)
			wantNoInternals(t, tc.name, stderr)
		})
	}
}
