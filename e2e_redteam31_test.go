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

// rt31Subscripts are files that assign rt27Pass to a subscript named by a
// secret word, as code writes configuration: CodeIgniter's database.php
// ($db['default']['password']), a Django settings.py (os.environ[...] and
// DATABASES[...]['PASSWORD']), a Rails initializer (ENV[...]).
var rt31Subscripts = map[string]string{
	"application/config/database.php": "<?php\n$db['default']['hostname'] = 'localhost';\n$db['default']['username'] = 'app';\n$db['default']['password'] = '" + rt27Pass + "';\n",
	"settings.py":                     "import os\nos.environ[\"API_TOKEN\"] = \"" + rt27Pass + "\"\nDATABASES['default']['PASSWORD'] = '" + rt27Pass + "'\n",
	"config/initializers/env.rb":      "ENV['SECRET_KEY_BASE'] = '" + rt27Pass + "'\n",
}

// TestE2ERedteam31Subscripts: found by the red team. generic_secret read an
// assignment's name up to its quote and then ':' or '=', so a subscript's
// closing bracket between them (['password'] = '...') hid the value: before
// the fix carol, under gitea-reviewer, read rt27Pass whole in each of
// rt31Subscripts through repoGetRawFile.
func TestE2ERedteam31Subscripts(t *testing.T) {
	rawFilesMasked(t, "rt31subs", rt31Subscripts)
}
