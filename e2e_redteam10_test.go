package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sameIDs creates an organization owned by orgOwner and a repository owned
// by repoOwner whose ids are equal, creating (and deleting) others until
// they meet, and returns their names, deleted after the test.
func sameIDs(t *testing.T, g *giteaInstance, orgOwner, repoOwner string) (org, repo string) {
	t.Helper()
	s := &giteaSetup{g: g}
	var orgID, repoID int64
	newOrg := func() {
		org = "rt10org-" + strings.ToLower(rand.Text()[:8])
		var o struct{ ID int64 }
		s.call(orgOwner, "POST", "/orgs", map[string]string{"username": org}, http.StatusCreated, &o)
		orgID = o.ID
	}
	newRepo := func() {
		repo = repoOwner + "/rt10repo-" + strings.ToLower(rand.Text()[:8])
		var r struct{ ID int64 }
		s.call(repoOwner, "POST", "/user/repos", map[string]any{"name": strings.TrimPrefix(repo, repoOwner+"/"), "auto_init": true, "private": true}, http.StatusCreated, &r)
		repoID = r.ID
	}
	newOrg()
	newRepo()
	for i := 0; s.err == nil && orgID != repoID && i < 2000; i++ {
		if repoID < orgID {
			g.api(repoOwner, "DELETE", "/repos/"+repo, nil)
			newRepo()
		} else {
			g.api(orgOwner, "DELETE", "/orgs/"+org, nil)
			newOrg()
		}
	}
	o, r := org, repo
	t.Cleanup(func() { g.api(repoOwner, "DELETE", "/repos/"+r, nil); g.api(orgOwner, "DELETE", "/orgs/"+o, nil) })
	if s.err == nil && orgID != repoID {
		s.err = fmt.Errorf("organization id %d and repository id %d did not meet", orgID, repoID)
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	return org, repo
}

// TestE2ERedteam10LabelOfAnother: Gitea deletes a label by its id alone when
// the path's repository's id is the label's organization's, or the path's
// organization's id the label's repository's (models/issues/label.go
// DeleteLabel compares either with the one id it is given): a label is
// deleted only when Gitea finds it in the path's repository or organization.
// Found by the red team: bob, limited to his own repository, deleted carol's
// organization's label (from every issue of the organization) through his
// repository's labels; and bob, with gitea.org.admin of his own organization,
// deleted a label of carol's private repository, which he cannot even read.
func TestE2ERedteam10LabelOfAnother(t *testing.T) {
	g := needGitea(t)
	s := &giteaSetup{g: g}

	org, repo := sameIDs(t, g, "carol", "bob")
	var label struct{ ID int64 }
	s.call("carol", "POST", "/orgs/"+org+"/labels", map[string]string{"name": "org-wide", "color": "#ff0000"}, http.StatusCreated, &label)
	if s.err != nil {
		t.Fatal(s.err)
	}
	owner, name, _ := strings.Cut(repo, "/")
	c := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=labeller", "GITEA_MCP_CONFIG="+allowlistConfig(t, "labeller", repo, "gitea.issue.manage"))
	out, isErr := c.callTool("gitea_call_operation", map[string]any{"operation": "issueDeleteLabel", "arguments": map[string]any{"owner": owner, "repo": name, "id": label.ID}})
	if status, _, _, _ := g.api("carol", "GET", fmt.Sprintf("/orgs/%s/labels/%d", org, label.ID), nil); !isErr || status != http.StatusOK ||
		!strings.Contains(str(get(out, "error.permission_report.reason")), "does not show label") {
		t.Errorf("deleting %s's label %d through %s: isError %v, %v; the label now answers %d; want it refused and kept", org, label.ID, repo, isErr, get(out, "error"), status)
	}

	org2, private := sameIDs(t, g, "bob", "carol")
	var repoLabel struct{ ID int64 }
	s.call("carol", "POST", "/repos/"+private+"/labels", map[string]string{"name": "private", "color": "#00ff00"}, http.StatusCreated, &repoLabel)
	if s.err != nil {
		t.Fatal(s.err)
	}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"org-admin","allowed_operations":["gitea.read","gitea.org.admin"]}]}`), 0o600)
	c2 := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=org-admin", "GITEA_MCP_CONFIG="+config)
	out, isErr = c2.callTool("gitea_call_operation", map[string]any{"operation": "orgDeleteLabel", "arguments": map[string]any{"org": org2, "id": repoLabel.ID}})
	if status, _, _, _ := g.api("carol", "GET", fmt.Sprintf("/repos/%s/labels/%d", private, repoLabel.ID), nil); !isErr || status != http.StatusOK ||
		!strings.Contains(str(get(out, "error.permission_report.reason")), "does not show label") {
		t.Errorf("deleting %s's label %d through %s: isError %v, %v; the label now answers %d; want it refused and kept", private, repoLabel.ID, org2, isErr, get(out, "error"), status)
	}
	// A label of the path's own repository or organization is deleted.
	for _, del := range []struct{ op, owner, path string }{{"issueDeleteLabel", "bob", "/repos/" + repo + "/labels"}, {"orgDeleteLabel", "bob", "/orgs/" + org2 + "/labels"}} {
		var own struct{ ID int64 }
		s.call(del.owner, "POST", del.path, map[string]string{"name": "own", "color": "#0000ff"}, http.StatusCreated, &own)
		if s.err != nil {
			t.Fatal(s.err)
		}
		args := map[string]any{"owner": owner, "repo": name, "org": org2, "id": own.ID}
		if del.op == "orgDeleteLabel" {
			delete(args, "owner")
			delete(args, "repo")
		} else {
			delete(args, "org")
		}
		client := map[string]*client{"issueDeleteLabel": c, "orgDeleteLabel": c2}[del.op]
		if out, isErr := client.callTool("gitea_call_operation", map[string]any{"operation": del.op, "arguments": args}); isErr {
			t.Errorf("%s of its own label %d: %v; want it deleted", del.op, own.ID, get(out, "error"))
		}
	}
}

// sshKey returns a new ed25519 public key in OpenSSH's authorized_keys form.
func sshKey(t *testing.T) string {
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	var b []byte
	for _, part := range [][]byte{[]byte("ssh-ed25519"), pub} {
		b = append(binary.BigEndian.AppendUint32(b, uint32(len(part))), part...)
	}
	return "ssh-ed25519 " + base64.StdEncoding.EncodeToString(b)
}

// TestE2ERedteam10OthersKey: DELETE /user/keys/{id}, the caller's own key
// (gitea.user.settings), deletes whatever public key the id names where the
// caller is a site administrator, and the key behind a deploy key the caller
// added to any repository (services/asymkey/ssh_key.go DeletePublicKey):
// deleting a key that is not the caller's own needs gitea.admin.user. Found
// by the red team: alice, a site administrator under a profile granting
// gitea.user.settings alone, deleted bob's SSH key, and broke the deploy key
// she had added to her repository (deploy key deletion needs gitea.repo.admin).
func TestE2ERedteam10OthersKey(t *testing.T) {
	g := needGitea(t)
	s := &giteaSetup{g: g}
	var key struct{ ID int64 }
	s.call("bob", "POST", "/user/keys", map[string]string{"title": "rt10-" + strings.ToLower(rand.Text()[:8]), "key": sshKey(t)}, http.StatusCreated, &key)
	t.Cleanup(func() { g.api("bob", "DELETE", fmt.Sprintf("/user/keys/%d", key.ID), nil) })
	repo, _ := scratchRepo(t, g, "deployed", true)
	var deploy struct {
		ID    int64
		KeyID int64 `json:"key_id"`
	}
	s.call("alice", "POST", "/repos/"+repo+"/keys", map[string]any{"title": "deploy", "key": sshKey(t), "read_only": false}, http.StatusCreated, &deploy)
	if s.err != nil {
		t.Fatal(s.err)
	}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"account","allowed_operations":["gitea.read","gitea.user.settings"]}]}`), 0o600)
	for _, tc := range []struct {
		what, path string
		id         int64
	}{{"bob's SSH key", fmt.Sprintf("/user/keys/%d", key.ID), key.ID}, {"the deploy key of " + repo, fmt.Sprintf("/repos/%s/keys/%d", repo, deploy.ID), deploy.KeyID}} {
		c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=account", "GITEA_MCP_CONFIG="+config)
		out, isErr := c.callTool("gitea_call_operation", map[string]any{"operation": "userCurrentDeleteKey", "arguments": map[string]any{"id": tc.id}})
		status, _, _, _ := g.api("alice", "GET", tc.path, nil)
		if !isErr || get(out, "error.permission_report.required_permission") != "gitea.admin.user" || status != http.StatusOK {
			t.Errorf("alice deleting %s (key %d): isError %v, %v; GET %s now answers %d; want it refused (gitea.admin.user) and kept", tc.what, tc.id, isErr, get(out, "error"), tc.path, status)
		}
	}
	// Her own key is hers to delete.
	var own struct{ ID int64 }
	s.call("alice", "POST", "/user/keys", map[string]string{"title": "rt10-own", "key": sshKey(t)}, http.StatusCreated, &own)
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=account", "GITEA_MCP_CONFIG="+config)
	if out, isErr := c.callTool("gitea_call_operation", map[string]any{"operation": "userCurrentDeleteKey", "arguments": map[string]any{"id": own.ID}}); isErr {
		t.Errorf("alice deleting her own key %d: %v; want it deleted", own.ID, get(out, "error"))
	}
}

