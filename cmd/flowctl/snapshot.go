package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/snapshot"
	"github.com/spf13/cobra"
)

func (a *app) snapshotCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "List, export, import and verify snapshots of a project's state",
		Long: "A snapshot is a project's whole state at a seq, checksummed, so that reading the past (--at,\n" +
			"diff, rollback) starts from it instead of from the first event. flowctl takes one at every\n" +
			"checkpoint and every 1000 events of a project (further apart as the state grows), whole or as a\n" +
			"delta (the entities changed since the snapshot before it). Snapshots are derived data: a bad one is\n" +
			"reported, skipped, and reads fall back to an older one or to the log, with the same answers.",
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(a.snapshotLsCommand(), a.snapshotExportCommand(), a.snapshotImportCommand(), a.snapshotVerifyCommand())
	return cmd
}

// refuseAllWithProject refuses --project beside --all, which takes every
// project.
func refuseAllWithProject(cmd *cobra.Command, all bool) error {
	if !all {
		return nil
	}
	return refuseGiven(cmd, "--all takes every project", "project")
}

// snapshotScope runs fn with an open read-only engine and the project to
// work on: "" with all.
func (a *app) snapshotScope(all bool, fn func(eng *flow.Engine, project string) error) (err error) {
	if !all {
		return a.withEngine(true, func(s *session) error { return fn(s.eng, s.project) })
	}
	defer a.holdOutput(&err)()
	eng, err := a.open(true)
	if err != nil {
		return err
	}
	defer closeEngine(eng, &err)
	return fn(eng, "")
}

func (a *app) snapshotLsCommand() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "ls [--all]",
		Short: "List the stored snapshots of the project, each checked as a read would check it",
		Long: "ls lists the project's stored snapshots by seq: kind (full, or delta@BASE: what changed since\n" +
			"the snapshot at seq BASE), size, state hash and whether it passes the checks a read makes before\n" +
			"using it (checksums, this flowctl's fold version, the log's hash at its seq, a delta's base).\n" +
			"'snapshot verify' also resolves each delta and replays the log to prove each one's state.",
		Example: "  flowctl snapshot ls\n  flowctl snapshot ls --all -o json",
		Args:    cobra.NoArgs,
	}
	cmd.Flags().BoolVar(&all, "all", false, "every project's snapshots")
	cmd.RunE = a.action(func(c *cobra.Command, _ []string) error {
		if err := refuseAllWithProject(c, all); err != nil {
			return err
		}
		return a.snapshotScope(all, func(eng *flow.Engine, project string) error {
			infos, err := eng.Snapshots(project)
			if err != nil {
				return err
			}
			return printList(a.printer(), infos, func(w io.Writer) { writeSnapshotTable(w, infos) })
		})
	})
	return cmd
}

func writeSnapshotTable(w io.Writer, infos []flow.SnapshotInfo) {
	if len(infos) == 0 {
		fmt.Fprintln(w, "no snapshots")
		return
	}
	rows := make([][]string, len(infos))
	for i, in := range infos {
		rows[i] = []string{in.Project, fmt.Sprint(in.Seq), snapshotKind(in), fmt.Sprint(in.Bytes), snapshotShortHash(in.StateHash), snapshotStatus(in)}
	}
	table(w, "PROJECT\tSEQ\tKIND\tBYTES\tSTATE\tCHECK", rows)
}

// snapshotKind is "full", "delta@BASE" or "-" when the header does not
// read.
func snapshotKind(in flow.SnapshotInfo) string {
	switch in.Kind {
	case "":
		return "-"
	case "delta":
		return fmt.Sprintf("delta@%d", in.Base)
	}
	return in.Kind
}

func snapshotShortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return "-"
	}
	return h
}

func snapshotStatus(in flow.SnapshotInfo) string {
	if in.OK {
		return "ok"
	}
	return "BAD: " + in.Problem
}

func (a *app) snapshotExportCommand() *cobra.Command {
	var at string
	cmd := &cobra.Command{
		Use:   "export FILE [--at SEQ|C-n|TIME]",
		Short: "Write the project's state at a point (default: now) to FILE as a snapshot",
		Long: "export writes the snapshot of the project's state at a point to FILE, atomically: a temporary\n" +
			"file in the same directory, synced, renamed over FILE, and the directory synced, so that FILE is\n" +
			"either the old file or the whole new snapshot. With FILE - it writes the snapshot to stdout.\n" +
			"FILE always holds the whole state (a stored delta is resolved), so it stands alone.\n" +
			"The snapshot carries the log's hash at its seq: 'snapshot import' takes it back only into this\n" +
			"log (or a copy of it), once it has proven the state by a replay.",
		Example: "  flowctl snapshot export before-refactor.snap --at C-2\n  flowctl snapshot export - --at 2026-11-01T12:00:00Z > noon.snap",
		Args:    cobra.ExactArgs(1),
	}
	cmd.Flags().StringVar(&at, "at", "", "the point: a seq (42), a checkpoint (C-1) or an RFC 3339 time (the last event at or before it)")
	cmd.RunE = a.action(func(_ *cobra.Command, args []string) error {
		point, err := a.snapshotPoint(at)
		if err != nil {
			return err
		}
		return a.withEngine(true, func(s *session) error { return a.runSnapshotExport(s, args[0], point) })
	})
	return cmd
}

// snapshotHead is the newest event, as a point: the last event at or
// before a time after all of them.
var snapshotHead = flow.Point{Time: time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)}

// snapshotPoint parses --at; no point (nil) means the head.
func (a *app) snapshotPoint(at string) (*flow.Point, error) {
	if at == "" {
		return nil, nil
	}
	p, err := flow.ParsePoint(at)
	if err != nil {
		return nil, fmt.Errorf("--at: %w", err)
	}
	return &p, nil
}

