package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestREADME_Examples runs the README's examples as written (their exit
// codes, not their output, which holds times and hashes): every `flowctl …` line of a sh block and every
// `$ flowctl …` line of a text transcript, in the README's order, in a
// fresh directory per ## section, as a reader following the manual would
// (the quickstart's exports last to its end). A command
// must exit 0 unless its line says it fails (a comment naming an exit or
// a refusal, or a transcript that shows the error; `exec run` passes its
// command's exit on). What the test does
// beyond the shell: `export X=Y` sets the environment; `> FILE` writes
// stdout to FILE; `A | flowctl B -` pipes; `| jq …` and `> /dev/null`
// drop the output; commands that follow (watch, log -f) run for 300 ms;
// waits (`--timeout 10m`) are cut to 10 ms; files the examples read but
// never write (deploy.json, a.db, the legacy system's files) are made
// first.
func TestREADME_Examples(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	examples := readmeExamples(string(readme))
	if len(examples) < 100 {
		t.Fatalf("found %d examples in README.md; the extraction is broken", len(examples))
	}
	var dir string
	var env map[string]string
	section := -1
	for _, ex := range examples {
		if ex.section != section { // each ## section starts from nothing
			section, dir, env = ex.section, t.TempDir(), map[string]string{"FLOW_ACTOR": "you"}
			readmeFixtures(t, dir)
		}
		if v, ok := strings.CutPrefix(ex.line, "export "); ok {
			name, val, _ := strings.Cut(v, "=")
			env[name] = val
			continue
		}
		code, stderr := runExample(t, dir, env, ex.line)
		ranCommand := strings.Contains(ex.line, "exec run") && strings.Contains(stderr, "(recorded X-")
		switch {
		case code != 0 && !ex.mayFail && !ranCommand:
			t.Errorf("README.md:%d: %s\nexit %d: %s", ex.lineNo, ex.line, code, stderr)
		case code == 0 && ex.mustFail:
			t.Errorf("README.md:%d: %s\nexit 0, but the README shows it failing", ex.lineNo, ex.line)
		}
	}
}

type readmeExample struct {
	section int // the ## section it is in
	lineNo  int
	line    string // the command line, without prompt and comment
	mayFail bool   // the README says it may exit non-zero
	// mustFail: a transcript shows its error, or its comment says it is
	// refused: it must exit non-zero.
	mustFail bool
}

var (
	fence        = regexp.MustCompile("^```([a-z]*)$")
	failsComment = regexp.MustCompile(`(?i)refused|exit [1-9]|exits [1-9]|fails|still pending|[0-9] (denied|pending)`)
)

// readmeExamples extracts the examples of the sh and text blocks.
func readmeExamples(readme string) []readmeExample {
	var out []readmeExample
	lang, inBlock, section := "", false, 0
	lines := strings.Split(readme, "\n")
	for i, raw := range lines {
		if strings.HasPrefix(raw, "## ") && !inBlock {
			section++
		}
		if m := fence.FindStringSubmatch(raw); m != nil {
			inBlock, lang = !inBlock, m[1]
			continue
		}
		if !inBlock || (lang != "sh" && lang != "text") {
			continue
		}
		line := strings.TrimSpace(raw)
		if lang == "text" {
			var ok bool
			if line, ok = strings.CutPrefix(line, "$ "); !ok {
				continue
			}
		}
		cmd, comment := splitComment(line)
		if !strings.HasPrefix(cmd, "flowctl ") && !strings.HasPrefix(cmd, "export ") &&
			!strings.Contains(cmd, "| flowctl ") || strings.Contains(cmd, "<TAB>") {
			continue
		}
		ex := readmeExample{section: section, lineNo: i + 1, line: cmd, mayFail: failsComment.MatchString(comment)}
		if lang == "text" && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "flowctl: ") {
			ex.mayFail, ex.mustFail = true, true
		}
		if strings.Contains(strings.ToLower(comment), "refused") || strings.Contains(comment, "exit 3 if") {
			ex.mustFail = true
		}
		out = append(out, ex)
	}
	return out
}

// splitComment cuts a trailing shell comment (a # outside quotes).
func splitComment(line string) (cmd, comment string) {
	cut := -1
	scanUnquoted(line, func(i int, r rune) bool {
		if r == '#' && (i == 0 || line[i-1] == ' ') {
			cut = i
			return false
		}
		return true
	})
	if cut < 0 {
		return strings.TrimSpace(line), ""
	}
	return strings.TrimSpace(line[:cut]), line[cut+1:]
}

// scanUnquoted calls fn with each rune of line outside quotes, and its
// byte offset, until fn returns false.
func scanUnquoted(line string, fn func(i int, r rune) bool) {
	quote := rune(0)
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case !fn(i, r):
			return
		}
	}
}

