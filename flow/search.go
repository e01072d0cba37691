package flow

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/flowctl/flowctl/flow/internal/logidx"
	"github.com/flowctl/flowctl/flow/internal/searchidx"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/vmihailenco/msgpack/v5"
)

// SearchQuery is what Search looks for.
type SearchQuery struct {
	Text    string // words; an entity matches any of them
	Project string // "" on an engine not At a point: every project
	Limit   int    // the most hits; 0: DefaultSearchLimit
}

// DefaultSearchLimit is the number of hits of a query without a limit.
const DefaultSearchLimit = 20

// SearchHit is one field of one entity that holds a word of the query.
type SearchHit struct {
	Project string    `json:"project"`
	Kind    string    `json:"kind"` // task | note | exec
	ID      string    `json:"id"`   // T-n, X-n, or a note's seq
	Task    string    `json:"task,omitempty"`
	Title   string    `json:"title,omitempty"` // the task's title
	Field   string    `json:"field"`           // title | description | context | note | memory | command
	Snippet string    `json:"snippet"`
	Score   float64   `json:"score"`
	Seq     uint64    `json:"seq"` // the event that wrote the text the score is of
	Time    time.Time `json:"time"`
}

// SearchResult is Search's answer.
type SearchResult struct {
	Query      string      `json:"query"`
	Words      []string    `json:"words"`
	Project    string      `json:"project,omitempty"`
	At         uint64      `json:"at"`         // the seq the state searched is at
	Index      bool        `json:"index"`      // false: the log was read (an index of another format)
	Candidates int         `json:"candidates"` // postings that held a word
	Hits       []SearchHit `json:"hits"`
}

// Search finds the task titles, descriptions and contexts, notes and
// memories and exec commands that hold any word of q.Text, best first
// (searchidx.Score: BM25 with a boost for titles; a tie to the newer
// event). On a view At a point it searches the project as it stood
// there. It reads the full-text index, and the log for events the index
// does not list (all of it when the index is of another format).
// Errors: ErrInvalid for a query without a word.
func (e *Engine) Search(q SearchQuery) (*SearchResult, error) {
	words := slices.Compact(slices.Sorted(slices.Values(searchidx.Words(q.Text))))
	if len(words) == 0 {
		return nil, fmt.Errorf("%w: %q has no word to search (a word is two or more letters or digits)", ErrInvalid, q.Text)
	}
	if q.Limit <= 0 {
		q.Limit = DefaultSearchLimit
	}
	if e.at != nil {
		q.Project = e.at.project
	}
	res := &SearchResult{Query: q.Text, Words: words, Project: q.Project, Hits: []SearchHit{}}
	err := e.view(func(tx store.Tx) error {
		if e.at != nil {
			src, seq, err := e.atState(tx)
			if err != nil {
				return err
			}
			res.At = seq
			return search(tx, src, q, res)
		}
		res.At, _ = tx.Head()
		return e.readTx(tx, func(src source) error { return search(tx, src, q, res) })
	})
	return res, err
}

func search(tx store.Tx, src source, q SearchQuery, res *SearchResult) error {
	stored, extra, err := searchSources(tx, q.Project, res.At)
	if err != nil {
		return err
	}
	res.Index = stored != nil
	lists, err := searchidx.Read(stored, extra, searchidx.Query{Words: res.Words, Project: q.Project, UpTo: res.At, Events: res.At})
	if err != nil {
		return err
	}
	res.Candidates = lists.Candidates()
	// The best few candidates first; more when checking them against the
	// state left too few (an entity's field counts once, and a field
	// changed since holds the word no more).
	for m := 8 * q.Limit; ; m *= 8 {
		top, err := lists.Top(m)
		if err != nil {
			return err
		}
		res.Hits = res.Hits[:0]
		seen := map[string]bool{}
		for _, c := range top {
			hit, key, err := searchHit(tx, src, c, res.Words)
			if err != nil {
				return err
			}
			if hit == nil || seen[key] {
				continue
			}
			seen[key] = true
			if res.Hits = append(res.Hits, *hit); len(res.Hits) == q.Limit {
				return nil
			}
		}
		if len(top) < m {
			return nil
		}
	}
}

