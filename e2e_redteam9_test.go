package main

import (
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
