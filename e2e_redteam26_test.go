package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestE2ERedteam26PickedUpCommitsClose: found by the red team. Gitea closes
// the issues the commits a push brings onto a branch name after a closing
// keyword, as the pusher, where the branch is the one the issue's ref names
// (services/issue/commit.go UpdateIssuesCommit, of the commits
// services/repository/push.go reads: old..new of a moved branch, a new
// branch's latest ten back to the first on another one). A contents write's
// own message naming an issue needs gitea.issue.close, but the commits a
// write picks up from elsewhere were not read. Before the fix bob, under
// gitea-author (no gitea.issue.close), closed three issues: moving feature
// to alice's commit "fixes #A" (repoUpdateBranch), updating the pull
// request of topic with a base holding "fixes #B" (repoUpdatePullRequest),
// and creating fresh from a tag on "fixes #C" (repoCreateBranch). A base
// whose new commits name only a pull request (Gitea's merge commit, "(#N)")
// still updates a pull request: Gitea closes no pull request by a commit.
func TestE2ERedteam26PickedUpCommitsClose(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt26pick", false)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	var issues [3]struct{ Number int }
	for i, ref := range []string{"feature", "topic", "fresh"} {
		s.call("alice", "POST", "/repos/"+repo+"/issues", map[string]any{"title": "on " + ref, "ref": "refs/heads/" + ref}, http.StatusCreated, &issues[i])
	}
	a, b, c := issues[0].Number, issues[1].Number, issues[2].Number
	var moved, loose struct{ Commit struct{ SHA string } }
	s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "feature", "message": "feature work", "files": fileOps("f.txt")}, http.StatusCreated, nil)
	s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "feature", "new_branch": "side", "message": fmt.Sprintf("fixes #%d", a), "files": fileOps("s.txt")}, http.StatusCreated, &moved)
	var pr, pr2, other struct{ Number int }
	s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "topic", "message": "topic work", "files": fileOps("t.txt")}, http.StatusCreated, nil)
	s.call("bob", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "topic", "base": "main", "title": "topic"}, http.StatusCreated, &pr)
	s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "message": fmt.Sprintf("fixes #%d", b), "files": fileOps("b.txt")}, http.StatusCreated, nil)
	s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "tmp", "message": fmt.Sprintf("fixes #%d", c), "files": fileOps("c.txt")}, http.StatusCreated, &loose)
	s.call("alice", "POST", "/repos/"+repo+"/tags", map[string]any{"tag_name": "v-c", "target": loose.Commit.SHA}, http.StatusCreated, nil)
	s.call("alice", "DELETE", "/repos/"+repo+"/branches/tmp", nil, http.StatusNoContent, nil)
	// The control: topic2 starts after "fixes #B"; main then gains only a merge naming a pull request.
	s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "topic2", "message": "topic2 work", "files": fileOps("t2.txt")}, http.StatusCreated, nil)
	s.call("bob", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "topic2", "base": "main", "title": "topic2"}, http.StatusCreated, &pr2)
	s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "other", "message": "other work", "files": fileOps("o.txt")}, http.StatusCreated, nil)
	s.call("alice", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "other", "base": "main", "title": "other"}, http.StatusCreated, &other)
	if s.err != nil {
		t.Fatal(s.err)
	}
	mergeRetry(t, g, "alice", repo, other.Number)
	time.Sleep(time.Second) // the setup's pushes are handled from Gitea's queue
	for _, n := range []int{a, b, c} {
		if state := issueState(t, g, repo, n); state != "open" {
			t.Fatalf("setup: %s#%d is %s", repo, n, state)
		}
	}

	author := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=gitea-author", "GITEA_MCP_TOOLS=repoUpdateBranch,repoUpdatePullRequest,repoCreateBranch")
	call := func(op string, args map[string]any) (map[string]any, bool) {
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) { // Gitea checks a pull request after its base moves
			res, isErr := author.callTool("gitea_call_operation", map[string]any{"operation": op, "arguments": args})
			if !isErr || str(get(res, "error.kind")) == "permission_denied" || time.Now().After(deadline) {
				return res, isErr
			}
		}
	}
	for _, w := range []struct {
		op    string
		args  map[string]any
		issue int
	}{
		{"repoUpdateBranch", map[string]any{"owner": owner, "repo": name, "branch": "feature", "body": map[string]any{"new_commit_id": moved.Commit.SHA}}, a},
		{"repoUpdatePullRequest", map[string]any{"owner": owner, "repo": name, "index": pr.Number, "style": "merge"}, b},
		{"repoCreateBranch", map[string]any{"owner": owner, "repo": name, "body": map[string]any{"new_branch_name": "fresh", "old_ref_name": "v-c"}}, c},
	} {
		res, isErr := call(w.op, w.args)
		if !isErr || str(get(res, "error.permission_report.required_permission")) != "gitea.issue.close" ||
			!strings.Contains(str(get(res, "error.permission_report.reason")), fmt.Sprintf("%s#%d", repo, w.issue)) {
			t.Errorf("%s under gitea-author: %v; want it refused for %s#%d", w.op, res, repo, w.issue)
		}
		time.Sleep(time.Second) // a push, had one been made, is handled from Gitea's queue
		if state := issueState(t, g, repo, w.issue); state != "open" {
			t.Errorf("after %s under gitea-author %s#%d is %s", w.op, repo, w.issue, state)
		}
	}
	if res, isErr := call("repoUpdatePullRequest", map[string]any{"owner": owner, "repo": name, "index": pr2.Number, "style": "merge"}); isErr {
		t.Errorf("updating !%d, whose base gained only a merge naming !%d: %v", pr2.Number, other.Number, res)
	}
}