// TestE2EOthersComment: Gitea lets any writer of a repository edit another's
// comment (routers/api/v1/repo/issue_comment.go), so carol, a collaborator
// under gitea-reviewer (gitea.issue.comment: her own comments), could put
// "approved" in bob's words. Editing another's comment needs gitea.issue.edit;
// her own she still edits.
func TestE2EOthersComment(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "comments", true)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	var issue struct{ Number int }
	s.call("alice", "POST", "/repos/"+repo+"/issues", map[string]string{"title": "thread"}, http.StatusCreated, &issue)
	var bobs, hers struct{ ID int64 }
	s.call("bob", "POST", fmt.Sprintf("/repos/%s/issues/%d/comments", repo, issue.Number), map[string]string{"body": "not yet"}, http.StatusCreated, &bobs)
	s.call("carol", "POST", fmt.Sprintf("/repos/%s/issues/%d/comments", repo, issue.Number), map[string]string{"body": "typo"}, http.StatusCreated, &hers)
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-reviewer")
	edit := func(id int64) (map[string]any, bool) {
		return c.callTool("gitea_call_operation", map[string]any{"operation": "issueEditComment",
			"arguments": map[string]any{"owner": owner, "repo": name, "id": id, "body": map[string]any{"body": "approved, merge it"}}})
	}
	if out, isErr := edit(bobs.ID); !isErr || !strings.Contains(str(out), "gitea.issue.edit") {
		t.Errorf("carol editing bob's comment: isError %v, %s; want refused, needing gitea.issue.edit", isErr, str(out))
	}
	var got struct{ Body string }
	s.call("alice", "GET", fmt.Sprintf("/repos/%s/issues/comments/%d", repo, bobs.ID), nil, http.StatusOK, &got)
	if s.err != nil || got.Body != "not yet" {
		t.Errorf("bob's comment reads %q (%v); want it unchanged", got.Body, s.err)
	}
	if out, isErr := edit(hers.ID); isErr {
		t.Errorf("carol editing her own comment: %s", str(out))
	}
}

