package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/spf13/cobra"
)

// versionInfo is what `flowctl version` reports. The VCS fields come from
// the build info the go command stamps into binaries built from a clone
// (go build, go install ./cmd/flowctl); they are empty when it did not
// (-buildvcs=false, go run of a single file, a source tree without .git).
type versionInfo struct {
	Version    string `json:"version"`
	Commit     string `json:"commit"`
	CommitTime string `json:"commit_time"`
	Dirty      bool   `json:"dirty"`
	Go         string `json:"go"`
	FileFormat int    `json:"file_format"`
}

// buildVersion reads the running binary's build info.
func buildVersion() versionInfo {
	v := versionInfo{Version: version, Go: runtime.Version(), FileFormat: int(eventlog.FormatVersion)}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if m := bi.Main.Version; version == defaultVersion && m != "" && m != "(devel)" {
		v.Version = m // go install …@v1.2.3 stamps the module's version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.time":
			v.CommitTime = s.Value
		case "vcs.modified":
			v.Dirty = s.Value == "true"
		}
	}
	return v
}

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, the commit it was built from, and the file format",
		Long: `Print flowctl's version, the VCS commit and commit time it was built from
(and whether the work tree had uncommitted changes), the Go version, and
the file format it writes. --version prints the first line only.`,
		Example: `  flowctl version
  flowctl version -o json`,
		Args: cobra.NoArgs,
		RunE: a.action(func(*cobra.Command, []string) error {
			v := buildVersion()
			return a.printer().one(v, func(w io.Writer) { v.writeText(w) })
		}),
	}
}

func (v versionInfo) writeText(w io.Writer) {
	fmt.Fprintf(w, "flowctl version %s (file format %d)\n", v.Version, v.FileFormat)
	commit := v.Commit
	if commit == "" {
		commit = "unknown (built without VCS information)"
	} else if v.Dirty {
		commit += " (dirty)"
	}
	fmt.Fprintf(w, "commit:      %s\n", commit)
	if v.CommitTime != "" {
		fmt.Fprintf(w, "commit time: %s\n", v.CommitTime)
	}
	fmt.Fprintf(w, "go:          %s\n", strings.TrimSpace(v.Go))
}
