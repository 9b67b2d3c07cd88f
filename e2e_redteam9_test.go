package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestE2ERedteam9SecondClient: found by the red team reading Gitea's token
// endpoint. Gitea keeps one grant per user and OAuth2 application (the
// server's), and with INVALIDATE_REFRESH_TOKENS (which README asks for)
// every sign-in and every refresh through that application moves the
// grant's counter (services/oauth2_provider/access_token.go
// NewAccessTokenResponse), so a refresh token handed out before is "already
// used". alice signing in through a second MCP client (another app, another
// machine) ends the first client's refresh token: on Gitea 1.26.0 its
// refresh is refused, and the server's log blamed a retry or a stolen copy.
// The log now names the likely cause; the first client's access token still
// works until it ends, and the second client refreshes.
func TestE2ERedteam9SecondClient(t *testing.T) {
	g := needGitea(t)
	ln, public := listenLoopback(t)
	addr := ln.Addr().String()
	clientID, clientSecret := oauthE2EApp(t, g, public)
	ln.Close() // just before the server takes the port
	p := startHTTPProgram(t, addr, "GITEA_URL="+g.URL, "GITEA_MCP_PROFILE=gitea-owner", "MCP_OAUTH_KEY="+oauthTestKey,
		"MCP_PUBLIC_URL="+public, "GITEA_OAUTH_CLIENT_ID="+clientID, "GITEA_OAUTH_CLIENT_SECRET="+clientSecret)
	first, c1 := giteaSignIn(t, g, public, "alice")
	second, c2 := giteaSignIn(t, g, public, "alice")
	refresh := func(c *oauthClient, rt string) (int, oauthTokens) {
		return c.token(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {c.id}})
	}
	if status, got := refresh(c1, first.Refresh); status != http.StatusBadRequest || !strings.Contains(got.Description, "token was already used") {
		t.Errorf("the first client's refresh after a second sign-in: %d %s %s; Gitea 1.26 refuses it as already used", status, got.Error, got.Description)
	}
	sid := httpSessionID(t, public, "2025-11-25", "Authorization", "Bearer "+first.Access)
	if who, err := mcpWhoami(public, first.Access, sid); err != nil || str(who["login"]) != "alice" {
		t.Errorf("the first client's access token after the second sign-in: %v %v", who, err)
	}
	if status, got := refresh(c2, second.Refresh); status != http.StatusOK {
		t.Errorf("the second client's refresh: %d %s %s", status, got.Error, got.Description)
	}
	p.stop()
	if !strings.Contains(p.log.String(), "another MCP client of the same user") {
		t.Errorf("the server's log does not name the second client as the likely cause:\n%s", p.log.String())
	}
}

// TestE2ERedteam9OAuthOwnApp: found by the red team. In OAuth mode the
// server's application in Gitea belongs to a user (README's step 1 offers
// Settings → Applications), and that user's calls reach it: Gitea's PATCH
// /user/applications/oauth2/{id} sets its redirect URIs and answers with a
// new client secret (routers/api/v1/user/app.go), which the server delivers
// unmasked, as a minted credential. On Gitea 1.26.0 alice's call through the
// server added https://attacker.example/cb to the server's own application
// and handed the model its new secret: with them, a link to Gitea's
// authorize page sends any user who signed in through the server (Gitea
// reuses a confidential client's grant without asking) to the attacker with
// a code it redeems for their Gitea token; deleting the application signs
// every user out. The server now refuses to change or delete its own
// application, and only it: another application of alice's is deleted.
func TestE2ERedteam9OAuthOwnApp(t *testing.T) {
	g := needGitea(t)
	ln, public := listenLoopback(t)
	addr := ln.Addr().String()
	clientID, clientSecret := oauthE2EApp(t, g, public)
	ln.Close() // just before the server takes the port
	p := startHTTPProgram(t, addr, "GITEA_URL="+g.URL, "GITEA_MCP_PROFILE=gitea-owner", "MCP_OAUTH_KEY="+oauthTestKey,
		"MCP_PUBLIC_URL="+public, "GITEA_OAUTH_CLIENT_ID="+clientID, "GITEA_OAUTH_CLIENT_SECRET="+clientSecret)
	defer p.stop()
	alice, _ := giteaSignIn(t, g, public, "alice")
	bob, _ := giteaSignIn(t, g, public, "bob")
	appID := func(client string) int64 {
		var apps []struct {
			ID       int64  `json:"id"`
			ClientID string `json:"client_id"`
		}
		if _, _, data, err := g.api("alice", "GET", "/user/applications/oauth2", nil); err != nil || json.Unmarshal(data, &apps) != nil {
			t.Fatalf("list alice's applications: %v", err)
		}
		for _, a := range apps {
			if a.ClientID == client {
				return a.ID
			}
		}
		t.Fatalf("no application of alice's has client id %s", client)
		return 0
	}
	own := appID(clientID)
	sid := httpSessionID(t, public, "2025-11-25", "Authorization", "Bearer "+alice.Access)
	call := func(op string, args map[string]any) string {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call",
			"params": map[string]any{"name": "gitea_call_operation", "arguments": map[string]any{"operation": op, "arguments": args}}})
		_, body, err := mcpSend(nil, public, http.MethodPost, bearer(alice.Access, sid), string(b))
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		return string(body)
	}
	edit := map[string]any{"id": own, "body": map[string]any{"name": "giteamcp", "confidential_client": true,
		"redirect_uris": []string{public + "/oauth/callback", "https://attacker.example/cb"}}}
	if got := call("userUpdateOAuth2Application", edit); strings.Contains(got, "gto_") || !strings.Contains(got, "the server's own OAuth2 application") {
		t.Errorf("alice changing the server's own application through it: %.600s", got)
	}
	if got := call("userDeleteOAuth2Application", map[string]any{"id": own}); !strings.Contains(got, "the server's own OAuth2 application") {
		t.Errorf("alice deleting the server's own application through it: %.600s", got)
	}
	if who, err := mcpWhoami(public, bob.Access, httpSessionID(t, public, "2025-11-25", "Authorization", "Bearer "+bob.Access)); err != nil || str(who["login"]) != "bob" {
		t.Errorf("bob after alice's calls: %v %v", who, err)
	}
	other, _ := oauthE2EApp(t, g, "https://elsewhere.example")
	if got := call("userDeleteOAuth2Application", map[string]any{"id": appID(other)}); !strings.Contains(got, `\"status\":204`) {
		t.Errorf("alice deleting another application of hers: %.600s", got)
	}
}
