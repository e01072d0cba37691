/*
Package digest turns a project's state and history into documents for
people and assistants: Prime, the digest an assistant reads at the start
of a session, and ReportTask and ReportProject, the final reports. Each
is markdown plus the structured parts it was made from (its -o json).
It also holds the smaller digests the CLI prints: Stats (success and
elapsed time of the exec records, per command, task and tool), Diff (what
changed between two points, entity by entity) and Describe (one line of
text per event, for flowctl watch; Subject and Summary are its parts).
Graph is the task dependency graph, laid out in layers (ReadGraph,
NewGraph), rendered as text, Mermaid, DOT and SVG (its JSON is the graph
itself); the project report embeds its Mermaid form.

# Graph layout

A graph is laid out by the Sugiyama method (graph_layout.go): the back
edges of a depth-first search are marked broken (a dependency cycle, which
only a damaged file holds) and left out; layers are the longest path
from a task that depends on nothing; an edge that spans layers gets a bend
in each; barycenter sweeps order each layer, keeping the order with the
fewest crossings; x is pulled towards each vertex's neighbours without
overlap. The sweeps and pulls visit a bounded number of vertices in all
(layoutBudget), so a large graph gets fewer of them and stays fast. The
layout depends only on the tasks, never on map order: the same tasks give
the same bytes in every format.

# Reads

A digest reads only through the engine's exported read API: one
flow.Engine.Read for the projections, so that what it shows is the state
at one head; then the events up to that head (flow.Engine.ProjectEvents,
Events), which the projections already include. On a view At a point it
shows that point. Diff reads both of its points in one
flow.Engine.Scopes. It writes nothing.

# Determinism

A document depends only on the file, the input and the engine's clock
(flow.Options.Now: which claims are live, which approvals expired): asked
twice, it is the same byte for byte. Lists in the JSON are never null.
Text that comes from events is made safe before it is shown: control
characters escaped, table cells and code fences that no text can close.

# Budget

Prime fits a budget of tokens, counted as PrimeCharsPerToken bytes each.
When everything does not fit, whole items are dropped, least important
first, and the last line names what was left out (see Prime).
*/
package digest
