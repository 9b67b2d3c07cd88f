package main

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestOAuthOwnApp checks that in OAuth mode the server's own OAuth2
// application (GITEA_OAUTH_CLIENT_ID) is neither changed nor deleted through
// it, and that another application is (TestE2ERedteam9OAuthOwnApp on Gitea):
// Gitea sends every user who granted it to its redirect URIs without asking,
// and an edit answers with a new secret. An application whose client id
// cannot be read is refused; outside OAuth mode nothing is read.
func TestOAuthOwnApp(t *testing.T) {
	t.Parallel()
	const app = "/user/applications/oauth2/4"
	edit := map[string]any{"operation": "userUpdateOAuth2Application", "arguments": map[string]any{"id": 4,
		"body": map[string]any{"name": "x", "confidential_client": true, "redirect_uris": []string{"https://attacker.example/cb"}}}}
	del := map[string]any{"operation": "userDeleteOAuth2Application", "arguments": map[string]any{"id": 4}}
	own := "this is the server's own OAuth2 application (GITEA_OAUTH_CLIENT_ID), through which every user signs in: changing or deleting it is the operator's, in Gitea"
	unread := "cannot read from Gitea whether the application is the server's own OAuth2 application; refusing"
	type got struct {
		Reason string
		Sent   []string
	}
	for _, tt := range []struct {
		name   string
		oauth  bool
		client string // the application's client id in Gitea; "" for a 404
		args   map[string]any
		want   got
	}{
		{"the server's application edited", true, oauthTestAppID, edit, got{own, []string{"GET " + app}}},
		{"the server's application deleted", true, oauthTestAppID, del, got{own, []string{"GET " + app}}},
		{"the server's application deleted by raw request", true, oauthTestAppID, map[string]any{"method": "DELETE", "path": "/user/applications/oauth2/4"}, got{own, []string{"GET " + app}}},
		{"another application deleted", true, "other", del, got{"", []string{"GET " + app, "DELETE " + app}}},
		{"an application unread", true, "", del, got{unread, []string{"GET " + app}}},
		{"outside OAuth mode", false, oauthTestAppID, del, got{"", []string{"DELETE " + app}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newScriptedGitea(t).user("alice").on("PATCH", app, 200, `{"id":4}`).on("DELETE", app, 204)
			if tt.client != "" {
				f.on("GET", app, 200, `{"id":4,"client_id":"`+tt.client+`"}`)
			}
			kv := []string{"GITEA_MCP_PROFILE", "gitea-owner"}
			ctx := t.Context()
			if tt.oauth {
				kv = append(kv, "GITEA_OAUTH_CLIENT_ID", oauthTestAppID, "GITEA_OAUTH_CLIENT_SECRET", oauthTestSecret, "MCP_OAUTH_KEY", oauthTestKey)
				ctx = context.WithValue(ctx, callerKey{}, &caller{token: fakeToken, mode: "oauth"})
			}
			tool := "gitea_call_operation"
			if tt.args["path"] != nil {
				tool = "gitea_api_request"
			}
			out, _ := fakeCall(t, ctx, f.server(t, kv...), tool, tt.args)
			g := got{Reason: str0(get(out, "error.permission_report.reason"))}
			for _, r := range f.requests() {
				if r.Method+" "+r.Path != "GET /user" {
					g.Sent = append(g.Sent, r.Method+" "+r.Path)
				}
			}
			if diff := cmp.Diff(tt.want, g); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s\nresult: %v", diff, out)
			}
		})
	}
}

// TestOAuthLongState: found by the red team. A client's state travels in
// the sealed sign-in request, which is refused above oauthMaxSealed; a state
// of 7000 bytes got a consent page whose Continue could only fail, as
// "expired or started in another browser". The authorization request is
// now refused at once, saying why; a state that fits still works.
func TestOAuthLongState(t *testing.T) {
	t.Parallel()
	gitea := newScriptedGitea(t)
	gitea.oauthProvider("alice")
	ts, _ := newOAuthTest(t, gitea.URL)
	c := newOAuthClient(t, ts.URL)
	for _, tt := range []struct {
		n    int
		want string
	}{{7000, "This sign-in request is invalid: state: too long."}, {2000, `name="request"`}} {
		if _, page := c.get(t, c.authorizeURL("state", strings.Repeat("a", tt.n))); !strings.Contains(page, tt.want) {
			t.Errorf("a state of %d bytes: want %q in the page:\n%.400s", tt.n, tt.want, page)
		}
	}
}