// TestE2ETokenUserName: a Gitea token given as a URL's user name, as git
// takes it (a submodule's url, a remote), is masked (url_credentials), in a
// file's content as in the .diff of the commit adding it.
func TestE2ETokenUserName(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "submodule", false)
	owner, name, _ := strings.Cut(repo, "/")
	token := "9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c"
	text := "[submodule \"lib\"]\n\tpath = lib\n\turl = https://" + token + "@gitea.example.com/o/lib.git\n"
	s := &giteaSetup{g: g}
	var put struct{ Commit struct{ SHA string } }
	s.call("alice", "POST", "/repos/"+repo+"/contents/.gitmodules", map[string]string{"content": base64.StdEncoding.EncodeToString([]byte(text)), "message": "lib"}, http.StatusCreated, &put)
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-reviewer")
	for _, call := range []map[string]any{
		{"operation": "repoGetRawFile", "arguments": map[string]any{"owner": owner, "repo": name, "filepath": ".gitmodules"}},
		{"operation": "repoDownloadCommitDiffOrPatch", "arguments": map[string]any{"owner": owner, "repo": name, "sha": put.Commit.SHA, "diffType": "diff"}},
	} {
		if out, _ := c.callTool("gitea_call_operation", call); strings.Contains(str(out), token[:12]) || !strings.Contains(str(out), "url_credentials") {
			t.Errorf("%s: %s; want the token masked (url_credentials)", call["operation"], str(out))
		}
	}
}
