package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/internal/workload"
	"github.com/flowctl/flowctl/internal/workload/flowrun"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// genOptions are the flags of `flowbench gen`.
type genOptions struct {
	events   int
	db       string
	projects int
	seed     uint64
	force    bool
	curve    uint64 // report every curve events on stderr (0: never)
	memprof  string // write an allocation profile here at the end ("": none)
}

func (o *genOptions) addFlags(fs *pflag.FlagSet) {
	fs.IntVar(&o.events, "events", 100_000, "about how many events to write")
	fs.StringVar(&o.db, "db", "", "path of the flowctl file to write (required)")
	fs.IntVar(&o.projects, "projects", 10, "how many projects take turns")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the random choices (same seed, same shape)")
	fs.BoolVar(&o.force, "force", false, "overwrite an existing file")
	fs.Uint64Var(&o.curve, "curve", 0, "print a line on stderr every N events: the rate of the last N, by the clock and by CPU time")
	_ = fs.MarkHidden("curve")
	fs.StringVar(&o.memprof, "memprofile", "", "write an allocation profile (go tool pprof -sample_index=alloc_space) to this file at the end")
	_ = fs.MarkHidden("memprofile")
}

func (o *genOptions) validate() error {
	switch {
	case o.db == "":
		return usageError{errors.New("--db is required")}
	case o.events < 1:
		return usageError{fmt.Errorf("--events %d: want at least 1", o.events)}
	case o.projects < 1 || o.projects > 1000:
		return usageError{fmt.Errorf("--projects %d: want 1 to 1000", o.projects)}
	}
	return nil
}

func genCommand(env env) *cobra.Command {
	var o genOptions
	cmd := &cobra.Command{
		Use:   "gen --db PATH [--events N] [--projects P] [--seed S] [--force]",
		Short: "Write a flowctl file with a realistic history of about N events",
		Long: "gen writes a new flowctl file: projects whose tasks go through plans, dependencies,\n" +
			"steps, context merges, notes, exec records, approvals and checkpoints, 28 events a task,\n" +
			"through the engine's own commands, 1000 of them per transaction, without fsync.",
		Example: "  flowbench gen --events 1000000 --db /tmp/bench/flow.db",
		Args:    cobra.NoArgs,
	}
	o.addFlags(cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := o.validate(); err != nil {
			return err
		}
		if err := prepareTarget(o.db, o.force); err != nil {
			return err
		}
		progress := progressTo(env)
		if o.curve > 0 {
			progress = curveTo(env, o.curve)
		}
		res, err := generate(cmd.Context(), o, progress)
		if err != nil {
			return err
		}
		if err := writeMemProfile(o.memprof); err != nil {
			return err
		}
		fmt.Fprintln(env.stdout, res)
		return nil
	}
	return cmd
}

// writeMemProfile writes the allocations so far to path, when given.
func writeMemProfile(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// prepareTarget refuses to overwrite path unless force, in which case it
// removes it.
func prepareTarget(path string, force bool) error {
	_, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !force:
		return fmt.Errorf("%s exists; pass --force to overwrite it", path)
	}
	return os.Remove(path)
}

// genResult is what gen wrote.
type genResult struct {
	Events  uint64        `json:"events"`
	Elapsed time.Duration `json:"elapsed_ns"`
	Size    int64         `json:"size"` // bytes
}

func (r genResult) String() string {
	s := r.Elapsed.Seconds()
	return fmt.Sprintf("gen: %d events in %.1f s (%.0f events/s), file %.1f MB, %.0f bytes/event",
		r.Events, s, float64(r.Events)/s, float64(r.Size)/1e6, float64(r.Size)/float64(r.Events))
}

// progressFunc hears how many of how many events are written.
type progressFunc func(done, total uint64)

// progressTo reports progress on stderr when it is a terminal, at most
// five times a second; else it reports nothing.
func progressTo(env env) progressFunc {
	if !env.tty {
		return func(uint64, uint64) {}
	}
	start, last := time.Now(), time.Time{}
	return func(done, total uint64) {
		if time.Since(last) < 200*time.Millisecond && done < total {
			return
		}
		last = time.Now()
		fmt.Fprintf(env.stderr, "\rgen: %d / %d events (%.0f%%), %.0f s ", done, total,
			100*float64(done)/float64(total), time.Since(start).Seconds())
		if done >= total {
			fmt.Fprintln(env.stderr)
		}
	}
}

// curveTo reports, on stderr, a line every every events: the events
// written, the seconds since the start by the clock and of CPU time (user
// and system), and the rate of the last every events by each: how the
// write rate goes as the file grows, on a machine whose other load makes
// the clock's rate noisy.
func curveTo(env env, every uint64) progressFunc {
	start, startCPU := time.Now(), cpuTime()
	var next uint64 = every
	lastWall, lastCPU, lastDone := time.Duration(0), time.Duration(0), uint64(0)
	return func(done, total uint64) {
		if done < next && done < total {
			return
		}
		for next <= done {
			next += every
		}
		wall, cpu := time.Since(start), cpuTime()-startCPU
		n := float64(done - lastDone)
		fmt.Fprintf(env.stderr, "curve: %d events, %.1f s, cpu %.1f s, last %d: %.0f events/s, %.0f events/cpu-s\n",
			done, wall.Seconds(), cpu.Seconds(), done-lastDone, n/(wall-lastWall).Seconds(), n/(cpu-lastCPU).Seconds())
		lastWall, lastCPU, lastDone = wall, cpu, done
	}
}

// generate writes the history of o to o.db, which must not exist.
func generate(ctx context.Context, o genOptions, progress progressFunc) (genResult, error) {
	start := time.Now()
	clock := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	e, err := flow.Open(o.db, flow.Options{Create: true, NoSync: true, Actor: "agent", Session: "bench",
		Now: func() time.Time { clock = clock.Add(time.Second); return clock }})
	if err != nil {
		return genResult{}, err
	}
	g := workload.New(workload.Options{Projects: o.projects, Seed: o.seed})
	err = flowrun.Write(ctx, e, g, uint64(o.events), progress)
	if cerr := e.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return genResult{}, err
	}
	return measureFile(o.db, time.Since(start))
}

// measureFile reads the head and size of a written file.
func measureFile(path string, elapsed time.Duration) (genResult, error) {
	head, err := headOf(path)
	if err != nil {
		return genResult{}, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return genResult{}, err
	}
	return genResult{Events: head, Elapsed: elapsed, Size: st.Size()}, nil
}

// headOf returns the seq of the last event of the log at path.
func headOf(path string) (uint64, error) {
	l, err := eventlog.Open(path, eventlog.Options{ReadOnly: true})
	if err != nil {
		return 0, err
	}
	defer l.Close()
	head, _, err := l.Head()
	return head, err
}
