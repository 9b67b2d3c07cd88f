package main

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
)

// permits reports whether the active profile may call op at all, judged
// without arguments or identity: what tools/list and gitea_find_operations
// show. Every call is still decided in full by executor.check.
func (x *executor) permits(op *operation) bool {
	prof, _ := x.active(context.Background())
	perm, _ := resolvePermission(opInfo{ID: op.ID, Method: op.Method, Route: op.Route}, nil)
	if prof == nil || perm == "" {
		return perm == permRead
	}
	ok, _ := prof.allows(perm)
	return ok
}

// mayUse reports whether the active profile allows perm; "" and gitea.read
// always; gitea.pr.review stands for any review verdict.
func (x *executor) mayUse(perm string) bool {
	if perm == "" || perm == permRead {
		return true
	}
	prof, _ := x.active(context.Background())
	if prof == nil {
		return false
	}
	perms := []string{perm}
	if perm == "gitea.pr.review" {
		perms = []string{"gitea.pr.review", permApprove, "gitea.pr.request_changes", "gitea.pr.comment"}
	}
	return slices.ContainsFunc(perms, func(p string) bool { ok, _ := prof.allows(p); return ok })
}

// profileTools are the tools that show and switch the execution profile.
func profileTools() []*tool {
	none := &Schema{Type: "object", AdditionalProperties: falseSchema()}
	return []*tool{
		{name: "gitea_whoami", schema: none, run: whoamiTool, readOnly: true,
			description: "The Gitea login this server acts as, verified through Gitea now, with the identity mode and the active profile."},
		{name: "gitea_get_profile", schema: none, run: getProfileTool, readOnly: true,
			description: "The active execution profile: what it may and may not do (normalized operations), its token source name (never the token) and the verified identity."},
		{name: "gitea_activate_profile", run: activateProfileTool, switching: true,
			description: "Switch to another configured execution profile (only when the configuration allows runtime switching); verifies the new identity.",
			schema: &Schema{Type: "object", Required: []string{"profile"}, AdditionalProperties: falseSchema(),
				Properties: map[string]*Schema{"profile": {Type: "string", Description: "profile_name to activate"}}}},
	}
}

// whoamiTool serves gitea_whoami: it clears the cached login and asks Gitea
// through the executor (GET /user). Its data holds the login, the mode, the
// profile and how the login was verified; a failure keeps Gitea's kind and
// says what to do.
func whoamiTool(ctx context.Context, s *server, _ *session, _ map[string]any) map[string]any {
	x := s.exec
	prof, c := x.active(ctx)
	c.mu.Lock()
	c.login = ""
	c.mu.Unlock()
	env := x.run(ctx, &request{tool: "gitea_whoami", op: x.cat.byID["userGetCurrent"], full: true}) // its data is replaced
	c.mu.Lock()
	login := c.login // verified by the call above when it succeeded
	c.mu.Unlock()
	if env.Error == nil && login == "" {
		env.Error = &failure{Status: env.Status, Kind: "identity_unverified", Message: "Gitea's answer named no login"}
	}
	if env.Error != nil {
		env.Data = nil
		env.Error.Message += "; " + cmp.Or(whoamiAdvice[env.Error.Kind], "try again later") +
			"; until Gitea confirms the identity, every mutation is denied"
		return envelopeResult(env)
	}
	env.Identity = c.identity()
	env.Data = map[string]any{"login": login, "mode": c.mode, "profile": profileName(prof),
		"verification": "confirmed by Gitea just now (GET /user with this server's token)"}
	return envelopeResult(env)
}

// whoamiAdvice says what to do when gitea_whoami fails, by error kind.
var whoamiAdvice = map[string]string{
	"unauthorized":       "Gitea rejected the token: check that GITEA_TOKEN (or the active profile's token variable) holds a valid, unexpired access token",
	"forbidden":          "Gitea refused to say who the token is: it may lack the read:user scope, or the account may be prohibited from signing in",
	"connection_refused": "check GITEA_URL and that Gitea is running",
	"dns_error":          "check the host name in GITEA_URL",
	"tls_error":          "check GITEA_URL's scheme and GITEA_CA_FILE",
	"timeout":            "Gitea is slow or unreachable: check GITEA_URL, the network, or raise GITEA_TIMEOUT",
	"network_error":      "check GITEA_URL and the network between this server and Gitea",
	"not_found":          "GITEA_URL may not point at a Gitea API (it should be the instance's base URL)",
	"redirect":           "GITEA_URL may need https:// or a different base path",
	"not_configured":     "restart the server once it is set",
}

// profileName is the name of a profile, or "" for none.
func profileName(p *profile) string {
	if p == nil {
		return ""
	}
	return p.Name
}

// getProfileTool serves gitea_get_profile.
func getProfileTool(ctx context.Context, s *server, _ *session, _ map[string]any) map[string]any {
	x := s.exec
	prof, c := x.active(ctx)
	out := map[string]any{"profile": nil, "identity": c.identity(), "runtime_switching": x.switching(),
		"note": "without a profile, reads work and every mutation is denied"}
	if prof != nil {
		allowed, forbidden := sortedSet(prof.allowed), sortedSet(prof.forbidden)
		out = map[string]any{"profile": prof, "allowed_operations": allowed, "forbidden_operations": forbidden,
			"identity": c.identity(), "runtime_switching": x.switching()}
	}
	if x.audit != nil { // the head to check the log against later (-verify-audit -audit-head)
		head, keyed := x.audit.head()
		out["audit_log"] = map[string]any{"head": head.String(), "lines": head.Lines, "forward_secure_key": keyed}
	}
	return jsonResult(out, false)
}

// sortedSet returns the members of a set in order.
func sortedSet(m map[string]bool) []string {
	var out []string
	for k, ok := range m {
		if ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// switching reports whether the configuration allows runtime switching.
func (x *executor) switching() bool {
	return x.profiles != nil && x.profiles.AllowRuntimeSwitching
}

// activateProfileTool serves gitea_activate_profile: it selects the profile
// and its token, clears the cached identity, verifies the new one through
// Gitea and tells the client that the tool list changed.
func activateProfileTool(ctx context.Context, s *server, sess *session, args map[string]any) map[string]any {
	x := s.exec
	name, _ := args["profile"].(string)
	if !x.switching() {
		return errorResult("permission_denied", "runtime profile switching is not allowed by this server's configuration; use a server started with the profile you need")
	}
	prof, token, err := selectProfile(x.profiles, name, s.getenv)
	if err == nil && strings.ContainsAny(token, " \t\r\n") {
		err = errors.New("the profile's token contains white space")
	}
	if err != nil {
		x.refuse(ctx, refusal{tool: "gitea_activate_profile", rule: "profile selection", reason: err.Error()})
		return errorResult("invalid_profile", err.Error())
	}
	x.activate(prof, token)
	login := x.whoami(ctx)
	if sess != nil {
		sess.send(encode(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}))
	}
	if login == "" {
		return errorResult("identity_unverified", "profile "+name+" is active, but Gitea did not confirm its token's identity; mutations are denied until it does")
	}
	return jsonResult(map[string]any{"profile": name, "login": login, "verified": true}, false)
}
