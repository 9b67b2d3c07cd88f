package main

// End-to-end tests of rules that were proven only against the scripted
// Gitea: a pull request update by rebase (a force-push of its head), an
// administrator's repository creation under a repository allowlist, and
// references by address and by commit message, each against the real Gitea
// the suite starts, each in scratch repositories of its own.

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// gitCommit is a commit as Gitea's git API describes it: its SHA and its parents'.
type gitCommit struct {
	SHA     string `json:"sha"`
	Parents []struct {
		SHA string `json:"sha"`
	} `json:"parents"`
}

// readCommit reads commit sha of repo straight from Gitea.
func readCommit(t *testing.T, g *giteaInstance, repo, sha string) gitCommit {
	t.Helper()
	var c gitCommit
	s := &giteaSetup{g: g}
	s.call("alice", "GET", "/repos/"+repo+"/git/commits/"+sha+"?stat=false&files=false&verification=false", nil, http.StatusOK, &c)
	if s.err != nil {
		t.Fatal(s.err)
	}
	return c
}

// branchCommits lists the SHAs of up to 50 commits reachable from branch.
func branchCommits(t *testing.T, g *giteaInstance, repo, branch string) []string {
	t.Helper()
	var list []gitCommit
	s := &giteaSetup{g: g}
	s.call("alice", "GET", "/repos/"+repo+"/commits?sha="+branch+"&limit=50&stat=false&files=false&verification=false", nil, http.StatusOK, &list)
	if s.err != nil {
		t.Fatal(s.err)
	}
	var shas []string
	for _, c := range list {
		shas = append(shas, c.SHA)
	}
	return shas
}

// fileOps is the files member of a repoChangeFiles body creating one file.
func fileOps(path string) []map[string]string {
	return []map[string]string{{"operation": "create", "path": path, "content": base64.StdEncoding.EncodeToString([]byte(path + "\n"))}}
}

