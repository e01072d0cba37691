package legacy

import (
	"errors"
	"fmt"
	"github.com/flowctl/flowctl/flow"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// contextDump is one file of a context directory.
type contextDump struct {
	file  string // as errors name it: the directory's name joined with the file's
	task  string // task_id: a ref or a T-n id
	patch string // context, as compact JSON
	o     *object
}

// importContextDir merges the context of every *.json file of a directory
// (not its subdirectories), in name order, into the task its task_id
// names (a ref, else a T-n id), as ctx merge does (RFC 7396). Each file
// must stay inside the directory: a symbolic link that is absolute, that
// leads out of it (through "..") or nowhere is refused. A merge's event id is derived from the task_id and the
// context, so a second import skips it, and a merge that would change
// nothing appends nothing.
func importContextDir(e *flow.Engine, in Input) (*Result, error) {
	if in.Input != nil {
		return nil, fmt.Errorf("%w: a context directory is read from its path, not from a stream", flow.ErrInvalid)
	}
	dumps, warns, err := readContextDir(in.Path, in.Name)
	if err != nil {
		return nil, err
	}
	res := &Result{Format: FromContextDir, Project: in.Project, Read: len(dumps), Warnings: warns}
	err = runImport(e, FromContextDir, in.Project, res, func(im *flow.Importer, res *Result) error {
		return importContexts(im, dumps, in.Project, res)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// readContextDir reads and parses every *.json file of dir through an
// os.Root, which refuses any path (a symlink, "..") that leads outside it.
func readContextDir(dir, name string) ([]contextDump, []string, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, nil, err
	}
	if !fi.IsDir() {
		return nil, nil, fmt.Errorf("%w: %s is not a directory (a context dump directory holds *.json files)", flow.ErrInvalid, name)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return nil, nil, err
	}
	var dumps []contextDump
	var warns []string
	var bad badEntries
	for _, de := range entries { // sorted by name
		if !strings.HasSuffix(de.Name(), ".json") {
			continue
		}
		file := filepath.Join(name, de.Name())
		data, err := readRooted(root, de.Name(), file)
		if err != nil {
			return nil, nil, err
		}
		d, err := parseContextDump(file, data)
		if err != nil {
			if bad.add(err) {
				continue
			}
			return nil, nil, err
		}
		dumps = append(dumps, d)
		warns = appendWarning(warns, d.o.unused(""))
	}
	if err := bad.err(); err != nil {
		return nil, nil, err
	}
	return dumps, warns, nil
}

// readRooted reads one regular file of root, refusing what is not one
// and a symbolic link whose target is outside root.
func readRooted(root *os.Root, base, file string) ([]byte, error) {
	lfi, err := root.Lstat(base)
	if err != nil {
		return nil, err
	}
	if lfi.Mode()&fs.ModeSymlink != 0 {
		if _, err := root.Stat(base); err != nil {
			return nil, &ImportError{File: file, Err: fmt.Errorf("%w: a symbolic link is imported only if it is relative and leads to a file inside the directory: %v", flow.ErrInvalid, rootCause(err))}
		}
	}
	f, err := root.Open(base)
	if err != nil {
		return nil, &ImportError{File: file, Err: fmt.Errorf("%w: %v", flow.ErrInvalid, rootCause(err))}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &ImportError{File: file, Err: fmt.Errorf("%w: not a regular file", flow.ErrInvalid)}
	}
	data, err := io.ReadAll(io.LimitReader(f, flow.MaxInput+1))
	if err != nil {
		return nil, err
	}
	if len(data) > flow.MaxInput {
		return nil, &ImportError{File: file, Err: fmt.Errorf("%w: the file is over %d bytes", flow.ErrInvalid, flow.MaxInput)}
	}
	return data, nil
}

// rootCause drops the *PathError around an os.Root error: the file is
// named already.
func rootCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func parseContextDump(file string, data []byte) (contextDump, error) {
	data = trimBOM(data)
	if err := checkDocument(file, data); err != nil {
		return contextDump{}, err
	}
	o, err := newObject(file, 0, "", data)
	if err != nil {
		return contextDump{}, err
	}
	d := contextDump{file: file, o: o}
	if d.task, err = o.ident("task_id", true); err != nil {
		return d, err
	}
	if strings.TrimSpace(d.task) == "" {
		return d, o.errorf(flow.ErrInvalid, `"task_id" is empty`)
	}
	ctx, ok := o.get("context")
	if !ok {
		return d, o.errorf(flow.ErrInvalid, `"context" is missing (a dump is {"task_id": ..., "context": {...}})`)
	}
	if jsonKind(ctx) != "an object" {
		return d, o.errorf(flow.ErrInvalid, `"context" is %s, not an object`, jsonKind(ctx))
	}
	d.patch = compactJSON(ctx)
	return d, nil
}

func trimBOM(b []byte) []byte {
	if len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF {
		return b[3:]
	}
	return b
}

func importContexts(im *flow.Importer, dumps []contextDump, project string, res *Result) error {
	if _, err := im.OpenProject(project); err != nil {
		return err
	}
	refs, err := loadRefs(im, project)
	if err != nil {
		return err
	}
	ids := newLegacyIDs(FromContextDir, project)
	for n, d := range dumps {
		im.Progress(n, len(dumps))
		created, err := importContext(im, d, project, refs, ids)
		if err != nil {
			return err
		}
		if created {
			res.Created.Contexts++
		} else {
			res.Skipped++
		}
	}
	return nil
}

// importContext merges one dump; created is false when it was imported
// before or would change nothing.
func importContext(im *flow.Importer, d contextDump, project string, refs *refIndex, ids *legacyIDs) (created bool, err error) {
	task, ok := refs.task(d.task)
	if !ok {
		return false, d.o.errorf(flow.ErrNotFound, "task_id %q names no task of project %s (import its workflow.json first)", d.task, project)
	}
	id := ids.next(task + "\x00" + d.patch)
	if im.Imported(id) {
		return false, nil
	}
	created, err = im.MergeContext(project, task, d.patch, id)
	return created, d.o.wrap(err)
}
