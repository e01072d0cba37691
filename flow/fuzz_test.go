package flow

import (
	"bytes"
	"testing"
)

// FuzzImport feeds arbitrary input to import. It must never panic, must
// classify every refusal as invalid input or a conflict, and what it
// accepts must import again as a no-op.
func FuzzImport(f *testing.F) {
	f.Add([]byte(`{"id":"0190f3a0-0000-7000-8000-000000000001","stream":"s/1","version":1,"type":"x.y","schema":1,"time":"2026-11-01T10:00:00Z","actor":"a","data":{"k":[1,"v",null,true]}}`))
	f.Add([]byte(`{"id":"0190f3a0-0000-7000-8000-000000000002","stream":"s/1","version":1,"type":"x.y","time":"2026-11-01T10:00:00Z","raw":"gaFrAQ=="}` + "\n" +
		`{"id":"0190f3a0-0000-7000-8000-000000000003","stream":"s/1","version":2,"type":"x.y","time":"2026-11-01T10:00:01Z","data":1.5}`))
	f.Add([]byte(`{"id":"0190f3a0-0000-7000-8000-000000000004","stream":"project/p","version":1,"type":"project.created","schema":1,"time":"2026-11-01T10:00:00Z","actor":"a","project":"p","data":{"name":"p"}}` + "\n" +
		`{"id":"0190f3a0-0000-7000-8000-000000000005","stream":"task/p/T-1","version":1,"type":"task.created","schema":1,"time":"2026-11-01T10:00:01Z","actor":"a","project":"p","data":{"id":"T-1","title":"t"}}` + "\n" +
		`{"id":"0190f3a0-0000-7000-8000-000000000006","stream":"task/p/T-1","version":2,"type":"task.context_merged","schema":1,"time":"2026-11-01T10:00:02Z","actor":"a","project":"p","data":{"patch":{"a":[1,{"b":null}]}}}` + "\n" +
		`{"id":"0190f3a0-0000-7000-8000-000000000007","stream":"task/p/T-1","version":3,"type":"task.claimed","schema":1,"time":"2026-11-01T10:00:03Z","actor":"a","project":"p","data":{"actor":"a","lease_until":"2026-11-01T11:00:03Z"}}`))
	f.Add([]byte("{}\n\n[]"))
	f.Add([]byte(`{"id":"0190f3a00000700080000000000000ff","stream":"s","version":3,"type":"t","time":"2026-11-01T10:00:00+02:00"}`))
	// One engine for the whole run: opening a file per input would make
	// the fuzzer measure file creation. Inputs may therefore meet events of
	// earlier inputs, which is what makes conflicts reachable.
	e := mustOpen(f)
	f.Fuzz(func(t *testing.T, input []byte) {
		res, err := e.Import(bytes.NewReader(input))
		if err != nil {
			if c := ErrorCode(err); c != CodeInvalid && c != CodeConflict {
				t.Fatalf("Import refused with code %s: %v", c, err)
			}
			return
		}
		again, err := e.Import(bytes.NewReader(input))
		if err != nil || again.Appended != 0 || again.Read != res.Read {
			t.Fatalf("second Import = %+v, %v after first %+v", again, err, res)
		}
	})
}