// TestE2ERebaseUpdate: updating a pull request with style=rebase really
// force-pushes its head on Gitea (the new head does not descend from the old
// one), where style=merge adds a merge commit on top of it. gitea-author,
// without gitea.branch.delete, is refused the rebase on every door and the
// head stays where it was; the merge update is its to make, and gitea-owner
// makes the rebase.
func TestE2ERebaseUpdate(t *testing.T) {
	t.Parallel()
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rebase", false)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	var prs [2]struct{ Number int }
	for i, topic := range []string{"topic1", "topic2"} {
		s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": topic, "message": topic, "files": fileOps(topic + ".txt")}, http.StatusCreated, nil)
		s.call("bob", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": topic, "base": "main", "title": topic}, http.StatusCreated, &prs[i])
	}
	s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "message": "base moves on", "files": fileOps("base.txt")}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	mainSHA := branchSHA(t, g, repo, "main")
	rebasePR, mergePR := prs[0].Number, prs[1].Number
	head1, head2 := branchSHA(t, g, repo, "topic1"), branchSHA(t, g, repo, "topic2")
	update := func(pr int) string { return fmt.Sprintf("/repos/%s/pulls/%d/update", repo, pr) }
	args := func(pr int, style string) map[string]any {
		return map[string]any{"owner": owner, "repo": name, "index": pr, "style": style}
	}

	author := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=gitea-author", effectTools)
	for _, door := range []struct {
		name, tool, kind string
		args             map[string]any
	}{
		{"generated", "repoUpdatePullRequest", "permission_denied", args(rebasePR, "rebase")},
		{"call", "gitea_call_operation", "permission_denied", map[string]any{"operation": "repoUpdatePullRequest", "arguments": args(rebasePR, "rebase")}},
		{"raw query", "gitea_api_request", "permission_denied", map[string]any{"method": "POST", "path": update(rebasePR), "query": map[string]any{"style": "rebase"}}},
		// A query in the path is refused before any policy question.
		{"raw path", "gitea_api_request", "invalid_request", map[string]any{"method": "POST", "path": update(rebasePR) + "?style=rebase"}},
		{"raw both", "gitea_api_request", "invalid_request", map[string]any{"method": "POST", "path": update(rebasePR) + "?style=rebase", "query": map[string]any{"style": "merge"}}},
	} {
		res, isErr := author.callTool(door.tool, door.args)
		if !isErr || str(get(res, "error.kind")) != door.kind {
			t.Errorf("%s: want %s: %v", door.name, door.kind, res)
			continue
		}
		if perm := str(get(res, "error.permission_report.required_permission")); door.kind == "permission_denied" && perm != "gitea.branch.delete" {
			t.Errorf("%s: required %q, want gitea.branch.delete: %v", door.name, perm, res)
		}
	}
	if after := branchSHA(t, g, repo, "topic1"); after != head1 {
		t.Fatalf("a refused rebase moved topic1 from %s to %s", head1, after)
	}

	// retry sends an update while Gitea still checks the pull request after the base moved.
	retry := func(c *client, tool string, a map[string]any) (map[string]any, bool) {
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			res, isErr := c.callTool(tool, a)
			if !isErr || str(get(res, "error.kind")) == "permission_denied" || time.Now().After(deadline) {
				return res, isErr
			}
		}
	}
	// style=merge: a merge commit on top of the old head, whose parents are
	// the old head and the base: nothing of the branch is discarded.
	if res, isErr := retry(author, "repoUpdatePullRequest", args(mergePR, "merge")); isErr {
		t.Fatalf("style=merge under gitea-author: %v", res)
	}
	merged := readCommit(t, g, repo, branchSHA(t, g, repo, "topic2"))
	var parents []string
	for _, p := range merged.Parents {
		parents = append(parents, p.SHA)
	}
	if !slices.Contains(parents, head2) || !slices.Contains(parents, mainSHA) || len(parents) != 2 {
		t.Errorf("style=merge: head %s has parents %v, want the old head %s and main %s", merged.SHA, parents, head2, mainSHA)
	}

	// style=rebase: the head is replaced by a copy of its commit on the new
	// base; the old head is no longer on the branch (a force-push).
	owner1 := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-owner", effectTools)
	if res, isErr := retry(owner1, "gitea_api_request", map[string]any{"method": "POST", "path": update(rebasePR), "query": map[string]any{"style": "rebase"}}); isErr {
		t.Fatalf("style=rebase under gitea-owner: %v", res)
	}
	rebased := readCommit(t, g, repo, branchSHA(t, g, repo, "topic1"))
	if rebased.SHA == head1 || len(rebased.Parents) != 1 || rebased.Parents[0].SHA != mainSHA {
		t.Errorf("style=rebase: head %s with parents %v, want a new commit on main %s (old head %s)", rebased.SHA, rebased.Parents, mainSHA, head1)
	}
	if slices.Contains(branchCommits(t, g, repo, "topic1"), head1) {
		t.Errorf("style=rebase: the old head %s is still an ancestor of topic1", head1)
	}
}

