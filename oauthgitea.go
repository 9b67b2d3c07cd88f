package main

// OAuth mode's calls to Gitea's OAuth2 provider: exchanging a sign-in's code
// and refreshing tokens, and what a refusal of Gitea's tells the client. The
// Gitea tokens it receives go only into seals (oauth.go); an error never
// carries a token, a code or the client secret, nor a transport error naming
// GITEA_URL.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"
)

// giteaTokens is Gitea's answer at /login/oauth/access_token.
type giteaTokens struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	ExpiresIn    int64  `json:"expires_in"`
}

// expiry is when the access token ends (Unix seconds), 0 if Gitea did not say.
func (t *giteaTokens) expiry(now time.Time) int64 {
	if t.ExpiresIn <= 0 {
		return 0
	}
	return now.Unix() + t.ExpiresIn
}

// exchange redeems a grant (a code or a refresh token) at Gitea's token
// endpoint with the server's application, then asks Gitea, through the
// executor like every API request, whose the new access token is. Errors
// name statuses, never tokens.
func (o *oauthServer) exchange(ctx context.Context, grant url.Values) (*giteaTokens, account, error) {
	grant.Set("client_id", o.clientID)
	grant.Set("client_secret", o.secret)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.gitea+"/login/oauth/access_token", strings.NewReader(grant.Encode()))
	if err != nil {
		return nil, account{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	var tok giteaTokens
	if err := o.giteaJSON(req, &tok, grant); err != nil || tok.AccessToken == "" {
		return nil, account{}, fmt.Errorf("gitea token endpoint: %w", cmp.Or(err, errors.New("no access token")))
	}
	me := o.identify(ctx, tok.AccessToken)
	if me.Login == "" {
		return nil, account{}, errors.New("gitea /api/v1/user: no login for the new token")
	}
	return &tok, me, nil
}

// giteaJSON sends req to Gitea and decodes its 200 answer, read within 1 MiB.
// Another answer is an error with Gitea's OAuth error and description, the
// values of sent (the grant: code, verifier, secret, refresh token) redacted.
func (o *oauthServer) giteaJSON(req *http.Request, v any, sent url.Values) error {
	req.Header.Set("Accept", "application/json")
	resp, err := o.client.Do(req)
	if err != nil {
		return errors.New(redactValues(err.Error(), sent))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error            string `json:"error"`
			ErrorDescription string `json:"error_description"`
		}
		json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&e)
		return &giteaRefusal{status: resp.Status, said: oauthSaid(e.Error, e.ErrorDescription, sent)}
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v)
}

// giteaRefusal is an answer of Gitea's token endpoint other than 200: its
// status and what it said (oauthSaid).
type giteaRefusal struct{ status, said string }

// Error says "answered <status>: <what Gitea said>".
func (e *giteaRefusal) Error() string {
	return strings.TrimSuffix("answered "+e.status+": "+e.said, ": ")
}

// giteaSaid is ": Gitea answered ..." when err is Gitea's refusal, else "":
// the details of other errors name GITEA_URL and stay in the log.
func giteaSaid(err error) string {
	if ref, ok := errors.AsType[*giteaRefusal](err); ok {
		return ": Gitea " + ref.Error()
	}
	return ""
}

// oauthSaid is what Gitea said in an OAuth error, "code: description", fit
// for a log line and a page: the values of sent other than the grant type,
// client id and redirect URI redacted, control characters dropped and at
// most 300 bytes.
func oauthSaid(code, desc string, sent url.Values) string {
	said := strings.TrimSuffix(code+": "+desc, ": ")
	if code == "" {
		said = desc
	}
	said = redactValues(strings.Map(func(r rune) rune { // dropping first, so that no secret forms after redaction
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, said), sent)
	said = strings.ToValidUTF8(said, "") // a byte of a secret may have split a character
	if len(said) > 300 {
		said = strings.ToValidUTF8(said[:300], "") + "..."
	}
	return said
}

// redactValues replaces in s the values of sent that are secrets, or may be:
// all but the grant type, client id and redirect URI.
func redactValues(s string, sent url.Values) string {
	for k, vs := range sent {
		if k == "grant_type" || k == "client_id" || k == "redirect_uri" {
			continue
		}
		for _, v := range vs {
			if v != "" {
				s = strings.ReplaceAll(s, v, "[redacted]")
			}
		}
	}
	return s
}

// oauthFixes maps what Gitea's token endpoint said (its error and
// description, lower-cased) to the likely fix; the first phrase found wins.
// %s is the redirect URI the server sends. The examples are Gitea 1.26's
// answers; oauth_test.go checks each finds its fix and no earlier one.
var oauthFixes = []struct {
	phrase, fix string
	examples    []string
}{
	{"client secret", "the server's client authentication failed (OAuth invalid_client): GITEA_OAUTH_CLIENT_SECRET is not the secret of the Gitea application GITEA_OAUTH_CLIENT_ID names; copy it again, or regenerate it in Gitea",
		[]string{"unauthorized_client: invalid client secret", "invalid_client: invalid empty client secret"}},
	{"invalid_client", "the server's client authentication failed (OAuth invalid_client): Gitea has no OAuth2 application with the client id GITEA_OAUTH_CLIENT_ID; copy it from the application's page in Gitea",
		[]string{"invalid_client: cannot load client with client id: 'x'"}},
	{"redirect uri", "the Gitea application's redirect URI must be exactly %s (MCP_PUBLIC_URL + /oauth/callback, no trailing slash)",
		[]string{"unauthorized_client: unexpected redirect URI"}},
	{"pkce", "the sign-in reached Gitea from another start; start it again from the MCP client", []string{"unauthorized_client: failed PKCE code challenge"}},
	{"expired", "the sign-in took too long; start it again from the MCP client", []string{"invalid_grant: authorization code expired"}},
	{"not authorized", "Gitea's code was used already or is unknown; start the sign-in again from the MCP client", []string{"unauthorized_client: client is not authorized"}},
	{"already used", "Gitea holds one grant per user for the server's application, and with INVALIDATE_REFRESH_TOKENS each sign-in or refresh ends the refresh tokens handed out before: most likely another MCP client of the same user signed in or refreshed since, else this client retried or someone used a copy of its refresh token; the user signs in again",
		[]string{"unauthorized_client: token was already used"}},
}

// fix is the likely fix of a failed exchange with Gitea.
func (o *oauthServer) fix(err error) string {
	msg := strings.ToLower(err.Error())
	for _, f := range oauthFixes {
		if _, ok := errors.AsType[*giteaRefusal](err); ok && strings.Contains(msg, f.phrase) {
			if strings.Contains(f.fix, "%s") {
				return fmt.Sprintf(f.fix, o.public+"/oauth/callback")
			}
			return f.fix
		}
	}
	return "see Gitea's log, and check that GITEA_URL reaches Gitea from the server"
}
