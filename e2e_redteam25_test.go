package main

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestE2ERedteam25DiffReadings: found by the red team. The readings of file
// text that show a secret only so read (a YAML block scalar's first line
// read on its key's line, JSON returned as text read with its escapes
// decoded) were not made of the diff of that file: git writes each line
// after '+', '-' or a space, the block's key and its value on lines of
// their own, and the diff is no JSON text. Before the fix carol, under
// gitea-reviewer, read the values.yaml and notes.json of bob's pull request
// masked through repoGetContents, and whole in its .diff and .patch: the
// old password on a '-' line, the new one on a '+' line, and the AWS key
// after a \n.
func TestE2ERedteam25DiffReadings(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt25diff", false)
	s := &giteaSetup{g: g}
	const oldPass, newPass, awsKey = "Tr0ub4dor-and-3-staging", "Corr3ct-horse-battery-prod", "AKIAR2D2C3POLUKE0123"
	values := func(pass string) string {
		return "postgresql:\n  auth:\n    username: app\n    password: |-\n      " + pass + "\n  port: 5432\n"
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "message": "add the chart's values",
		"files": []map[string]string{{"operation": "create", "path": "values.yaml", "content": b64(values(oldPass))}}}, http.StatusCreated, nil)
	var file struct{ SHA string }
	s.call("bob", "GET", "/repos/"+repo+"/contents/values.yaml", nil, http.StatusOK, &file)
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "rotate", "message": "rotate the credentials",
		"files": []map[string]string{
			{"operation": "update", "path": "values.yaml", "sha": file.SHA, "content": b64(values(newPass))},
			{"operation": "create", "path": "notes.json", "content": b64(`{"rotated": "the old key is revoked; the new one:\n` + awsKey + `"}` + "\n")},
		}}, http.StatusCreated, nil)
	var pr struct{ Number int }
	s.call("bob", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "rotate", "base": "main", "title": "rotate the credentials"}, http.StatusCreated, &pr)
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-reviewer")
	for _, path := range []string{"values.yaml", "notes.json"} { // the file itself is masked
		res, _ := c.callTool("gitea_api_request", map[string]any{"method": "GET", "path": "/repos/" + repo + "/contents/" + path, "query": map[string]any{"ref": "rotate"}})
		if text := str(get(res, "data.content")); !strings.Contains(text, "[MASKED]") || strings.Contains(text, newPass) || strings.Contains(text, awsKey[4:]) {
			t.Fatalf("%s on rotate: %.600s", path, text)
		}
	}
	for _, kind := range []string{"diff", "patch"} {
		res, _ := c.callTool("gitea_api_request", map[string]any{"method": "GET", "path": fmt.Sprintf("/repos/%s/pulls/%d.%s", repo, pr.Number, kind)})
		text := str(get(res, "data"))
		if !strings.Contains(text, "values.yaml") || !strings.Contains(text, "notes.json") {
			t.Fatalf("the pull request's .%s: %v", kind, res)
		}
		for _, secret := range []string{oldPass, newPass, awsKey[4:]} {
			if strings.Contains(text, secret) {
				t.Errorf("the pull request's .%s holds %q:\n%.1500s", kind, secret, text)
			}
		}
	}
}