// TestE2EAdminCreateRepo: adminCreateRepo creates {username}/{name}. Under
// a repository allowlist an administrator's profile is refused a name or a
// user outside the list on every door, and a body spelling the name's key in
// another case (which Gitea's encoding/json reads as name) is refused as an
// unknown member; none of those repositories exists afterwards. A name in the
// list is created.
func TestE2EAdminCreateRepo(t *testing.T) {
	t.Parallel()
	g := needGitea(t)
	suffix := strings.ToLower(rand.Text()[:8])
	in, out := "adm-in-"+suffix, "adm-out-"+suffix
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"admin-one","repositories":["bob/`+in+`"],
		"allowed_operations":["gitea.read","gitea.admin.user"]}]}`), 0o600)
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=admin-one", "GITEA_MCP_CONFIG="+config, "GITEA_MCP_TOOLS=adminCreateRepo")
	t.Cleanup(func() {
		for _, r := range []string{"bob/" + in, "bob/" + out, "carol/" + in} {
			g.api("alice", "DELETE", "/repos/"+r, nil)
		}
	})
	// doors are the three ways to the operation, whose body parameter is "repository".
	doors := func(user string, body map[string]any) []struct {
		name, tool string
		args       map[string]any
	} {
		args := map[string]any{"username": user, "repository": body}
		return []struct {
			name, tool string
			args       map[string]any
		}{
			{"generated", "adminCreateRepo", args},
			{"call", "gitea_call_operation", map[string]any{"operation": "adminCreateRepo", "arguments": args}},
			{"raw", "gitea_api_request", map[string]any{"method": "POST", "path": "/admin/users/" + user + "/repos", "body": body}},
		}
	}
	for _, tc := range []struct{ user, name string }{{"bob", out}, {"carol", in}, {"bob", "../" + in}} {
		for _, d := range doors(tc.user, map[string]any{"name": tc.name}) {
			res, isErr := c.callTool(d.tool, d.args)
			if reason := str(get(res, "error.permission_report.reason")); !isErr || !strings.Contains(reason, fmt.Sprintf("adminCreateRepo creates %q, outside the repositories of admin-one", tc.user+"/"+tc.name)) {
				t.Errorf("%s %s/%s: want permission_denied naming it: %v", d.name, tc.user, tc.name, res)
			}
		}
	}
	for _, body := range []map[string]any{{"Name": out}, {"nAme": out}, {"NAME": out}, {"name": in, "Name": out}, {"Name": in, "name": out}} {
		for _, d := range doors("bob", body) {
			res, isErr := c.callTool(d.tool, d.args)
			if !isErr || str(get(res, "error.kind")) != "invalid_arguments" || !strings.Contains(str(get(res, "error.message")), `did you mean "name"?`) {
				t.Errorf("%s %v: want invalid_arguments naming name: %v", d.name, body, res)
			}
		}
	}
	for _, r := range []string{"bob/" + out, "carol/" + in} {
		if status, _, _, _ := g.api("alice", "GET", "/repos/"+r, nil); status != http.StatusNotFound {
			t.Errorf("%s exists after the refusals: status %d", r, status)
		}
	}
	// The control: Gitea does read a folded key as name.
	if status, _, data, err := g.api("alice", "POST", "/admin/users/carol/repos", map[string]any{"nAme": in}); err != nil || status != http.StatusCreated {
		t.Fatalf("control: nAme sent straight to Gitea: %d %v %s", status, err, data)
	}
	if status, _, _, _ := g.api("alice", "GET", "/repos/carol/"+in, nil); status != http.StatusOK {
		t.Errorf("control: nAme did not create carol/%s: status %d", in, status)
	}
	if res, isErr := c.callTool("adminCreateRepo", doors("BOB", map[string]any{"name": in})[0].args); isErr {
		t.Errorf("a name in the list: %v", res)
	}
	if status, _, _, _ := g.api("alice", "GET", "/repos/bob/"+in, nil); status != http.StatusOK {
		t.Errorf("bob/%s was not created: status %d", in, status)
	}
}

// timeline returns the events Gitea recorded on issue number of repo.
func timeline(t *testing.T, g *giteaInstance, repo string, number int) []map[string]any {
	t.Helper()
	var events []map[string]any
	status, _, data, err := g.api("alice", "GET", fmt.Sprintf("/repos/%s/issues/%d/timeline", repo, number), nil)
	if err != nil || status != http.StatusOK || json.Unmarshal(data, &events) != nil {
		t.Fatalf("timeline of %s#%d: %d %v %.300s", repo, number, status, err, data)
	}
	return events
}

// issueState reads the state of issue number of repo: open or closed.
func issueState(t *testing.T, g *giteaInstance, repo string, number int) string {
	t.Helper()
	var issue struct{ State string }
	s := &giteaSetup{g: g}
	s.call("alice", "GET", fmt.Sprintf("/repos/%s/issues/%d", repo, number), nil, http.StatusOK, &issue)
	if s.err != nil {
		t.Fatal(s.err)
	}
	return issue.State
}

// mergeRetry merges pull request number of repo straight on Gitea as login,
// retrying while Gitea still checks whether it can be merged.
func mergeRetry(t *testing.T, g *giteaInstance, login, repo string, number int) {
	t.Helper()
	path := fmt.Sprintf("/repos/%s/pulls/%d/merge", repo, number)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		status, _, data, err := g.api(login, "POST", path, map[string]any{"do": "merge", "delete_branch_after_merge": false})
		if err == nil && status == http.StatusOK {
			return
		}
		if err != nil || status != http.StatusMethodNotAllowed || time.Now().After(deadline) {
			t.Fatalf("merge %s: %d %v %s", path, status, err, data)
		}
	}
}

// TestE2EURLReference: references by an issue's address, and by the
// message of a commit, reach as far on Gitea as owner/name#N does. Under a
// repository allowlist a comment, a merge message, a commit written through
// the server, and the merge of a pull request whose description or commits
// (written around the server) name an issue outside the list, by its address
// or as owner/name#N, are refused. A commit message naming any issue needs
// gitea.issue.close (gitea-author is refused), since Gitea closes it after a
// closing keyword once the commit reaches the default branch. Nothing reaches
// the issues; the control, sent straight to Gitea, records and closes.
func TestE2EURLReference(t *testing.T) {
	t.Parallel()
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "urlref", false)
	secret, _ := scratchRepo(t, g, "secret", true)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	var local, far struct{ Number int }
	s.call("alice", "POST", "/repos/"+repo+"/issues", map[string]any{"title": "local"}, http.StatusCreated, &local)
	s.call("alice", "POST", "/repos/"+secret+"/issues", map[string]any{"title": "far"}, http.StatusCreated, &far)
	if s.err != nil {
		t.Fatal(s.err)
	}
	farURL := fmt.Sprintf("%s/%s/issues/%d", g.URL, secret, far.Number)
	localURL := fmt.Sprintf("%s/%s/issues/%d", g.URL, repo, local.Number)
	port := g.URL[strings.LastIndex(g.URL, ":"):]
	// In a comment or description Gitea reads all but the localhost one as a
	// reference (a link's number with strconv.ParseInt: +N is N); in a commit
	// message only the ROOT_URL address and owner/name#N. The policy refuses
	// them all alike.
	plusLink := fmt.Sprintf("closes [far](/%s/issues/+%d)", secret, far.Number)
	farRefs := []string{
		"closes " + farURL,
		fmt.Sprintf("closes [far](/%s/issues/%d)", secret, far.Number),
		plusLink,
		fmt.Sprintf("closes <HTTP://127.0.0.1%s/%s/pulls/%d>", port, secret, far.Number),
		fmt.Sprintf("closes http://localhost%s/%s/issues/%d", port, secret, far.Number),
		fmt.Sprintf("closes %s#%d", secret, far.Number),
	}

	// Straight to Gitea, around the server: a pull request whose description
	// names the issue outside by a link to its address (as +N), and one whose
	// commit closes both issues. Gitea records a reference in each issue.
	var plain, described, around struct {
		Number int
		Head   struct{ SHA string }
	}
	for _, pr := range []struct {
		branch, message, body string
		out                   any
	}{
		{"plain", "plain", "", &plain},
		{"described", "described", plusLink, &described},
		{"around", fmt.Sprintf("around\n\ncloses #%d\ncloses %s", local.Number, farURL), "", &around},
	} {
		s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": pr.branch, "message": pr.message, "files": fileOps(pr.branch + ".txt")}, http.StatusCreated, nil)
		s.call("bob", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": pr.branch, "base": "main", "title": pr.branch, "body": pr.body}, http.StatusCreated, pr.out)
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	// events waits up to 15 s for the event types of issue number of repo to
	// be want: Gitea records a pushed commit's references from a queue.
	events := func(repo string, number int, want ...string) []string {
		var got []string
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			got = nil
			for _, e := range timeline(t, g, repo, number) {
				got = append(got, str(e["type"]))
			}
			if slices.Equal(got, want) || time.Now().After(deadline) {
				return got
			}
		}
	}
	if got := events(secret, far.Number, "pull_ref", "commit_ref"); !slices.Equal(got, []string{"pull_ref", "commit_ref"}) {
		t.Errorf("control: straight to Gitea, the description and the commit left %v in %s#%d, want pull_ref and commit_ref", got, secret, far.Number)
	}
	if got := events(repo, local.Number, "commit_ref"); !slices.Equal(got, []string{"commit_ref"}) {
		t.Errorf("control: straight to Gitea, the commit left %v in %s#%d, want commit_ref", got, repo, local.Number)
	}

	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"url-one","repositories":["`+repo+`"],
		"allowed_operations":["gitea.read","gitea.issue.comment","gitea.issue.close","gitea.pr.merge","gitea.repo.commit","gitea.branch.create"]}]}`), 0o600)
	c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=url-one", "GITEA_MCP_CONFIG="+config, "GITEA_MCP_TOOLS=issueCreateComment,repoMergePullRequest,repoChangeFiles")
	outside := fmt.Sprintf("names %q, outside the repositories of url-one", secret)
	merge := func(number int, head string, body map[string]any) (string, map[string]any) {
		body["do"], body["head_commit_id"], body["delete_branch_after_merge"] = "merge", head, false
		return fmt.Sprintf("/repos/%s/pulls/%d/merge", repo, number), map[string]any{"owner": owner, "repo": name, "index": number, "body": body}
	}
	// (a) A comment, a merge message, a commit written through the server.
	for _, ref := range farRefs {
		wantDenied(t, c, "issueCreateComment", "POST", fmt.Sprintf("/repos/%s/issues/%d/comments", repo, local.Number),
			map[string]any{"owner": owner, "repo": name, "index": local.Number, "body": map[string]any{"body": ref}}, "gitea.issue.comment", outside)
		path, args := merge(plain.Number, plain.Head.SHA, map[string]any{"merge_message_field": ref})
		wantDenied(t, c, "repoMergePullRequest", "POST", path, args, "gitea.pr.merge", outside)
		wantDenied(t, c, "repoChangeFiles", "POST", "/repos/"+repo+"/contents",
			map[string]any{"owner": owner, "repo": name, "body": map[string]any{"branch": "main", "new_branch": "far-" + strings.ToLower(rand.Text()[:6]), "message": ref, "files": fileOps("far.txt")}},
			"gitea.repo.commit", outside)
	}
	// (b) Merging what was written around the server.
	path, args := merge(described.Number, described.Head.SHA, map[string]any{})
	wantDenied(t, c, "repoMergePullRequest", "POST", path, args, "gitea.pr.merge", fmt.Sprintf("description references %q, outside the repositories of url-one", secret))
	path, args = merge(around.Number, around.Head.SHA, map[string]any{})
	wantDenied(t, c, "repoMergePullRequest", "POST", path, args, "gitea.pr.merge", fmt.Sprintf("puts on a branch reference %q, outside the repositories of url-one", secret))

	// A commit message naming an issue of the repository needs gitea.issue.close.
	author := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=gitea-author", "GITEA_MCP_TOOLS=repoCreateFile")
	for _, msg := range []string{fmt.Sprintf("closes #%d", local.Number), "closes " + localURL} {
		file := "local-" + strings.ToLower(rand.Text()[:6]) + ".txt"
		wantDenied(t, author, "repoCreateFile", "POST", "/repos/"+repo+"/contents/"+file,
			map[string]any{"owner": owner, "repo": name, "filepath": file, "body": map[string]any{"new_branch": file, "message": msg, "content": ""}},
			"gitea.issue.close", "Gitea closes the issues it names after a closing keyword")
		res, isErr := author.callTool("gitea_write_file", map[string]any{"owner": owner, "repo": name, "path": file, "branch": "plain", "text": "x", "message": msg})
		if !isErr || str(get(res, "error.permission_report.required_permission")) != "gitea.issue.close" {
			t.Errorf("gitea_write_file %q under gitea-author: %v", msg, res)
		}
	}

	for _, issue := range []struct {
		repo   string
		number int
	}{{repo, local.Number}, {secret, far.Number}} {
		if state := issueState(t, g, issue.repo, issue.number); state != "open" {
			t.Errorf("%s#%d is %s after the refusals", issue.repo, issue.number, state)
		}
	}
	// The control: the merge sent straight to Gitea closes both; and, as
	// Gitea records from one queue, nothing refused above left an event
	// before the merge's.
	mergeRetry(t, g, "carol", repo, around.Number)
	if got := events(secret, far.Number, "pull_ref", "commit_ref", "close"); !slices.Equal(got, []string{"pull_ref", "commit_ref", "close"}) {
		t.Errorf("%s#%d after the merge sent straight to Gitea: %v, want pull_ref, commit_ref and close", secret, far.Number, got)
	}
	if got := events(repo, local.Number, "commit_ref", "close"); !slices.Equal(got, []string{"commit_ref", "close"}) {
		t.Errorf("%s#%d after the merge sent straight to Gitea: %v, want commit_ref and close", repo, local.Number, got)
	}
}
