package flow

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow/capture"
	"github.com/flowctl/flowctl/projection"
)

// execIn is a valid exec record of "website".
func execIn(task string) NewExec {
	return NewExec{Project: "website", Task: task, Command: "go test ./...", Cwd: "/src", ExitCode: 0, Success: true,
		ElapsedMS: 12.5, Stdout: capture.String("ok\n"), Stderr: capture.String(""), AddedVars: []string{"x"}, GitHead: "abc123"}
}

func TestEngine_RecordExec(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		e := apprFixture(t)
		plan, err := e.AddPlan(NewPlan{Project: "website", Title: "p"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.EditTask(TaskEdit{Project: "website", ID: "T-1", Plan: &plan.ID}); err != nil {
			t.Fatal(err)
		}
		x, err := e.RecordExec(execIn("T-1"))
		if err != nil {
			t.Fatal(err)
		}
		if x.ID != "X-1" || x.Task != "T-1" || x.Plan != plan.ID || x.Command != "go test ./..." || x.Cwd != "/src" ||
			!x.Success || x.ElapsedMS != 12.5 || x.Stdout.Head != "ok\n" || x.Stdout.Bytes != 3 || x.Actor != "tester" ||
			x.GitHead != "abc123" || !slices.Equal(x.AddedVars, []string{"x"}) {
			t.Errorf("exec = %+v", x)
		}
		y, err := e.RecordExec(NewExec{Project: "website", Code: "print(1)", ExitCode: 2})
		if err != nil || y.ID != "X-2" || y.Task != "" || y.Success {
			t.Fatalf("project exec = %+v, %v", y, err)
		}
		tk, _ := e.Task("website", "T-1")
		if tk.Execs != 1 {
			t.Errorf("task execs = %d, want 1", tk.Execs)
		}
		onTask := collect(t, e, Filter{Stream: "task/website/T-1", Type: projection.TypeExecRecorded})
		onProject := collect(t, e, Filter{Stream: "project/website", Type: projection.TypeExecRecorded})
		if len(onTask) != 1 || len(onProject) != 1 {
			t.Errorf("exec events on the task stream %d, on the project stream %d; want 1 and 1", len(onTask), len(onProject))
		}
	})
	t.Run("Step", func(t *testing.T) {
		e := apprFixture(t)
		step := apprAddStep(t, e, "T-1")
		in := execIn("")
		in.Step = step
		x, err := e.RecordExec(in)
		if err != nil || x.Task != "T-1" || x.Step != "T-1.1" {
			t.Errorf("exec of a step = %+v, %v", x, err)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		e := apprFixture(t)
		before := apprCount(t, e)
		bad := map[string]func(*NewExec){
			"no command":       func(in *NewExec) { in.Command, in.Code = "", " " },
			"success mismatch": func(in *NewExec) { in.ExitCode = 3 },
			"failure code 0":   func(in *NewExec) { in.Success = false },
			"NaN elapsed":      func(in *NewExec) { in.ElapsedMS = math.NaN() },
			"negative elapsed": func(in *NewExec) { in.ElapsedMS = -1 },
			"bad UTF-8 head":   func(in *NewExec) { in.Stdout.Head = "\xff" },
			"head too long":    func(in *NewExec) { in.Stderr.Head = strings.Repeat("x", OutputLimit+1) },
			"bad sha":          func(in *NewExec) { in.Stdout.SHA256 = "xyz" },
			"negative bytes":   func(in *NewExec) { in.Stdout.Bytes = -1 },
			"bad task id":      func(in *NewExec) { in.Task = "P-1" },
			"bad plan id":      func(in *NewExec) { in.Plan = "local" },
			"step of other":    func(in *NewExec) { in.Step = "T-2.1" },
			"empty added var":  func(in *NewExec) { in.AddedVars = []string{""} },
			"command bad UTF8": func(in *NewExec) { in.Command = "ls \xff" },
		}
		for name, change := range bad {
			in := execIn("T-1")
			change(&in)
			if _, err := e.RecordExec(in); !errors.Is(err, ErrInvalid) {
				t.Errorf("%s: RecordExec = %v, want ErrInvalid", name, err)
			}
			if _, err := e.CheckExec(in); !errors.Is(err, ErrInvalid) {
				t.Errorf("%s: CheckExec = %v, want ErrInvalid", name, err)
			}
		}
		if got := apprCount(t, e); got != before {
			t.Errorf("bad records appended %d events", got-before)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		e := apprFixture(t)
		for name, change := range map[string]func(*NewExec){
			"task":    func(in *NewExec) { in.Task = "T-9" },
			"step":    func(in *NewExec) { in.Step = "T-1.3" },
			"plan":    func(in *NewExec) { in.Plan = "P-4" },
			"project": func(in *NewExec) { in.Project = "nope" },
		} {
			in := execIn("T-1")
			change(&in)
			if _, err := e.RecordExec(in); !errors.Is(err, ErrNotFound) {
				t.Errorf("%s: RecordExec = %v, want ErrNotFound", name, err)
			}
			if _, err := e.CheckExec(in); !errors.Is(err, ErrNotFound) {
				t.Errorf("%s: CheckExec = %v, want ErrNotFound", name, err)
			}
		}
	})
	t.Run("CheckExecAppendsNothing", func(t *testing.T) {
		e := apprFixture(t)
		in := execIn("")
		in.Step = apprAddStep(t, e, "T-1")
		before := apprCount(t, e)
		got, err := e.CheckExec(in)
		if err != nil || got.Task != "T-1" {
			t.Fatalf("CheckExec = %+v, %v; want the task taken from the step", got, err)
		}
		if apprCount(t, e) != before {
			t.Errorf("CheckExec appended events")
		}
	})
	t.Run("ErrConflictIfVersion", func(t *testing.T) {
		e := apprFixture(t)
		in := execIn("T-1")
		in.IfVersion = 99
		if _, err := e.RecordExec(in); ErrorCode(err) != CodeConflict {
			t.Errorf("stale --if-version = %v, want conflict", err)
		}
		if _, err := e.CheckExec(in); ErrorCode(err) != CodeConflict {
			t.Errorf("CheckExec with a stale --if-version = %v, want conflict", err)
		}
	})
}

func TestEngine_Execs(t *testing.T) {
	e := apprFixture(t)
	apprTask(t, e, "second") // T-2
	for _, x := range []struct {
		task string
		code int
	}{{"T-1", 0}, {"T-2", 1}, {"", 0}, {"T-1", 2}} {
		in := execIn(x.task)
		in.ExitCode, in.Success = x.code, x.code == 0
		if _, err := e.RecordExec(in); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		f    ExecFilter
		want []string
	}{
		{ExecFilter{}, []string{"X-1", "X-2", "X-3", "X-4"}},
		{ExecFilter{Task: "T-1"}, []string{"X-1", "X-4"}},
		{ExecFilter{Failed: true}, []string{"X-2", "X-4"}},
		{ExecFilter{Task: "2", Failed: true}, []string{"X-2"}},
	} {
		all, err := e.Execs("website", tt.f)
		var got []string
		for _, x := range all {
			got = append(got, x.ID)
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("Execs(%+v) = %v, %v; want %v", tt.f, got, err, tt.want)
		}
	}
	if _, err := e.Execs("website", ExecFilter{Task: "T-9"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Execs of T-9 = %v, want ErrNotFound", err)
	}
	if _, err := e.Exec("website", "X-9"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Exec(X-9) = %v, want ErrNotFound", err)
	}
}

func TestDecodeExec(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		in, err := DecodeExec([]byte(`{"code":"x = 1\nimport os","stdout":"hi\n","stderr":"","success":true,` +
			`"elapsed_ms":3.25,"added_vars":["x"],"added_imports":["os"],"task":"T-2","plan":"P-1"}`))
		if err != nil {
			t.Fatal(err)
		}
		if in.Code != "x = 1\nimport os" || !in.Success || in.ExitCode != 0 || in.ElapsedMS != 3.25 ||
			in.Stdout != capture.String("hi\n") || in.Stderr.Bytes != 0 || in.Task != "T-2" || in.Plan != "P-1" ||
			!slices.Equal(in.AddedImports, []string{"os"}) {
			t.Errorf("decoded = %+v", in)
		}
	})
	t.Run("Seed003", func(t *testing.T) {
		for _, tt := range []struct {
			json, task, plan string
			at               time.Time
		}{
			{`{"plan_id":"local","task_id":"T-2","timestamp":"2025-07-23T18:54:03.123Z","elapsed_ms":1,"code":"x","stdout":"",` +
				`"stderr":"","success":true,"added_vars":[],"added_imports":[]}`, "T-2", "", time.Date(2025, 7, 23, 18, 54, 3, 123e6, time.UTC)},
			{`{"plan_id":"P-1","task_id":"unknown","timestamp":"2025-07-23T18:54:03.123","code":"x","success":true}`,
				"", "P-1", time.Date(2025, 7, 23, 18, 54, 3, 123e6, time.UTC)},
			{`{"plan_id":"","task_id":"","timestamp":null,"code":"x","success":true}`, "", "", time.Time{}},
		} {
			in, err := DecodeExec([]byte(tt.json))
			if err != nil || in.Task != tt.task || in.Plan != tt.plan || !in.OccurredAt.Equal(tt.at) {
				t.Errorf("DecodeExec(%s) = task %q plan %q at %s, %v; want %q %q %s", tt.json, in.Task, in.Plan, in.OccurredAt, err, tt.task, tt.plan, tt.at)
			}
		}
	})
	t.Run("Defaults", func(t *testing.T) {
		tests := []struct {
			json    string
			code    int
			success bool
		}{
			{`{"command":"false","success":false}`, 1, false},
			{`{"command":"x","exit_code":0}`, 0, true},
			{`{"command":"x","exit_code":7}`, 7, false},
			{`{"command":"x","exit_code":7,"success":false}`, 7, false},
		}
		for _, tt := range tests {
			in, err := DecodeExec([]byte(tt.json))
			if err != nil || in.ExitCode != tt.code || in.Success != tt.success {
				t.Errorf("DecodeExec(%s) = exit %d success %t, %v; want %d %t", tt.json, in.ExitCode, in.Success, err, tt.code, tt.success)
			}
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, b := range []string{
			`{"code":"x","success":true,"debug_info":{}}`,
			`{"code":"x","success":true,"timestamp":"01/02/2024"}`,
			`{"code":"x","success":true,"timestamp":{}}`,
			`{"code":"x","success":true,"timestamp":-1}`,
			`{"code":"x","success":true,"task":"T-1","task_id":"T-1"}`,
			`{"code":"x","success":true,"plan":"P-1","plan_id":"P-2"}`,
			`{"code":"x","success":true,"task_id":5}`,
			`{"code":"x","success":true,"Stdout":"y"}`,
			`{"code":"x","success":true,"stdout":5}`,
			`{"code":"x","success":"yes"}`,
			`{"code":"x"}`,
			`{"code":"x","success":true,"exit_code":1}`,
			`{"code":"x","success":true,"success":true}`,
			`[{"code":"x","success":true}]`,
			`null`,
			`{"code":"x","success":true`,
			"{\"code\":\"\xff\",\"success\":true}",
			`{"code":"x","success":true,"exit_code":1.5}`,
		} {
			if _, err := DecodeExec([]byte(b)); !errors.Is(err, ErrInvalid) {
				t.Errorf("DecodeExec(%q) = %v, want ErrInvalid", b, err)
			}
		}
	})
}
