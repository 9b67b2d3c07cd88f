package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// rt31Variables are Actions variables whose names say they hold a secret
// without ending in one of secretNameEnds: AWS's and Django's conventional
// names, and a name with a suffix after its word. Each value is masked as
// generic_secret masks NAME=value in a .env file.
var rt31Variables = map[string]string{
	"AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	"SECRET_KEY":            "django-insecure-r2d2c3po+luke=leia",
	"DB_PASSWORD_PROD":      "Tr0ub4dor-and-3-staging",
}

// TestE2ERedteam31VariableNames: found by the red team. Gitea answers an
// Actions variable as {"name": ..., "data": ...} (modules/structs
// ActionVariable, built in routers/api/v1/repo/action.go); the pipeline masked its data only where the name ends
// in a secret word (DEPLOY_TOKEN), though generic_secret masks
// AWS_SECRET_ACCESS_KEY=..., SECRET_KEY=... and DB_PASSWORD_PROD=... in a
// text. Before the fix alice, under gitea-owner, read each value whole
// through getRepoVariable and getRepoVariablesList.
func TestE2ERedteam31VariableNames(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt31vars", false)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	for v, value := range rt31Variables {
		if s.call("alice", "POST", "/repos/"+repo+"/actions/variables/"+v, map[string]any{"value": value}, http.StatusCreated, nil); s.err != nil {
			t.Fatal(s.err)
		}
	}
	if s.call("alice", "POST", "/repos/"+repo+"/actions/variables/DEPLOY_REGION", map[string]any{"value": "eu-central-1"}, http.StatusCreated, nil); s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-owner")
	reads := []map[string]any{{"operation": "getRepoVariablesList", "arguments": map[string]any{"owner": owner, "repo": name}}}
	for v := range rt31Variables {
		reads = append(reads, map[string]any{"operation": "getRepoVariable", "arguments": map[string]any{"owner": owner, "repo": name, "variablename": v}})
	}
	for _, read := range reads {
		res, _ := c.callTool("gitea_call_operation", read)
		text := fmt.Sprint(get(res, "data"))
		if !strings.Contains(text, "data:") || !strings.Contains(text, "[MASKED]") {
			t.Errorf("%s: %.800s", read["operation"], text)
		}
		for v, value := range rt31Variables {
			if strings.Contains(text, value) {
				t.Errorf("%s holds %s's value: %.800s", read["operation"], v, text)
			}
		}
		if read["operation"] == "getRepoVariablesList" && !strings.Contains(text, "eu-central-1") {
			t.Errorf("a plain variable masked: %.800s", text)
		}
	}
}
