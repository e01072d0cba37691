/*
Package hooks finds and runs the executables that approve a flowctl
command before it commits (pre-commit) and hear about it after
(post-commit), below package flow, which decides when they run.

# Files

A hooks directory holds, per point, an executable named after it
(pre-commit, post-commit) and a directory of them (pre-commit.d/*,
post-commit.d/*): the plain one runs first, then the directory's in name
order. Names starting with a dot are ignored (editors' and git's files).

A file runs only when it is trusted: a regular file (or a link to one),
executable, owned by the user running flowctl or by root, and writable by
neither its group nor others, in a directory that is not writable by
group or others either. Any other file is refused (Hook.Refused says why)
and the caller warns about it by name.

# Running

Run gives a hook its input on stdin, the environment the caller built,
stdout discarded and stderr kept (its first line is the reason of a veto).
A hook runs in a process group of its own; when it outlives the timeout,
the whole group is killed. Exit 0 allows, exit 2 vetoes, anything else
(another status, a signal, the timeout, a hook that cannot start) refuses
too: a *Refusal names the hook and says which.

Hooks run only on Unix (build tag unix); elsewhere every file is refused
as unsupported.
*/
package hooks
