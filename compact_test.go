package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestCompactTable checks the examples of compactDrop and compactIdentity.
func TestCompactTable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		key, value string
		drop       bool
	}{
		{"avatar_url", `"http://x/a.png"`, true},
		{"url", `"http://x/api/v1/repos/a/b"`, true},
		{"_links", `{"self":"http://x"}`, true},
		{"merged_at", `null`, true},
		{"body", `""`, true},
		{"labels", `[]`, true},
		{"closed_at", `"0001-01-01T00:00:00Z"`, true},
		{"archived_at", `"1970-01-01T00:00:00Z"`, true},
		{"html_url", `"http://x/a/b/pulls/1"`, false},
		{"mergeable", `false`, false},
		{"comments", `0`, false},
		{"pin_order", `0`, true},
		{"pin_order", `2`, false},
		{"website", `"http://example.com"`, false},
		{"scopes", `[]`, false},
		{"token_last_eight", `""`, false},
	} {
		if got := compactDrop(tc.key, []byte(tc.value)); got != tc.drop {
			t.Errorf("compactDrop(%q, %s) = %v, want %v", tc.key, tc.value, got, tc.drop)
		}
	}
	s := testServer(t, nil)
	pr := `{"id":7,"number":3,"user":{"id":2,"login":"bob","full_name":"","avatar_url":"http://x/a"},` +
		`"labels":[{"id":1,"name":"bug","color":"ee0701","url":"http://x/l/1","description":"d"}],` +
		`"head":{"label":"bob/change","ref":"bob/change","sha":"abc","repo_id":1,"repo":{"id":1,"full_name":"alice/demo","owner":{"login":"alice"},"clone_url":"http://x/alice/demo.git"}},` +
		`"base":{"label":"bob:main","ref":"main"},"assignees":[{"login":"carol","full_name":"Carol C","email":"c@x"}],"milestone":null,"mergeable":false,"merged":false,` +
		`"merged_at":null,"closed_at":"0001-01-01T00:00:00Z","html_url":"http://x/alice/demo/pulls/3","diff_url":"http://x/3.diff"}`
	want := `{"id":7,"number":3,"user":{"login":"bob"},"labels":[{"name":"bug","color":"ee0701"}],` +
		`"head":{"ref":"bob/change","sha":"abc","repo_id":1,"repo":{"full_name":"alice/demo"}},` +
		`"base":{"label":"bob:main","ref":"main"},"assignees":[{"login":"carol","full_name":"Carol C"}],"mergeable":false,"merged":false,"html_url":"http://x/alice/demo/pulls/3"}`
	for _, tc := range []struct{ op, body, want string }{
		{"repoGetPullRequest", pr, want},
		{"repoListPullRequests", "[" + pr + "," + pr + "]", "[" + want + "," + want + "]"},
		// a repository at the top keeps its members; its owner shrinks
		{"repoGet", `{"id":1,"full_name":"alice/demo","owner":{"login":"alice","email":"a@x"},"permissions":{"admin":true,"push":true,"pull":true},"parent":null}`,
			`{"id":1,"full_name":"alice/demo","owner":{"login":"alice"},"permissions":{"admin":true,"push":true,"pull":true}}`},
		// search results wrap top-level repositories
		{"repoSearch", `{"ok":true,"data":[{"id":1,"full_name":"alice/demo","description":"d","owner":{"login":"alice","id":1}}]}`,
			`{"ok":true,"data":[{"id":1,"full_name":"alice/demo","description":"d","owner":{"login":"alice"}}]}`},
		// a directory listing is an array where the document says object
		{"repoGetContents", `[{"name":"a.go","path":"src/a.go","sha":"s","type":"file","size":3,"url":"u","git_url":"g","download_url":"d","_links":{"self":"u"},"content":null}]`,
			`[{"name":"a.go","path":"src/a.go","sha":"s","type":"file","size":3}]`},
		// a webhook's config is a free-form map: its url is kept
		{"repoGetHook", `{"id":1,"config":{"url":"http://hook","content_type":"json"},"events":["push"]}`,
			`{"id":1,"config":{"url":"http://hook","content_type":"json"},"events":["push"]}`},
	} {
		ex := &sent{status: 200, header: http.Header{"Content-Type": {"application/json"}}, class: jsonBody, body: []byte(tc.body)}
		if view := s.exec.compact(s.cat.byID[tc.op], ex, false); view != compactView {
			t.Errorf("%s: view %q", tc.op, view)
		}
		if diff := cmp.Diff(tc.want, string(ex.body)); diff != "" {
			t.Errorf("%s: mismatch (-want +got):\n%s", tc.op, diff)
		}
	}
}

