package main

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/spf13/cobra"
)

// upgradeResult is what `flowctl upgrade` prints (README, "JSON output
// contract").
type upgradeResult struct {
	Path        string `json:"path"`
	FromFormat  int    `json:"from_format"`
	ToFormat    int    `json:"to_format"`
	Upgraded    bool   `json:"upgraded"`
	HeadSeq     uint64 `json:"head_seq"`
	HeadHash    string `json:"head_hash"`
	BeforeBytes int64  `json:"before_bytes,omitempty"`
	AfterBytes  int64  `json:"after_bytes,omitempty"`
	Backup      string `json:"backup,omitempty"`
}

func (a *app) upgradeCommand() *cobra.Command {
	var backup string
	cmd := &cobra.Command{
		Use:   "upgrade [--backup PATH]",
		Short: "Rewrite a file of an older format in the current one, keeping the old file as a backup",
		Long: "upgrade rewrites a file of an older file format (see 'flowctl version') in the current one:\n" +
			"every event re-encoded with the same hash, the projections and snapshots copied as they are,\n" +
			"into a new file beside the old one. The new file is verified, and must end at the same head\n" +
			"seq and hash, before it is renamed over the old one, which is kept as the backup (--backup,\n" +
			"default FILE.v<old format>.bak). On any failure the old file is left as it was. Writers wait\n" +
			"until it is done. A file already in the current format is left alone (exit 0). Older files\n" +
			"work without it: flowctl reads and writes them in their own format.",
		Example: "  flowctl upgrade\n  flowctl upgrade --backup /backups/flow-before-upgrade.db -o json",
		Args:    cobra.NoArgs,
		RunE: a.action(func(*cobra.Command, []string) (err error) {
			defer a.holdOutput(&err)()
			path, err := a.dbPath()
			if err != nil {
				return err
			}
			if store.DriverName(path) != store.PathDriver {
				return fmt.Errorf("%w: upgrade rewrites a flow file; a database's schema is migrated when flowctl opens it to write (flowctl init)", flow.ErrInvalid)
			}
			rep, err := eventlog.Upgrade(path, eventlog.UpgradeOptions{
				Options: eventlog.Options{
					Timeout:  a.g.lockTimeout,
					Progress: a.progressFunc("upgrading: verifying the new file", "records"),
				},
				Backup:    backup,
				Rewriting: a.progressFunc("upgrading: rewriting", "records"),
			})
			switch {
			case errors.Is(err, store.ErrNotExist):
				return withHint(err, "run 'flowctl init' to create it")
			case errors.Is(err, fs.ErrExist):
				return withHint(fmt.Errorf("%w: %w", flow.ErrInvalid, err), "name another backup with --backup PATH")
			case err != nil:
				return err
			}
			res := upgradeResult{
				Path: rep.Path, FromFormat: rep.From, ToFormat: rep.To, Upgraded: rep.From != rep.To,
				HeadSeq: rep.HeadSeq, HeadHash: hex.EncodeToString(rep.HeadHash[:]),
				BeforeBytes: rep.Before, AfterBytes: rep.After, Backup: rep.Backup,
			}
			return a.printer().one(res, func(w io.Writer) { printUpgrade(w, &res) })
		}),
	}
	cmd.Flags().StringVar(&backup, "backup", "", "where to keep the old file (default: FILE.v<old format>.bak beside it)")
	return cmd
}

func printUpgrade(w io.Writer, r *upgradeResult) {
	if !r.Upgraded {
		fmt.Fprintf(w, "%s is in file format %d, the current one: nothing to upgrade\n", r.Path, r.ToFormat)
		return
	}
	fmt.Fprintf(w, "upgraded %s from file format %d to %d: %s -> %s (%s), head %s@%d verified\n",
		r.Path, r.FromFormat, r.ToFormat, byteSize(r.BeforeBytes), byteSize(r.AfterBytes),
		saved(r.BeforeBytes, r.AfterBytes), r.HeadHash, r.HeadSeq)
	fmt.Fprintf(w, "the old file is kept as %s\n", r.Backup)
}
