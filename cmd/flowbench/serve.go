package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/internal/serve"
	"github.com/flowctl/flowctl/internal/webui"
)

// Issue 16's targets: every API call and page of `flowctl serve` within
// serveTargetMS of server time on the generated file, and an event
// appended by another process delivered on the SSE stream within
// sseTargetMS (median).
const (
	serveTargetMS = 50
	sseTargetMS   = 100
	serveAddr     = "127.0.0.1:7070"
	serveToken    = "flowbench-token-0123456789"
)

// serveCall is one request the serve rows time; an informational one
// (every task, every change of a diff or the whole graph at once, which a
// client asks for only with limit=0 or all=1) has no target.
type serveCall struct {
	name, method, target, body string
	informational              bool
}

// serveRows measures `flowctl serve`'s handler (the API and the pages,
// as serve.New builds them with webui) on the generated file: the server
// time of each call, from the request to its last byte with the file
// opened and closed per call as the server does, median of the rounds;
// and the SSE stream's append-to-delivery time.
func (b *bench) serveRows() ([]Row, error) {
	h, err := serve.New(serve.Config{Path: b.gen, Addr: serveAddr, Token: serveToken, Actor: "flowbench",
		UI: webui.New(webui.Config{Path: b.gen})})
	if err != nil {
		return nil, err
	}
	p, task, cp, err := serveSubjects(h)
	if err != nil {
		return nil, err
	}
	rounds := 7
	if b.size.genEvents < fullSizes.genEvents {
		rounds = 3
	}
	var rows []Row
	for _, c := range serveCalls(p, task, cp) {
		ms, err := timeCall(h, c, rounds)
		g := atMost("value", serveTargetMS)
		if c.informational {
			g = nil
		}
		row := newRow("serve_"+c.name, ms, serveTargetMS, "ms", g)
		rows = append(rows, row.withError(err))
	}
	p50, err := sseDelivery(h, b.gen, p, rounds*3)
	rows = append(rows, newRow("serve_sse_delivery", p50, sseTargetMS, "ms", atMost("value", sseTargetMS)).withError(err))
	return rows, nil
}

// serveCalls are the API calls and pages timed, on project p, its task
// and its checkpoint cp.
func serveCalls(p, task, cp string) []serveCall {
	api := "/api/v1/projects/" + p
	page := "/p/" + p
	return []serveCall{
		{"api_projects", "GET", "/api/v1/projects", "", false},
		{"api_status", "GET", api + "/status", "", false},
		{"api_status_at", "GET", api + "/status?at=" + cp, "", false},
		{"api_tasks", "GET", api + "/tasks", "", false},
		{"api_tasks_all", "GET", api + "/tasks?limit=0", "", true},
		{"api_tasks_after", "GET", api + "/tasks?after=T-3000", "", false},
		{"api_tasks_doing", "GET", api + "/tasks?status=doing", "", false},
		{"api_task", "GET", api + "/tasks/" + task, "", false},
		{"api_task_at", "GET", api + "/tasks/T-1?at=" + cp, "", false},
		{"api_ready", "GET", api + "/ready?limit=50", "", false},
		{"api_log", "GET", api + "/log", "", false},
		{"api_log_before", "GET", api + "/log?before=500000", "", false},
		{"api_log_type", "GET", api + "/log?type=task.*&limit=50", "", false},
		{"api_log_task", "GET", api + "/log?task=" + task, "", false},
		{"api_approvals", "GET", api + "/approvals?status=pending&limit=50", "", false},
		{"api_checkpoints", "GET", api + "/checkpoints", "", false},
		{"api_graph", "GET", api + "/graph", "", false},
		{"api_graph_all", "GET", api + "/graph?all=1", "", true},
		{"api_diff", "GET", api + "/diff?a=" + cp, "", false},
		{"api_diff_all", "GET", api + "/diff?a=" + cp + "&limit=0", "", true},
		{"api_rollback_dry", "POST", api + "/rollback", `{"to":"` + cp + `","dry_run":true}`, false},
		{"page_projects", "GET", "/", "", false},
		{"page_overview", "GET", page, "", false},
		{"page_overview_at", "GET", page + "?at=" + cp, "", false},
		{"page_board", "GET", page + "/board", "", false},
		{"page_task", "GET", page + "/tasks/" + task, "", false},
		{"page_log", "GET", page + "/log", "", false},
		{"page_approvals", "GET", page + "/approvals", "", false},
		{"page_checkpoints", "GET", page + "/checkpoints", "", false},
		{"page_stats", "GET", page + "/stats", "", false},
		{"page_graph", "GET", page + "/graph", "", false},
	}
}

