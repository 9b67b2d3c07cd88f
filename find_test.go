package main

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFindRecall runs the query set of testdata/find/queries.txt through the
// search and reports recall at 1 and at 3; it fails below 95% at 3.
func TestFindRecall(t *testing.T) {
	t.Parallel()
	f, err := os.Open("testdata/find/queries.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := testServer(t, map[string]string{"GITEA_MCP_PROFILE": "gitea-owner", "GITEA_TOKEN": fakeToken})
	n, at1, at3 := 0, 0, 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		query, want, ok := strings.Cut(sc.Text(), "\t")
		if !ok || strings.HasPrefix(query, "#") {
			continue
		}
		if _, known := s.cat.byID[want]; !known {
			t.Errorf("%q: no operation %q", query, want)
		}
		n++
		hits := s.rank(query)
		var top []string
		for _, h := range hits[:min(3, len(hits))] {
			top = append(top, h.op.ID)
		}
		switch i := indexOf(top, want); {
		case i == 0:
			at1++
			at3++
		case i > 0:
			at3++
		default:
			t.Logf("miss: %q wants %s, got %v (terms %v)", query, want, top, findTerms(query))
		}
	}
	r1, r3 := float64(at1)/float64(n), float64(at3)/float64(n)
	t.Logf("%d queries: recall@1 %.1f%%, recall@3 %.1f%%", n, 100*r1, 100*r3)
	if n < 60 || r3 < 0.95 {
		t.Errorf("recall@3 %.1f%% on %d queries, want at least 95%% on at least 60", 100*r3, n)
	}
}

// indexOf returns the position of s in list, or -1.
func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// TestFindSynonyms checks the examples of the findSynonyms table.
func TestFindSynonyms(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"close issue", []string{"edit", "state", "issue"}},
		{"get file contents", []string{"get", "raw", "file"}},
		{"diff of a PR", []string{"diff", "patch", "pull"}},
		{"open issues labelled bug", []string{"list", "issues", "list", "bug"}},
		{"open a pull request", []string{"create", "pull"}},
		{"who am I", []string{"get", "current", "user"}},
	} {
		if diff := cmp.Diff(tc.want, findTerms(tc.query)); diff != "" {
			t.Errorf("%q: mismatch (-want +got):\n%s", tc.query, diff)
		}
	}
}

// TestFindLean shows that a find answer carries a parameter synopsis per
// match and the input schema only when asked or for a single match.
func TestFindLean(t *testing.T) {
	t.Parallel()
	s := testServer(t, map[string]string{"GITEA_MCP_PROFILE": "gitea-owner", "GITEA_TOKEN": fakeToken})
	type match struct {
		Operation   string          `json:"operation"`
		Parameters  string          `json:"parameters"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	find := func(args map[string]any) []match {
		res := findOperations(t.Context(), s, nil, args)
		var out struct{ Data struct{ Matches []match } }
		if err := json.Unmarshal([]byte(res["content"].([]any)[0].(map[string]any)["text"].(string)), &out); err != nil {
			t.Fatal(err)
		}
		return out.Data.Matches
	}
	ms := find(map[string]any{"query": "create pull request"})
	if len(ms) != 3 || ms[0].Operation != "repoCreatePullRequest" || ms[0].InputSchema != nil {
		t.Fatalf("create pull request: %+v", ms)
	}
	if want := "owner, repo, body{allow_maintainer_edit?, assignee?, assignees?, base?, body?, due_date?, head?, labels?, milestone?, reviewers?, team_reviewers?, title?}?"; ms[0].Parameters != want {
		t.Errorf("synopsis %q, want %q", ms[0].Parameters, want)
	}
	if ms := find(map[string]any{"query": "repoGetRawFile"}); len(ms) != 1 || ms[0].InputSchema == nil {
		t.Errorf("an exact operationId gives one match with its schema: %+v", ms)
	}
	for _, m := range find(map[string]any{"query": "merge", "schema": true}) {
		if m.InputSchema == nil {
			t.Errorf("schema: true: %s has no schema", m.Operation)
		}
	}
}