func (a *app) runSnapshotExport(s *session, file string, point *flow.Point) error {
	p := snapshotHead
	if point != nil {
		p = *point
	}
	export := func(w io.Writer) (flow.SnapshotInfo, error) { return s.eng.ExportSnapshot(w, s.project, p) }
	if file == "-" {
		_, err := export(a.stdout)
		return err
	}
	path := a.abs(file)
	var info flow.SnapshotInfo
	err := writeFileAtomic(path, func(w io.Writer) (err error) {
		info, err = export(w)
		return err
	})
	if err != nil {
		return err
	}
	res := snapshotFileResult{SnapshotInfo: info, File: path}
	return a.printer().one(res, func(w io.Writer) {
		fmt.Fprintf(w, "Exported the snapshot of %s at seq %d (%d bytes, state %s) to %s\n",
			info.Project, info.Seq, info.Bytes, snapshotShortHash(info.StateHash), printable(file))
	})
}

// snapshotFileResult is what export and import print.
type snapshotFileResult struct {
	flow.SnapshotInfo
	File string `json:"file,omitempty"` // the path written or read; empty for stdin and stdout
}

func (a *app) snapshotImportCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "import FILE",
		Short: "Store a snapshot from FILE (or - for stdin), once proven against this log",
		Long: "import checks a snapshot written by 'snapshot export' and stores it for reads to start from.\n" +
			"It must pass its checksums, be of this flowctl's fold version, carry this log's hash at its seq,\n" +
			"and hold exactly the state a replay of the log gives there. Anything else is refused with exit 7\n" +
			"and the file is left as it was. Importing a snapshot that is already stored changes nothing.",
		Example: "  flowctl snapshot import before-refactor.snap\n  flowctl snapshot export - --db a.db | flowctl snapshot import --db a-copy.db -",
		Args:    cobra.ExactArgs(1),
		RunE: a.action(func(_ *cobra.Command, args []string) (err error) {
			b, path, err := a.readSnapshotFile(args[0])
			if err != nil {
				return err
			}
			defer a.holdOutput(&err)()
			eng, err := a.open(false)
			if err != nil {
				return err
			}
			defer closeEngine(eng, &err)
			info, err := eng.ImportSnapshot(b)
			if errors.Is(err, snapshot.ErrCorrupt) {
				return withHint(fmt.Errorf("%s: %w", args[0], err),
					"nothing was imported: only an undamaged snapshot exported from this flow file (or a copy of it) by this flowctl is taken")
			}
			if err != nil {
				return err
			}
			res := snapshotFileResult{SnapshotInfo: info, File: path}
			return a.printer().one(res, func(w io.Writer) {
				fmt.Fprintf(w, "Imported the snapshot of %s at seq %d (%d bytes, state %s)\n",
					info.Project, info.Seq, info.Bytes, snapshotShortHash(info.StateHash))
			})
		}),
	}
}

// readSnapshotFile reads a snapshot from a file or, with -, stdin; it
// returns the absolute path read ("" for stdin).
func (a *app) readSnapshotFile(file string) ([]byte, string, error) {
	if file == "-" {
		b, err := io.ReadAll(io.LimitReader(a.stdin, flow.MaxSnapshotBytes+1))
		return b, "", err
	}
	path := a.abs(file)
	f, err := os.Open(path)
	if err != nil {
		return nil, "", withHint(err, "give the path of a file written by 'flowctl snapshot export', or - for stdin")
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, "", err
	} else if fi.IsDir() {
		return nil, "", fmt.Errorf("%w: %s is a directory, not a snapshot", flow.ErrInvalid, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, flow.MaxSnapshotBytes+1))
	return b, path, err
}

func (a *app) snapshotVerifyCommand() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "verify [--all]",
		Short: "Prove every stored snapshot of the project by replaying the log to its seq",
		Long: "verify checks each stored snapshot as a read would, then replays the log to its seq and compares\n" +
			"the state hashes. It lists every snapshot; if any is bad it exits 7 naming the first. A bad\n" +
			"snapshot costs no data (reads skip it): 'snapshot export FILE --at SEQ' and 'snapshot import FILE'\n" +
			"put a good one back.",
		Example: "  flowctl snapshot verify\n  flowctl snapshot verify --all -o json",
		Args:    cobra.NoArgs,
	}
	cmd.Flags().BoolVar(&all, "all", false, "every project's snapshots")
	cmd.RunE = a.action(func(c *cobra.Command, _ []string) error {
		if err := refuseAllWithProject(c, all); err != nil {
			return err
		}
		return a.snapshotScope(all, func(eng *flow.Engine, project string) error {
			infos, verr := eng.VerifySnapshots(project)
			if verr != nil && !errors.Is(verr, snapshot.ErrCorrupt) {
				return verr
			}
			if err := printList(a.printer(), infos, func(w io.Writer) { writeSnapshotVerify(w, infos, verr == nil) }); err != nil {
				return err
			}
			return verr
		})
	})
	return cmd
}

func writeSnapshotVerify(w io.Writer, infos []flow.SnapshotInfo, ok bool) {
	for _, in := range infos {
		mark, about := "ok ", fmt.Sprintf("%s, %d bytes, state %s", snapshotKind(in), in.Bytes, snapshotShortHash(in.StateHash))
		if !in.OK {
			mark, about = "BAD", in.Problem
		}
		fmt.Fprintf(w, "%s  %s@%d  %s\n", mark, printable(in.Project), in.Seq, printable(about))
	}
	if ok {
		fmt.Fprintf(w, "ok: %s verified against the log\n", plural(uint64(len(infos)), "snapshot"))
	}
}
