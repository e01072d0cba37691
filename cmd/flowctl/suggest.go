package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// suggest gives an unknown command or flag the nearest one as its hint:
// "unknown command "tsak" for "flowctl"" → did you mean 'flowctl task'?
func suggest(root *cobra.Command, args []string, err error) error {
	cmd, _, ferr := root.Find(args)
	if ferr != nil || cmd == nil {
		cmd = root
	}
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "unknown command "); ok {
		word, _ := strconv.Unquote(strings.Fields(rest)[0]) // "tsak" for "flowctl"
		if best := nearest(word, commandNames(cmd)); word != "" && best != "" {
			return withHint(err, fmt.Sprintf("did you mean '%s %s'? (see '%s --help')", cmd.CommandPath(), best, cmd.CommandPath()))
		}
	}
	if name, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
		if best := nearest(name, flagNames(cmd)); best != "" {
			return withHint(err, fmt.Sprintf("did you mean --%s? (see '%s --help')", best, cmd.CommandPath()))
		}
	}
	return err
}

// commandNames are the names and aliases of cmd's subcommands.
func commandNames(cmd *cobra.Command) []string {
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(append(names, c.Name()), c.Aliases...)
		}
	}
	return names
}

// flagNames are the long names of the flags cmd takes.
func flagNames(cmd *cobra.Command) []string {
	var names []string
	visit := func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	return names
}

// nearest returns the candidate closest to word: one it starts, or one
// at most a third of its length (and at least 1, at most 2) edits away;
// "" when none is that close.
func nearest(word string, candidates []string) string {
	best, bestDist := "", max(1, min(2, len(word)/3))+1
	for _, c := range candidates {
		d := editDistance(strings.ToLower(word), strings.ToLower(c))
		if strings.HasPrefix(c, word) && len(word) >= 3 {
			d = 1
		}
		if d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the Damerau-Levenshtein distance (with adjacent
// transpositions, the commonest typo) of a and b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