// TestCompactLeftWhole shows the answers that are not projected: full asked
// for, GITEA_MCP_RESULTS=full, errors, text, and JSON that is not valid.
func TestCompactLeftWhole(t *testing.T) {
	t.Parallel()
	body := `{"id":1,"owner":{"login":"alice","id":1},"clone_url":"http://x"}`
	full := testServer(t, map[string]string{"GITEA_MCP_RESULTS": "full"})
	s := testServer(t, nil)
	for _, tc := range []struct {
		name   string
		s      *server
		full   bool
		status int
		ct     string
		body   string
	}{
		{"full asked", s, true, 200, "application/json", body},
		{"GITEA_MCP_RESULTS=full", full, false, 200, "application/json", body},
		{"error", s, false, 404, "application/json", body},
		{"text", s, false, 200, "text/plain", body},
		{"cut short", s, false, 200, "application/json", body[:len(body)-1]},
		{"bad dropped value", s, false, 200, "application/json", `{"id":1,"clone_url":"x\q"}`},
		{"trailing comma", s, false, 200, "application/json", `[{"id":1},]`},
		{"garbage after", s, false, 200, "application/json", `[{"id":1}]]`},
		{"scalar", s, false, 200, "application/json", `"x"`},
		{"raw control character in a key", s, false, 200, "application/json", "{\"id\":1,\"na\x01me\":1}"},
		{"raw control character in a value", s, false, 200, "application/json", "{\"id\":1,\"clone_url\":\"\x01\"}"},
		{"form feed after", s, false, 200, "application/json", "{\"id\":1}\f"},
		{"no-break space before", s, false, 200, "application/json", "\u00a0{\"id\":1}"},
	} {
		ex := &sent{status: tc.status, header: http.Header{"Content-Type": {tc.ct}}, class: classifyMedia(tc.ct), body: []byte(tc.body)}
		if view := tc.s.exec.compact(s.cat.byID["repoGet"], ex, tc.full); view != "" || string(ex.body) != tc.body {
			t.Errorf("%s: view %q, body %s", tc.name, view, ex.body)
		}
	}
	if _, err := newServer(func(k string) string { return map[string]string{"GITEA_MCP_RESULTS": "short"}[k] }); err == nil ||
		err.Error() != `GITEA_MCP_RESULTS "short": want compact or full` {
		t.Errorf("GITEA_MCP_RESULTS=short: %v", err)
	}
}

// TestCompactEveryResponse compiles the shape of every operation and
// projects a sample answer, so that no definition breaks the projection.
func TestCompactEveryResponse(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	described := 0
	for _, op := range s.cat.ops {
		if op.compactShape() != nil {
			described++
		}
		ex := &sent{status: 200, header: http.Header{"Content-Type": {"application/json"}}, class: jsonBody,
			body: []byte(`[{"id":1,"user":{"login":"a","id":2},"repo":{"full_name":"a/b","id":3},"x":[[{}]],"y":null}]`)}
		s.exec.compact(op, ex, false)
		if !json.Valid(ex.body) {
			t.Errorf("%s: projection is not JSON: %s", op.ID, ex.body)
		}
	}
	if described < len(s.cat.ops)/2 {
		t.Errorf("only %d of %d operations have a compact shape", described, len(s.cat.ops))
	}
}

// FuzzCompact projects arbitrary JSON along a pull request's shape: the
// output is always valid JSON.
func FuzzCompact(f *testing.F) {
	f.Add(`{"user":{"login":"a"},"head":{"repo":{"full_name":"x"}},"labels":[{"name":"b"}]}`)
	f.Add(`[1,"x",null,{"a":[]}]`)
	s := testServer(f, nil)
	op := s.cat.byID["repoGetPullRequest"]
	f.Fuzz(func(t *testing.T, body string) {
		ex := &sent{status: 200, header: http.Header{"Content-Type": {"application/json"}}, class: jsonBody, body: []byte(body)}
		s.exec.compact(op, ex, false)
		if valid := json.Valid([]byte(body)); valid && !json.Valid(ex.body) || !valid && json.Valid(ex.body) {
			t.Errorf("%s (valid %v) -> %s", body, valid, ex.body)
		}
	})
}

