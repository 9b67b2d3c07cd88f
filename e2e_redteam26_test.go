package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
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

// TestE2ERedteam26UpdateHeadsParentPull: found by the red team. Under
// repositories, a push to a fork's branch that heads an open pull request of
// a parent outside them is refused (Gitea pushes the new head there, comments
// the commits and marks the reviews stale: services/pull/pull.go
// AddTestPullRequestTask), but repoUpdatePullRequest of a pull request whose
// head is a branch of the fork itself was not judged by that rule. Before the
// fix bob, under a profile of his fork alone, updated his fork's pull
// request of topic with the fork's main, and Gitea pushed main's commit into
// alice's pull request !N, which topic heads.
func TestE2ERedteam26UpdateHeadsParentPull(t *testing.T) {
	g := needGitea(t)
	upstream, _ := scratchRepo(t, g, "rt26up", false)
	_, upName, _ := strings.Cut(upstream, "/")
	forkName := upName + "-fork"
	fork := "bob/" + forkName
	s := &giteaSetup{g: g}
	s.call("bob", "POST", "/repos/"+upstream+"/forks", map[string]any{"name": forkName}, http.StatusAccepted, nil)
	t.Cleanup(func() { g.api("bob", "DELETE", "/repos/"+fork, nil) })
	s.call("bob", "POST", "/repos/"+fork+"/contents", map[string]any{"branch": "main", "new_branch": "topic", "message": "topic", "files": fileOps("topic.txt")}, http.StatusCreated, nil)
	var parentPR, own struct{ Number int }
	s.call("bob", "POST", "/repos/"+upstream+"/pulls", map[string]string{"head": "bob/" + forkName + ":topic", "base": "main", "title": "topic"}, http.StatusCreated, &parentPR)
	s.call("bob", "POST", "/repos/"+fork+"/pulls", map[string]string{"head": "topic", "base": "main", "title": "topic here"}, http.StatusCreated, &own)
	s.call("bob", "POST", "/repos/"+fork+"/contents", map[string]any{"branch": "main", "message": "fork main moves on", "files": fileOps("main.txt")}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"fork-author","allowed_operations":["gitea.read","gitea.repo.commit","gitea.branch.create","gitea.branch.push","gitea.issue.close"],
		"repositories":["`+fork+`"]}]}`), 0o600)
	c := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=fork-author", "GITEA_MCP_CONFIG="+config, "GITEA_MCP_TOOLS=repoUpdatePullRequest")
	var res map[string]any
	isErr := true
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) { // Gitea checks a pull request after its base moves
		res, isErr = c.callTool("repoUpdatePullRequest", map[string]any{"owner": "bob", "repo": forkName, "index": own.Number, "style": "merge"})
		if !isErr || str(get(res, "error.kind")) == "permission_denied" || time.Now().After(deadline) {
			break
		}
	}
	if !isErr || !strings.Contains(str(get(res, "error.message")), fmt.Sprintf("%s!%d", upstream, parentPR.Number)) {
		t.Errorf("repoUpdatePullRequest of %s!%d under fork-author: %v; want it refused for %s!%d", fork, own.Number, res, upstream, parentPR.Number)
	}
	var files []struct{ Filename string }
	for deadline := time.Now().Add(5 * time.Second); s.err == nil && (len(files) == 0 || !isErr && len(files) == 1 && time.Now().Before(deadline)); time.Sleep(100 * time.Millisecond) {
		s.call("alice", "GET", fmt.Sprintf("/repos/%s/pulls/%d/files", upstream, parentPR.Number), nil, http.StatusOK, &files)
	}
	if len(files) != 1 || s.err != nil {
		t.Errorf("the files of %s!%d after the update: %v (%v); want topic.txt alone", upstream, parentPR.Number, files, s.err)
	}

	// The control: under gitea-author (no gitea.issue.close) bob updates
	// alice's pull request, whose base gained a merge commit naming "(#M)":
	// Gitea reads it in the head's repository, his fork, which has no issues.
	var other struct{ Number int }
	s.call("alice", "POST", "/repos/"+upstream+"/contents", map[string]any{"branch": "main", "new_branch": "other", "message": "other work", "files": fileOps("o.txt")}, http.StatusCreated, nil)
	s.call("alice", "POST", "/repos/"+upstream+"/pulls", map[string]string{"head": "other", "base": "main", "title": "other"}, http.StatusCreated, &other)
	if s.err != nil {
		t.Fatal(s.err)
	}
	mergeRetry(t, g, "alice", upstream, other.Number)
	author := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=gitea-author", "GITEA_MCP_TOOLS=repoUpdatePullRequest")
	owner, name, _ := strings.Cut(upstream, "/")
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		res, isErr = author.callTool("repoUpdatePullRequest", map[string]any{"owner": owner, "repo": name, "index": parentPR.Number, "style": "merge"})
		if !isErr || str(get(res, "error.kind")) == "permission_denied" || time.Now().After(deadline) {
			break
		}
	}
	if isErr {
		t.Errorf("updating %s!%d, whose base gained a merge naming !%d, under gitea-author: %v", upstream, parentPR.Number, other.Number, res)
	}
}

// TestE2ERedteam26SyncedCommitCloses: found by the red team, as
// TestE2ERedteam26PickedUpCommitsClose. Syncing a fork's branch with its
// parent (repoMergeUpstream) pushes the parent's commits into the fork, as
// the caller, and Gitea closes the issues they name where the branch is the
// one the issue's ref names, in whatever repository. Before the fix carol,
// under gitea-author, synced her fork's dev with alice's, whose commit
// "fixes alice/...#N" names an issue of alice's with ref dev (reopened since
// alice's own push closed it), and Gitea closed it again.
func TestE2ERedteam26SyncedCommitCloses(t *testing.T) {
	g := needGitea(t)
	upstream, _ := scratchRepo(t, g, "rt26sync", false)
	_, upName, _ := strings.Cut(upstream, "/")
	fork := "carol/" + upName + "-fork"
	s := &giteaSetup{g: g}
	var issue struct{ Number int }
	s.call("alice", "POST", "/repos/"+upstream+"/issues", map[string]any{"title": "on dev", "ref": "refs/heads/dev"}, http.StatusCreated, &issue)
	s.call("alice", "POST", "/repos/"+upstream+"/contents", map[string]any{"branch": "main", "new_branch": "dev", "message": "dev work", "files": fileOps("d.txt")}, http.StatusCreated, nil)
	s.call("carol", "POST", "/repos/"+upstream+"/forks", map[string]any{"name": upName + "-fork"}, http.StatusAccepted, nil)
	t.Cleanup(func() { g.api("carol", "DELETE", "/repos/"+fork, nil) })
	s.call("alice", "POST", "/repos/"+upstream+"/contents", map[string]any{"branch": "dev", "message": fmt.Sprintf("fixes %s#%d", upstream, issue.Number), "files": fileOps("e.txt")}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	for deadline := time.Now().Add(20 * time.Second); issueState(t, g, upstream, issue.Number) != "closed"; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("control: alice's push to dev left %s#%d open", upstream, issue.Number)
		}
	}
	s.call("alice", "PATCH", fmt.Sprintf("/repos/%s/issues/%d", upstream, issue.Number), map[string]any{"state": "open"}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	owner, name, _ := strings.Cut(fork, "/")
	author := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-author", "GITEA_MCP_TOOLS=repoMergeUpstream")
	res, isErr := author.callTool("repoMergeUpstream", map[string]any{"owner": owner, "repo": name, "body": map[string]any{"branch": "dev"}})
	if !isErr || str(get(res, "error.permission_report.required_permission")) != "gitea.issue.close" {
		t.Errorf("repoMergeUpstream of %s:dev under gitea-author: %v; want it refused for %s#%d", fork, res, upstream, issue.Number)
	}
	time.Sleep(2 * time.Second) // a push, had one been made, is handled from Gitea's queue
	if state := issueState(t, g, upstream, issue.Number); state != "open" {
		t.Errorf("after repoMergeUpstream under gitea-author %s#%d is %s", upstream, issue.Number, state)
	}
}
