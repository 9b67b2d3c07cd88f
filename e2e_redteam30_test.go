package main

import (
	"net/http"
	"strings"
	"testing"
)

// TestE2ERedteam30RepoDeleteUnlinks: found by the red team. Deleting a
// repository deletes its issues as deleting each one does
// (services/issue/issue.go DeleteIssuesByRepoID, deleteIssue: the
// dependency links with them, IssueDependency{DependencyID}) and the
// cross-references its texts made in other repositories' issues
// (services/repository/delete.go, Comment{RefRepoID}). Before the fix
// alice, under a profile limited to a that may administer it, deleted a
// through repoDelete: b#1, outside the list, lost its dependency on a#1
// (a pull request so blocked would merge) and the cross-reference a#1's
// comment made on its timeline. issueDelete was judged by both; repoDelete
// by neither.
func TestE2ERedteam30RepoDeleteUnlinks(t *testing.T) {
	g, a, b, c := redteam17(t, `"gitea.repo.admin"`)
	aOwner, aName, _ := strings.Cut(a, "/")
	deleteA := func(want string) {
		t.Helper()
		res, isErr := c.callTool("gitea_call_operation", map[string]any{"operation": "repoDelete", "arguments": map[string]any{"owner": aOwner, "repo": aName}})
		if reason := str(get(res, "error.permission_report.reason")); !isErr || !strings.Contains(reason, want) {
			t.Errorf("deletion of %s: want a refusal naming %q: %v", a, want, res)
		}
	}
	s := &giteaSetup{g: g}
	dep := map[string]any{"owner": aOwner, "repo": aName, "index": 1}
	if s.call("alice", "POST", "/repos/"+b+"/issues/1/dependencies", dep, http.StatusCreated, nil); s.err != nil {
		t.Fatal(s.err)
	}
	deleteA("dependency link of its #1 with " + b + "#1")
	if _, _, data, err := g.api("alice", "GET", "/repos/"+b+"/issues/1/dependencies", nil); err != nil || !strings.Contains(string(data), `"title":"one"`) {
		t.Errorf("%s#1 no longer depends on %s#1: %v %.300s", b, a, err, data)
	}
	s.call("alice", "DELETE", "/repos/"+b+"/issues/1/dependencies", dep, http.StatusCreated, nil)
	s.call("alice", "POST", "/repos/"+a+"/issues/1/comments", map[string]any{"body": "see " + b + "#1"}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	deleteA("references \"" + b + "\"")
	if _, _, data, err := g.api("alice", "GET", "/repos/"+b+"/issues/1/timeline", nil); err != nil || !strings.Contains(string(data), `"type":"comment_ref"`) {
		t.Errorf("%s#1 lost the cross-reference from %s#1: %v %.400s", b, a, err, data)
	}

	// Without a link or a reference outside, the deletion goes through.
	g2, a2, _, c2 := redteam17(t, `"gitea.repo.admin"`)
	owner2, name2, _ := strings.Cut(a2, "/")
	res, isErr := c2.callTool("gitea_call_operation", map[string]any{"operation": "repoDelete", "arguments": map[string]any{"owner": owner2, "repo": name2}})
	if isErr {
		t.Errorf("deletion of %s, linked with nothing outside: %v", a2, res)
	}
	if status, _, _, _ := g2.api("alice", "GET", "/repos/"+a2, nil); status != http.StatusNotFound {
		t.Errorf("%s still there after its deletion: %d", a2, status)
	}
}