// BenchmarkCompactPipeline runs the projection alone, then the result
// pipeline with and without it, on the 1 MB issue list of
// BenchmarkResultPipeline, with the same bounds ("whole" keeps all of it,
// "default" the default bounds). Besides wall-clock MB/s it reports cpu-MB/s,
// the bytes per second of process CPU time, which a machine shared with
// other work does not skew, and how much of the list the compact view keeps.
func BenchmarkCompactPipeline(b *testing.B) {
	raw := benchCorpus(b)
	whole := map[string]string{"MAX_TOOL_RESPONSE_ITEMS": "1000000", "MAX_TOOL_RESPONSE_CHARS": "4000000"}
	for _, bc := range []struct {
		name              string
		env               map[string]string
		project, pipeline bool
	}{
		{"projection", whole, true, false},
		{"whole", whole, true, true},
		{"whole-unprojected", whole, false, true},
		{"default", nil, true, true},
		{"default-unprojected", nil, false, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := testServer(b, bc.env)
			s.exec.self.me = account{Login: "bench"}
			op := s.cat.byID["issueListIssues"]
			red := newRedactor("0123456789abcdef0123456789abcdef01234567", "hunter22")
			b.SetBytes(int64(len(raw)))
			kept := len(raw)
			cpu := cpuTime()
			for b.Loop() {
				ex := &sent{method: "GET", path: "/repos/o/r/issues", status: 200, body: raw,
					header: http.Header{"Content-Type": {"application/json;charset=utf-8"}, "X-Total-Count": {"900"}}, class: jsonBody}
				if bc.project && s.exec.compact(op, ex, false) == "" {
					b.Fatal("not projected")
				}
				kept = len(ex.body)
				if !bc.pipeline {
					continue
				}
				if res := s.exec.result(b.Context(), op, ex, red, false); res.Error != nil || strings.Contains(res.text(), "hunter22") {
					b.Fatal(res)
				}
			}
			b.ReportMetric(float64(len(raw))*float64(b.N)/(cpuTime()-cpu).Seconds()/1e6, "cpu-MB/s")
			b.ReportMetric(100*float64(kept)/float64(len(raw)), "%kept")
		})
	}
}

// cpuTime returns the CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestCompactThenScrubbed shows that redaction and masking run on the
// compact view: a token in a kept member is redacted, an access token's sha1
// is still told apart by its empty scopes and masked.
func TestCompactThenScrubbed(t *testing.T) {
	t.Parallel()
	const token = "0123456789abcdef0123456789abcdef01234567"
	s := testServer(t, map[string]string{"GITEA_TOKEN": token})
	s.exec.self.me = account{Login: "alice"}
	for _, tc := range []struct{ op, body, want string }{
		{"issueGetIssue", `{"number":1,"title":"leak ` + token + `","user":{"login":"bob","email":"` + token + `"}}`,
			`{"number":1,"title":"leak [REDACTED]","user":{"login":"bob"}}`},
		{"userGetTokens", `[{"id":1,"name":"ci","sha1":"` + strings.Repeat("ab", 20) + `","token_last_eight":"","scopes":[]}]`,
			`[{"id":1,"name":"ci","sha1":"[MASKED]","token_last_eight":"","scopes":[]}]`},
	} {
		ex := &sent{status: 200, header: http.Header{"Content-Type": {"application/json"}}, class: jsonBody, body: []byte(tc.body)}
		s.exec.compact(s.cat.byID[tc.op], ex, false)
		env := s.exec.result(t.Context(), s.cat.byID[tc.op], ex, newRedactor(token), false)
		if text := env.text(); !strings.HasSuffix(text, `"data":`+tc.want+"}") || env.Error != nil {
			t.Errorf("%s: %s, want data %s", tc.op, text, tc.want)
		}
	}
}