// searchSources returns the stored index to read (nil when it is of
// another format) and the postings of the events up to upTo it does not
// list, read from the log.
func searchSources(tx store.Tx, project string, upTo uint64) (store.Tx, *searchidx.Writer, error) {
	through, ok, err := logidx.Through(tx)
	if err != nil {
		return nil, nil, err
	}
	from := through + 1
	if !ok {
		from = 1
	}
	if from > upTo {
		return tx, nil, nil
	}
	extra := new(searchidx.Writer)
	add := func(r *store.Record) error {
		if r.Seq > upTo {
			return store.ErrStop
		}
		extra.Add(r.Seq, &r.Event)
		return nil
	}
	if project != "" {
		err = tx.ReplayProject(project, from, add)
	} else {
		err = tx.Replay(from, upTo, add)
	}
	if !ok {
		return nil, extra, err
	}
	return tx, extra, err
}

// searchHit checks a candidate against the state and makes its hit, with
// the key that one hit per entity and field has; nil when the entity no
// longer holds a word of the query there (or is gone).
func searchHit(tx store.Tx, src source, c searchidx.Scored, words []string) (*SearchHit, string, error) {
	r, err := tx.Record(c.Seq)
	if err != nil || r == nil {
		return nil, "", err
	}
	hit := &SearchHit{Project: c.Project, Field: c.Field.String(), Score: c.Score, Seq: c.Seq, Time: r.Time}
	var text string
	switch c.Field {
	case searchidx.FieldTitle, searchidx.FieldDescription, searchidx.FieldContext:
		kind, _, id, ok := projection.ParseStream(r.Stream)
		if !ok || kind != projection.KindTask {
			return nil, "", nil
		}
		t, err := src.Task(c.Project, id)
		if err != nil || t == nil {
			return nil, "", err
		}
		hit.Kind, hit.ID, hit.Task, hit.Title = "task", id, id, t.Title
		text = taskText(t, c.Field)
	case searchidx.FieldNote, searchidx.FieldMemory:
		var p projection.NoteAdded
		if err := msgpack.Unmarshal(r.Data, &p); err != nil {
			return nil, "", &store.CorruptionError{Seq: r.Seq, Reason: fmt.Sprintf("note does not decode: %v", err)}
		}
		hit.Kind, hit.ID, hit.Task, text = "note", strconv.FormatUint(r.Seq, 10), p.Task, p.Text
		if p.Task != "" {
			if t, err := src.Task(c.Project, p.Task); err != nil {
				return nil, "", err
			} else if t != nil {
				hit.Title = t.Title
			}
		}
	case searchidx.FieldCommand:
		var p projection.ExecRecorded
		if err := msgpack.Unmarshal(r.Data, &p); err != nil {
			return nil, "", &store.CorruptionError{Seq: r.Seq, Reason: fmt.Sprintf("exec record does not decode: %v", err)}
		}
		x, err := src.Exec(c.Project, p.ID)
		if err != nil || x == nil {
			return nil, "", err
		}
		hit.Kind, hit.ID, hit.Task = "exec", x.ID, x.Task
		text = searchidx.ExecText(x.Command, x.Code)
	default:
		return nil, "", nil
	}
	if !searchidx.Contains(text, words) {
		return nil, "", nil // the text changed since
	}
	hit.Snippet = searchidx.Snippet(text, words)
	return hit, c.Project + "/" + hit.ID + "/" + hit.Field, nil
}

func taskText(t *projection.Task, f searchidx.Field) string {
	switch f {
	case searchidx.FieldTitle:
		return t.Title
	case searchidx.FieldDescription:
		return t.Description
	}
	return searchidx.ContextText(string(t.Context))
}
