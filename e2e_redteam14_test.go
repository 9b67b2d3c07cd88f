package main

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
)

// TestE2ERedteam14FetchHead: Gitea fetches a pull request's base commit into
// its head repository (services/git/compare.go GetCompareInfo,
// FetchRemoteCommit), where git keeps it as FETCH_HEAD, and resolves any
// revision git does in git/commits/{sha}, commits?sha=, git/trees, an
// archive's name and a tag's target.
// Found by the red team: a profile limited to bob's fork read, as FETCH_HEAD
// of the fork, the commit alice pushed to her private repository after the
// fork, once bob's pull request into it was opened. Now a ref naming
// FETCH_HEAD is refused under repositories; the control, straight to Gitea,
// reads it.
func TestE2ERedteam14FetchHead(t *testing.T) {
	g := needGitea(t)
	up, _ := scratchRepo(t, g, "rt14up", true)
	_, name, _ := strings.Cut(up, "/")
	fork := forkAs(t, g, "bob", up, name+"-fork")
	_, forkName, _ := strings.Cut(fork, "/")
	s := &giteaSetup{g: g}
	s.call("alice", "POST", "/repos/"+up+"/contents", map[string]any{"branch": "main", "message": "upstream only work",
		"files": []map[string]string{{"operation": "create", "path": "later.txt", "content": base64.StdEncoding.EncodeToString([]byte("upstream only\n"))}}}, http.StatusCreated, nil)
	s.call("bob", "POST", "/repos/"+fork+"/contents", map[string]any{"branch": "main", "new_branch": "feat", "message": "feat", "files": fileOps("feat.txt")}, http.StatusCreated, nil)
	s.call("bob", "POST", "/repos/"+up+"/pulls", map[string]string{"head": "bob:feat", "base": "main", "title": "feat"}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	if _, _, data, _ := g.api("bob", "GET", "/repos/"+fork+"/git/commits/FETCH_HEAD", nil); !strings.Contains(string(data), "upstream only work") {
		t.Fatalf("control: FETCH_HEAD of %s straight from Gitea: %s; want alice's upstream commit", fork, giteaTail(data))
	}
	c := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=forker", "GITEA_MCP_CONFIG="+allowlistConfig(t, "forker", fork, "gitea.release.write"), "GITEA_MCP_TOOLS=all")
	for _, call := range []struct {
		op   string
		args map[string]any
	}{
		{"repoGetSingleCommit", map[string]any{"sha": "FETCH_HEAD"}},
		{"repoGetAllCommits", map[string]any{"sha": "FETCH_HEAD~0"}},
		{"repoDownloadCommitDiffOrPatch", map[string]any{"sha": "FETCH_HEAD", "diffType": "patch"}},
		{"repoGetArchive", map[string]any{"archive": "FETCH_HEAD.tar.gz"}},
		{"GetTree", map[string]any{"sha": "FETCH_HEAD", "recursive": true}},
		{"repoCreateTag", map[string]any{"body": map[string]any{"tag_name": "fetched", "target": "FETCH_HEAD"}}},
	} {
		call.args["owner"], call.args["repo"] = "bob", forkName
		out, isErr := c.callTool("gitea_call_operation", map[string]any{"operation": call.op, "arguments": call.args})
		if !isErr || strings.Contains(str(out), "upstream only") || !strings.Contains(str(get(out, "error.permission_report.reason")), "FETCH_HEAD") {
			t.Errorf("%s %v under forker: isError %v, %.300s; want it refused, naming FETCH_HEAD", call.op, call.args, isErr, str(out))
		}
	}
	for _, q := range []map[string]any{nil, {"sha": "FETCH_HEAD"}} {
		path := map[bool]string{true: "/repos/" + fork + "/git/commits/FETCH_HEAD", false: "/repos/" + fork + "/commits"}[q == nil]
		args := map[string]any{"method": "GET", "path": path}
		if q != nil {
			args["query"] = q
		}
		out, isErr := c.callTool("gitea_api_request", args)
		if !isErr || strings.Contains(str(out), "upstream only") || !strings.Contains(str(get(out, "error.permission_report.reason")), "FETCH_HEAD") {
			t.Errorf("gitea_api_request GET %s %v under forker: isError %v, %.300s; want it refused", path, q, isErr, str(out))
		}
	}
	if st, _, _, _ := g.api("bob", "GET", "/repos/"+fork+"/tags/fetched", nil); st != http.StatusNotFound {
		t.Errorf("tag fetched in %s: status %d; want none", fork, st)
	}
	// Residual (README): given the commit's id, the fork's contents read it.
	var tip struct{ SHA string }
	s.call("alice", "GET", "/repos/"+up+"/git/commits/main", nil, http.StatusOK, &tip)
	out, _ := c.callTool("gitea_call_operation", map[string]any{"operation": "repoGetRawFile", "arguments": map[string]any{"owner": "bob", "repo": forkName, "filepath": "later.txt", "ref": tip.SHA}})
	if s.err != nil || !strings.Contains(str(out), "upstream only") {
		t.Errorf("later.txt of %s at %s under forker: %v %.300s; want the residual README names", fork, tip.SHA, s.err, str(out))
	}
}