// runExample runs one command line (a pipeline of flowctl commands, or
// echo/tail into one) and returns the exit code and stderr of the first
// flowctl stage that failed, else of the last.
func runExample(t *testing.T, dir string, env map[string]string, line string) (int, string) {
	t.Helper()
	stages := splitPipeline(line)
	stdin := ""
	code, stderr := 0, ""
	for i, stage := range stages {
		words, err := splitShell(stage)
		if err != nil {
			t.Fatalf("README example %q: %v", line, err)
		}
		if len(words) == 0 {
			continue
		}
		var out string
		switch words[0] {
		case "jq":
			continue
		case "echo":
			stdin = strings.Join(words[1:], " ") + "\n"
			continue
		case "tail":
			b, _ := os.ReadFile(filepath.Join(dir, words[len(words)-1]))
			stdin = lastLine(string(b))
			continue
		case "flowctl":
			if code != 0 {
				return code, stderr // an earlier stage failed: so does the line
			}
			args, redirect := cutRedirect(words[1:])
			args = shortenWaits(args)
			out, stderr, code = runFollowing(t, dir, env, stdin, args)
			if redirect != "" && redirect != "/dev/null" {
				if err := os.WriteFile(filepath.Join(dir, redirect), []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		default:
			t.Fatalf("README example %q: stage %d runs %s, which the test does not know", line, i, words[0])
		}
		stdin = out
	}
	return code, stderr
}

// runFollowing runs flowctl in process; a command that follows the log
// (watch, log -f), or serves (serve), is stopped after 300 ms.
func runFollowing(t *testing.T, dir string, vars map[string]string, stdin string, args []string) (string, string, int) {
	ctx := context.Background()
	for _, a := range args {
		if a == "watch" || a == "-f" || a == "--follow" || a == "serve" {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, 300*time.Millisecond)
			defer cancel()
		}
	}
	var stdout, stderr bytes.Buffer
	e := env{stdin: strings.NewReader(stdin), stdout: &stdout, stderr: &stderr,
		getenv: func(k string) string { return vars[k] }, dir: dir}
	code := run(ctx, args, e)
	return stdout.String(), stderr.String(), code
}

func splitPipeline(line string) []string {
	var stages []string
	start := 0
	scanUnquoted(line, func(i int, r rune) bool {
		if r == '|' {
			stages = append(stages, strings.TrimSpace(line[start:i]))
			start = i + 1
		}
		return true
	})
	return append(stages, strings.TrimSpace(line[start:]))
}

// splitShell splits a command line as a POSIX shell would for the
// quoting the README and quickstart use: single quotes, and double quotes
// with \" and \\ inside.
func splitShell(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord, quote := false, rune(0)
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			if r == '"' {
				quote = 0
			} else if r == '\\' && i+1 < len(rs) && (rs[i+1] == '"' || rs[i+1] == '\\') {
				i++
				cur.WriteRune(rs[i])
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated quote in %q", line)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// cutRedirect takes a trailing `> FILE` off args.
func cutRedirect(args []string) ([]string, string) {
	if n := len(args); n >= 2 && args[n-2] == ">" {
		return args[:n-2], args[n-1]
	}
	return args, ""
}

// shortenWaits cuts an approval wait's --timeout to 10 ms.
func shortenWaits(args []string) []string {
	out := append([]string{}, args...)
	for i := range out {
		if out[i] == "--timeout" && i+1 < len(out) {
			out[i+1] = "10ms"
		}
	}
	return out
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1] + "\n"
}

// readmeFixtures makes the files the examples read but do not write.
func readmeFixtures(t *testing.T, dir string) {
	t.Helper()
	write := func(name, content string) { writeFile(t, filepath.Join(dir, name), []byte(content)) }
	write("deploy.json", `{"deploy":"prod","version":"1.4.2"}`)
	write("patch.json", `{"reviewed":true}`)
	write("exec_log.jsonl", `{"plan_id": "local", "task_id": "unknown", "timestamp": "2025-07-23T18:54:03.123Z", "elapsed_ms": 12.5, "code": "print(1)", "stdout": "1\n", "stderr": "", "success": true, "added_vars": [], "added_imports": []}`+"\n")
	copyTree(t, filepath.Join("testdata", "legacy_import"), dir)
	// a.db, which `flowctl export --db a.db | flowctl import --db b.db -` copies.
	if _, stderr, code := runCLI(t, dir, "", "--db", "a.db", "init", "--project", "alpha"); code != 0 {
		t.Fatalf("init a.db: exit %d, %s", code, stderr)
	}
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.Walk(from, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if info.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
