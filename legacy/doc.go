/*
Package legacy imports the files of the system flowctl replaces (the seed
notes): a project's workflow.json and workflow_history.json, a directory
of task context dumps, and the JSONL execution log (see Formats). Import
reads one file, checks all of it, and writes it through the engine's
import API (flow.Engine.ImportEntries) as the events a command would
append: tasks, notes, context merges and exec records.

# Invariants

An import is one command: all of the file or nothing, with the
engine's own checks on every entry. A malformed entry is an
*ImportError naming the file and line, and leaves the file as it was.
Importing the same file again appends nothing: every imported event's
id is derived from its entry (a UUID of version 8 from SHA-256 of the
format, project and entry), so the engine finds it stored and skips it;
a task is found by its ref (its id in the file). Entry times are kept
as the payload's occurred_at: an event's time is when it was imported
(see flow's doc, "Event times and occurred_at"), except for a history's
entries, which become events of their own kind where one exists
(project, task, step created; task and step status changes) and carry
the entry's user as actor and its ts as time, as far as the log's order
of times allows (flow.Importer.As).

# Progress

An import reports its entries to flow.Options.Progress (drawn as
'importing FORMAT' by flowctl on a terminal) and reports itself done
when its transaction's work is over.
*/
package legacy
