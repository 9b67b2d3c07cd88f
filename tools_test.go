package main

import (
	"strings"

	"github.com/google/go-cmp/cmp"
	"testing"
)

// testServer builds a server from the given settings and waits for its catalog.
func testServer(tb testing.TB, env map[string]string) *server {
	tb.Helper()
	s, err := newServer(func(k string) string { return env[k] })
	if err != nil {
		tb.Fatal(err)
	}
	if err := s.wait(); err != nil {
		tb.Fatal(err)
	}
	return s
}

// maxListBytes is the budget of the default tools/list result in compact JSON.
const maxListBytes = 12 * 1024

func TestDefaultToolsListSize(t *testing.T) {
	res, rerr := testServer(t, nil).listTools(nil)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if n := len(encode(res)); n > maxListBytes {
		t.Errorf("default tools/list is %d bytes, want at most %d", n, maxListBytes)
	}
}

func TestCatalogSettings(t *testing.T) {
	for _, tc := range []struct {
		tools, disabled string
		want            []string // listed tool names
		err             string
	}{
		{tools: "repoGetBranch,issueGetIssue", want: []string{"gitea_find_operations", "gitea_call_operation", "gitea_api_request", "repoGetBranch", "issueGetIssue"}},
		{tools: "repoGetBranch*", disabled: "gitea_api_request", want: []string{"gitea_find_operations", "gitea_call_operation", "repoGetBranch", "repoGetBranchProtection"}},
		{tools: "noSuchOperation", err: `GITEA_MCP_TOOLS: "noSuchOperation" matches no operation`},
		{tools: "[", err: `GITEA_MCP_TOOLS: bad pattern "["`},
	} {
		s, err := newServer(func(k string) string {
			return map[string]string{"GITEA_MCP_TOOLS": tc.tools, "DISABLED_TOOLS": tc.disabled}[k]
		})
		if err == nil {
			err = s.wait()
		}
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: error %v, want %q", tc.tools, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tc.tools, err)
		}
		var got []string
		for _, tool := range s.cat.listed {
			got = append(got, tool.name)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%q: mismatch (-want +got):\n%s", tc.tools, diff)
		}
	}
}

func TestDisabledOperationUnreachable(t *testing.T) {
	s := testServer(t, map[string]string{"DISABLED_TOOLS": "repoDeleteBranch,gitea_api_request"})
	res := callOperation(t.Context(), s, nil, map[string]any{"operation": "repoDeleteBranch", "arguments": map[string]any{}})
	if res["isError"] != true {
		t.Errorf("a disabled operation was callable: %v", res)
	}
	found := findOperations(t.Context(), s, nil, map[string]any{"query": "repoDeleteBranch"})
	if text := found["content"].([]any)[0].(map[string]any)["text"].(string); strings.Contains(text, `"operation":"repoDeleteBranch"`) {
		t.Errorf("find offered a disabled operation: %s", text)
	}
	if _, rerr := s.callTool(t.Context(), nil, []byte(`{"name":"gitea_api_request","arguments":{}}`)); rerr == nil || rerr.Code != codeInvalidParams {
		t.Errorf("a disabled tool was callable: %v", rerr)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"GITEA_URL": "ftp://x"}, `GITEA_URL "ftp://x": want http(s)://host[:port][/path]`},
		{map[string]string{"GITEA_URL": "https://user:pw@x"}, `GITEA_URL: must not carry credentials`},
		{map[string]string{"GITEA_TIMEOUT": "soon"}, `GITEA_TIMEOUT "soon": want a positive duration such as 30s`},
		{map[string]string{"GITEA_TOKEN": "abc def"}, `GITEA_TOKEN contains white space`},
	} {
		_, err := loadConfig(func(k string) string { return tc.env[k] })
		if err == nil || err.Error() != tc.want {
			t.Errorf("%v: error %v, want %q", tc.env, err, tc.want)
		}
	}
}

// BenchmarkToolsList reports the size of the default tools/list result.
func BenchmarkToolsList(b *testing.B) {
	s := testServer(b, nil)
	var n int
	for b.Loop() {
		res, _ := s.listTools(nil)
		n = len(encode(res))
	}
	b.ReportMetric(float64(n), "bytes")
}
