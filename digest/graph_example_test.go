package digest_test

import (
	"fmt"

	"github.com/flowctl/flowctl/digest"
	"github.com/flowctl/flowctl/projection"
)

func ExampleNewGraph() {
	g := digest.NewGraph("website", []*projection.Task{
		{ID: "T-1", Title: "write the parser", Status: "done"},
		{ID: "T-2", Title: "test the parser", Status: "doing", Deps: []string{"T-1"}},
		{ID: "T-3", Title: "release", Status: "todo", Deps: []string{"T-1", "T-2"}},
	})
	fmt.Print(g.Text())
	fmt.Print(g.Mermaid()[:len("flowchart TD\n  T1[\"T-1: write the parser\"]\n")])
	// Output:
	// Dependency graph of project website: 3 tasks in 3 layers, at seq 0
	//
	// layer 0 (depends on nothing)
	//   T-1 [done] write the parser
	//
	// layer 1
	//   T-2 [doing] test the parser  ← T-1
	//
	// layer 2
	//   T-3 [todo] release  ← T-1, T-2
	// flowchart TD
	//   T1["T-1: write the parser"]
}
