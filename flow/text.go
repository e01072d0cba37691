package flow

import "github.com/flowctl/flowctl/flow/internal/check"

// Limits on text fields, in bytes.
const (
	MaxTitle = 1024
	MaxText  = 64 << 10 // descriptions, notes, messages
)

// clean makes a task read from a legacy file pass the text checks: the
// control characters of its one-line fields become spaces, and those of
// its description that multi-line text refuses.
func (in *NewTask) clean() {
	in.Title, in.Owner, in.Description = check.CleanLine(in.Title), check.CleanLine(in.Owner), check.CleanText(in.Description)
	check.CleanLines(in.Tags)
}

// clean is NewTask.clean for an exec record read from a legacy log.
func (in *NewExec) clean() {
	in.Command, in.Code = check.CleanText(in.Command), check.CleanText(in.Code)
	in.Cwd, in.GitHead = check.CleanLine(in.Cwd), check.CleanLine(in.GitHead)
	check.CleanLines(in.AddedVars)
	check.CleanLines(in.AddedImports)
}