// serveRequest sends c to h as a client of serveAddr with the token.
func serveRequest(h http.Handler, c serveCall) *httptest.ResponseRecorder {
	req := httptest.NewRequest(c.method, c.target, strings.NewReader(c.body))
	req.Host = serveAddr
	req.Header.Set("Authorization", "Bearer "+serveToken)
	if c.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// timeCall is the median ms of rounds calls of c; an answer that is not
// 200 is an error.
func timeCall(h http.Handler, c serveCall, rounds int) (float64, error) {
	var ms []float64
	for range rounds {
		start := time.Now()
		w := serveRequest(h, c)
		took := time.Since(start)
		if w.Code != http.StatusOK {
			return 0, fmt.Errorf("%s %s: %d %s", c.method, c.target, w.Code, firstLine(w.Body.String()))
		}
		ms = append(ms, float64(took.Microseconds())/1000)
	}
	return median(ms), nil
}

// serveSubjects picks the project with the most tasks, its last task
// and its first checkpoint (seq 1000 without one).
func serveSubjects(h http.Handler) (project, task, point string, err error) {
	w := serveRequest(h, serveCall{method: "GET", target: "/api/v1/projects"})
	var ps []struct {
		Name     string
		Counters struct{ Tasks, Checkpoints int }
	}
	if err := jsonBody(w, &ps); err != nil {
		return "", "", "", err
	}
	if len(ps) == 0 {
		return "", "", "", errors.New("the file has no project")
	}
	best := ps[0]
	for _, p := range ps {
		if p.Counters.Tasks > best.Counters.Tasks {
			best = p
		}
	}
	if best.Counters.Tasks == 0 {
		return "", "", "", errors.New("no project has a task")
	}
	point = "1000"
	if best.Counters.Checkpoints > 0 {
		point = "C-1"
	}
	return best.Name, "T-" + strconv.Itoa(best.Counters.Tasks), point, nil
}

// sseDelivery is the median ms from an append by another engine (opened
// and closed around it, as another process's command does) to its event
// on the handler's SSE stream, over n appends landing anywhere between
// two of the stream's polls.
func sseDelivery(h http.Handler, path, project string, n int) (float64, error) {
	ts := httptest.NewUnstartedServer(h)
	ts.Config.Addr = serveAddr
	ts.Start()
	defer ts.Close()
	req, err := http.NewRequest("GET", ts.URL+"/api/v1/events?project="+project, nil)
	if err != nil {
		return 0, err
	}
	req.Host = serveAddr
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET /api/v1/events: %s", resp.Status)
	}
	ids := make(chan uint64, 64)
	go func() {
		defer close(ids)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<16), 1<<24)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
				if seq, err := strconv.ParseUint(v, 10, 64); err == nil {
					ids <- seq
				}
			}
		}
	}()
	time.Sleep(500 * time.Millisecond) // the stream's first poll
	var ms []float64
	for i := range n {
		time.Sleep(time.Duration(i*37%200) * time.Millisecond)
		eng, err := flow.Open(path, flow.Options{Actor: "flowbench"})
		if err != nil {
			return 0, err
		}
		start := time.Now()
		note, err := eng.AddNote(flow.NewNote{Project: project, Text: "flowbench serve"})
		eng.Close()
		if err != nil {
			return 0, err
		}
		if err := waitSeq(ids, note.Seq); err != nil {
			return 0, err
		}
		ms = append(ms, float64(time.Since(start).Microseconds())/1000)
	}
	slices.Sort(ms)
	return median(ms), nil
}

// waitSeq reads ids until seq comes, for at most 5 s.
func waitSeq(ids <-chan uint64, seq uint64) error {
	timeout := time.After(5 * time.Second)
	for {
		select {
		case got, ok := <-ids:
			if !ok {
				return errors.New("the event stream ended")
			}
			if got >= seq {
				return nil
			}
		case <-timeout:
			return fmt.Errorf("seq %d not delivered within 5 s", seq)
		}
	}
}

// jsonBody decodes a 200 answer's JSON into v.
func jsonBody(w *httptest.ResponseRecorder, v any) error {
	if w.Code != http.StatusOK {
		return fmt.Errorf("%d %s", w.Code, firstLine(w.Body.String()))
	}
	return json.Unmarshal(w.Body.Bytes(), v)
}

// firstLine is s up to its first newline, at most 200 bytes.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}
