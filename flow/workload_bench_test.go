package flow_test

import (
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/internal/workload"
	"github.com/flowctl/flowctl/internal/workload/flowrun"
)

// workloadBatch is how many ops one transaction of WriteWorkload holds:
// small enough, across the projects, that a project crosses at most one
// multiple of DefaultSnapshotEvery in one transaction.
const workloadBatch = 256

func init() {
	flow.WriteWorkload = func(e *flow.Engine, n uint64, projects, checkpoint int) error {
		if checkpoint == 0 {
			checkpoint = -1 // none
		}
		g := workload.New(workload.Options{Projects: projects, Seed: 1, CheckpointEvery: checkpoint})
		ops := make([]workload.Op, 0, workloadBatch)
		for g.Ops() < n {
			ops = g.Fill(ops[:0], int(min(workloadBatch, n-g.Ops())))
			if err := flowrun.Batch(e, ops); err != nil {
				return err
			}
		}
		return nil
	}
}
