package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
)

// defaultTools are the generated tools listed when GITEA_MCP_TOOLS is unset,
// beside the workflow tools, by profile (GITEA_MCP_PROFILE): each role's
// everyday operations. An author reads files, creates branches, writes files
// (gitea_write_file) and opens pull requests; a reviewer reads pull requests,
// their files and diffs (reviewing is gitea_review_pr); an issue manager lists
// and edits issues; a merger reads pull requests (merging is gitea_merge_pr).
// Any other profile, or none, gets the everyday reads. Every other operation is
// one gitea_find_operations away. TestDefaultToolsListSize keeps each set
// within the tools/list budget.
var defaultTools = map[string][]string{
	"":             {"repoGet", "repoGetRawFile", "repoGetContents", "issueListIssues", "issueGetIssue", "repoListPullRequests", "repoGetPullRequest"},
	"gitea-author": {"repoGet", "repoGetRawFile", "repoGetContents", "repoCreateBranch", "repoCreatePullRequest", "repoGetPullRequest"},
	"gitea-reviewer": {"repoGet", "repoListPullRequests", "repoGetPullRequest", "repoGetPullRequestFiles", "repoDownloadPullDiffOrPatch",
		"repoListPullReviews", "repoGetRawFile"},
	"gitea-issue-manager": {"repoGet", "issueListIssues", "issueGetIssue", "issueCreateIssue", "issueEditIssue", "issueListLabels",
		"issueAddLabel", "repoGetRawFile"},
	"gitea-merger":    {"repoGet", "repoListPullRequests", "repoGetPullRequest", "repoGetPullRequestFiles", "repoListPullReviews"},
	"prgs-reconciler": {"repoGet", "repoListPullRequests", "repoGetPullRequest", "repoGetBranch"},
	"gitea-owner":     {"repoGet", "repoGetRawFile", "repoGetContents", "repoGetPullRequest", "issueEditIssue"},
}

// plainParams are parameters whose name says it all: a listed generated
// tool's schema omits their descriptions, which only repeat the name
// ("owner of the repo"), to keep tools/list small.
var plainParams = map[string]bool{"owner": true, "repo": true, "index": true, "page": true, "limit": true}

// listedSchema returns s without the descriptions of plainParams.
func listedSchema(s *Schema) *Schema {
	out := *s
	out.Properties = map[string]*Schema{}
	for name, p := range s.Properties {
		if plainParams[name] && p.Description != "" {
			q := *p
			q.Description = ""
			p = &q
		}
		out.Properties[name] = p
	}
	return &out
}

// listPageSize is how many tools one tools/list page carries.
const listPageSize = 50

// tool is one MCP tool: a generated tool calls its operation; a hand-written
// tool runs its own function. Both only describe requests for the executor.
type tool struct {
	name        string
	description string
	schema      *Schema
	listed      *Schema // the schema tools/list shows, if not schema
	op          *operation
	run         func(ctx context.Context, s *server, sess *session, args map[string]any) map[string]any
	readOnly    bool   // a hand-written tool that only reads
	perm        string // a workflow tool: listed when the profile allows this (gitea.pr.review: any review verdict)
	switching   bool   // listed only when runtime profile switching is allowed

	listingOnce sync.Once
	listing     json.RawMessage
}

// annotations returns the tool's behaviour hints, set explicitly from the
// HTTP method (clients prompt for approval on tools that look destructive).
func (t *tool) annotations() map[string]bool {
	method := "POST" // hand-written tools that may write
	if t.op != nil {
		method = t.op.Method
	} else if t.readOnly {
		method = "GET"
	}
	return map[string]bool{
		"readOnlyHint":    method == "GET",
		"destructiveHint": method == "DELETE",
		"idempotentHint":  method == "GET" || method == "PUT" || method == "DELETE",
		"openWorldHint":   true,
	}
}

// listingJSON returns the tool's tools/list entry, encoded once.
func (t *tool) listingJSON() json.RawMessage {
	t.listingOnce.Do(func() {
		t.listing = encode(struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema *Schema         `json:"inputSchema"`
			Annotations map[string]bool `json:"annotations"`
		}{t.name, t.description, cmp.Or(t.listed, t.schema), t.annotations()})
	})
	return t.listing
}

// catalog is every operation of the OpenAPI document and every tool the
// server offers, after GITEA_MCP_TOOLS and DISABLED_TOOLS.
type catalog struct {
	ops    []*operation
	byID   map[string]*operation
	listed []*tool
	byName map[string]*tool
	off    map[string]bool // DISABLED_TOOLS
}

// newCatalog builds the tool catalog from the operations; without include
// (GITEA_MCP_TOOLS), it lists the profile's default tools.
func newCatalog(ops []*operation, include, disabled, profile string) (*catalog, error) {
	c := &catalog{ops: ops, byID: map[string]*operation{}, byName: map[string]*tool{}, off: map[string]bool{}}
	for _, op := range ops {
		c.byID[op.ID] = op
	}
	for _, name := range splitList(disabled) {
		c.off[name] = true
	}
	for _, t := range slices.Concat(handwrittenTools(), profileTools(), workflowTools()) {
		c.add(t)
	}
	patterns := splitList(include)
	if include == "" {
		patterns = defaultTools[profile]
		if patterns == nil {
			patterns = defaultTools[""]
		}
	}
	for _, p := range patterns {
		n := 0
		for _, op := range ops {
			ok, err := path.Match(p, op.ID)
			if err != nil {
				return nil, fmt.Errorf("GITEA_MCP_TOOLS: bad pattern %q", p)
			}
			if !ok && p != "all" {
				continue
			}
			n++
			if c.byName[op.ID] == nil {
				s, err := op.inputSchema()
				if err != nil {
					return nil, err
				}
				c.add(&tool{name: op.ID, description: op.Summary, schema: s, listed: listedSchema(s), op: op})
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("GITEA_MCP_TOOLS: %q matches no operation", p)
		}
	}
	return c, nil
}

// add lists t unless DISABLED_TOOLS names it.
func (c *catalog) add(t *tool) {
	if c.off[t.name] {
		return
	}
	c.listed = append(c.listed, t)
	c.byName[t.name] = t
}

// operation returns the operation with the given id unless it is disabled.
func (c *catalog) operation(id string) (*operation, bool) {
	op, ok := c.byID[id]
	if !ok || c.off[id] {
		return nil, false
	}
	return op, true
}

// splitList splits a comma-separated setting, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// listTools serves tools/list with opaque cursors.
func (s *server) listTools(params json.RawMessage) (map[string]any, *rpcError) {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, errorf(codeInvalidParams, "invalid params: %v", err)
		}
	}
	if err := s.wait(); err != nil {
		return nil, errorf(codeInternal, "%v", err)
	}
	tools := s.visible()
	start := 0
	if p.Cursor != nil {
		var ok bool
		if start, ok = parseCursor(*p.Cursor, len(tools)); !ok {
			return nil, errorf(codeInvalidParams, "invalid params: bad cursor %q", *p.Cursor)
		}
	}
	end := min(start+listPageSize, len(tools))
	page := make([]json.RawMessage, 0, end-start)
	for _, t := range tools[start:end] {
		page = append(page, t.listingJSON())
	}
	result := map[string]any{"tools": page}
	if end < len(tools) {
		result["nextCursor"] = makeCursor(end)
	}
	return result, nil
}

// visible returns the listed tools the active profile may use: generated
// tools whose operation it allows, and the hand-written ones (switching only
// where the configuration allows it).
func (s *server) visible() []*tool {
	var out []*tool
	for _, t := range s.cat.listed {
		if t.op != nil && !s.exec.permits(t.op) || t.switching && !s.exec.switching() || !s.exec.mayUse(t.perm) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// makeCursor encodes a list offset as an opaque cursor.
func makeCursor(offset int) string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "tools:%d", offset))
}

// parseCursor decodes a cursor made by makeCursor for a list of n tools.
func parseCursor(c string, n int) (int, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, false
	}
	var off int
	if _, err := fmt.Sscanf(string(b), "tools:%d", &off); err != nil || makeCursor(off) != c || off <= 0 || off >= n {
		return 0, false
	}
	return off, true
}

// callTool serves tools/call: it finds the tool, decodes and validates the
// arguments, and runs the tool.
func (s *server) callTool(ctx context.Context, sess *session, params json.RawMessage) (map[string]any, *rpcError) {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, errorf(codeInvalidParams, "invalid params: %v", err)
	}
	if err := s.wait(); err != nil {
		return nil, errorf(codeInternal, "%v", err)
	}
	t, ok := s.cat.byName[p.Name]
	if !ok || t.switching && !s.exec.switching() {
		return nil, errorf(codeInvalidParams, "unknown tool %q", p.Name)
	}
	args, err := decodeArgs(p.Arguments)
	if err != nil {
		return nil, errorf(codeInvalidParams, "invalid params: %v", err)
	}
	if t.op != nil { // the executor validates an operation's arguments
		return s.exec.do(ctx, &request{tool: t.name, op: t.op, args: args}), nil
	}
	if err := t.schema.Validate(args); err != nil {
		s.refuseArgs(ctx, t, args, err)
		return s.finish(ctx, t, errorResult("invalid_arguments", err.Error())), nil
	}
	return s.finish(ctx, t, t.run(ctx, s, sess, args)), nil
}

// localEnvelope is the key under which jsonResult and errorResult leave their
// envelope for finish.
const localEnvelope = "\x00envelope"

// finish completes the envelope of a result built by jsonResult or
// errorResult with the tool and the caller's identity as known (never asking
// Gitea); other results are complete already.
func (s *server) finish(ctx context.Context, t *tool, r map[string]any) map[string]any {
	env, ok := r[localEnvelope].(*envelope)
	if !ok {
		return r
	}
	if env.Request == nil {
		env.Request = &requestInfo{}
	}
	env.Request.Tool = t.name
	if env.Identity == nil {
		_, c := s.exec.active(ctx)
		env.Identity = c.identity()
	}
	return envelopeResult(env)
}

// decodeArgs decodes tool arguments, keeping numbers exact.
func decodeArgs(raw json.RawMessage) (map[string]any, error) {
	args := map[string]any{}
	if len(raw) == 0 || string(raw) == "null" {
		return args, nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&args); err != nil {
		return nil, fmt.Errorf("arguments must be an object: %w", err)
	}
	return args, nil
}

// handwrittenTools are the tools that are not one-to-one with an operation.
func handwrittenTools() []*tool {
	str := func(desc string) *Schema { return &Schema{Type: "string", Description: desc} }
	obj := func(req []string, props map[string]*Schema) *Schema {
		return &Schema{Type: "object", Properties: props, Required: req, AdditionalProperties: falseSchema()}
	}
	return []*tool{
		{name: "gitea_find_operations", run: findOperations, readOnly: true,
			description: "Search Gitea API operations by words. Each match: operationId, method, path, summary, parameters (x? optional). Call one with gitea_call_operation.",
			schema: obj([]string{"query"}, map[string]*Schema{
				"query":  str("e.g. \"merge pull request\""),
				"limit":  {Type: "integer", Description: "default 3", Minimum: jsonNum("1"), Maximum: jsonNum("20")},
				"schema": {Type: "boolean", Description: "with input schemas (always for one match)"},
			})},
		{name: "gitea_call_operation", run: callOperation,
			description: "Call a Gitea API operation by operationId (see gitea_find_operations) with its arguments.",
			schema: obj([]string{"operation", "arguments"}, map[string]*Schema{
				"operation": str("operationId, e.g. repoMergePullRequest"),
				"arguments": {Type: "object", Description: "as its input schema describes"},
				"full":      {Type: "boolean", Description: "Gitea's whole answer, not the compact view"},
			})},
		{name: "gitea_api_request", run: rawRequest,
			description: "Send a request to the Gitea API (path relative to /api/v1). The method and path must match a documented route; the same checks apply as for the generated tools.",
			schema: obj([]string{"method", "path"}, map[string]*Schema{
				"method": {Type: "string", Enum: []any{"GET", "POST", "PUT", "PATCH", "DELETE"}},
				"path":   str("e.g. /repos/{owner}/{repo}/issues; no '%', '.' or '..' segments, no query"),
				"query":  {Type: "object", Description: "query parameters, values as text (limit: \"10\")", AdditionalProperties: &Schema{Type: "string"}},
				"body":   {Type: "object", Description: "JSON request body"},
			})},
	}
}

// jsonNum returns a pointer to a JSON number literal.
func jsonNum(s string) *json.Number { n := json.Number(s); return &n }

// findOperations serves gitea_find_operations: a ranked word search over the
// operations this server may call. Each match is its operation, method, path,
// summary and a one-line parameter synopsis; the input schema comes only with
// schema: true or for a single match (limit 1, or an exact operationId).
func findOperations(_ context.Context, s *server, _ *session, args map[string]any) map[string]any {
	query, _ := args["query"].(string)
	limit := 3 // the query set is measured at 3 (TestFindRecall)
	if n, ok := args["limit"].(json.Number); ok {
		if v, err := n.Int64(); err == nil {
			limit = int(v)
		}
	}
	withSchema, _ := args["schema"].(bool)
	hits := s.rank(query)
	if len(hits) > 0 && hits[0].score >= exactScore {
		limit = 1
	}
	out := []map[string]any{}
	for _, h := range hits[:min(limit, len(hits))] {
		schema, err := h.op.inputSchema()
		if err != nil {
			continue
		}
		m := map[string]any{"operation": h.op.ID, "method": h.op.Method, "path": h.op.Route, "summary": h.op.Summary}
		if p := synopsis(schema); p != "" {
			m["parameters"] = p
		}
		if withSchema || limit == 1 {
			m["inputSchema"] = schema
		}
		out = append(out, m)
	}
	return jsonResult(map[string]any{"matches": out, "total_matches": len(hits)}, false)
}

// hit is one operation ranked for a query.
type hit struct {
	op    *operation
	score int
}

// exactScore is the score of a query that is an operationId.
const exactScore = 1_000_000

// rank returns the operations this server may call that match query, best
// first; ties go to the operation whose id has fewer words the query lacks,
// then to the shorter path.
func (s *server) rank(query string) []hit {
	words := findTerms(query)
	var hits []hit
	for _, op := range s.cat.ops {
		if _, ok := s.cat.operation(op.ID); !ok || !s.exec.permits(op) {
			continue
		}
		if score := matchScore(op, query, words); score > 0 {
			hits = append(hits, hit{op, score})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return len(hits[i].op.Route) < len(hits[j].op.Route)
	})
	return hits
}

// synopsis is an input schema in one line: required names, then optional
// ones with "?", a body's members in braces, e.g.
// "owner, repo, body{base, head, title?}, page?". A body of more than
// maxSynopsisMembers members names its required ones and counts the others
// ("body{branch_name, +30 optional}"); schema: true shows them.
func synopsis(s *Schema) string {
	var req, opt []string
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		p := s.Properties[name]
		if len(p.Properties) > 0 {
			name += "{" + synopsis(&Schema{Properties: p.Properties, Required: p.Required}) + "}"
		}
		if slices.Contains(s.Required, strings.SplitN(name, "{", 2)[0]) {
			req = append(req, name)
		} else {
			opt = append(opt, name+"?")
		}
	}
	if len(req)+len(opt) > maxSynopsisMembers && len(opt) > 0 {
		opt = []string{fmt.Sprintf("+%d optional", len(opt))}
	}
	return strings.Join(append(req, opt...), ", ")
}

// maxSynopsisMembers is how many members a synopsis names at one level.
const maxSynopsisMembers = 20

// findSynonyms maps the words and phrases agents use to the words of Gitea's
// operation ids and summaries; a word found here is replaced by its terms
// (keep it by listing it). Phrases are matched first, longest first.
// Examples (TestFindSynonyms): "close issue" -> "edit state issue" finds
// issueEditIssue; "get file contents" -> "get raw file" finds repoGetRawFile;
// "diff of a PR" -> "diff patch pull" finds repoDownloadPullDiffOrPatch; "open
// issues labelled bug" -> "issues list bug" finds issueListIssues, while
// "open a pull request" -> "create pull" finds repoCreatePullRequest.
var findSynonyms = map[string]string{
	// phrases
	"pull request": "pull", "pull requests": "pull", "merge request": "pull", "merge requests": "pull",
	"file contents": "raw file", "file content": "raw file", "who am i": "get current user",
	"open a": "create", "open an": "create", "open new": "create",
	// nouns
	"pr": "pull", "prs": "pull", "mr": "pull", "pulls": "pull", "file": "raw file", "readme": "raw file",
	"repository": "repo", "repositories": "repo", "repos": "repo", "project": "repo", "projects": "repo",
	"directory": "contents dir", "folder": "contents dir", "dir": "contents dir", "tree": "contents dir",
	"history": "commits", "log": "commits", "my": "current user", "info": "get", "comment on": "create comment", "whoami": "get current user",
	"notifications": "notify", "webhooks": "hooks", "webhook": "hook", "ci": "workflow runs", "pipelines": "workflow runs",
	"diff": "diff patch", "patch": "diff patch",
	// verbs
	"close": "edit state", "reopen": "edit state", "assign": "edit", "change": "edit", "modify": "edit",
	"update": "edit", "rename": "edit", "retitle": "edit",
	"read": "get", "show": "get", "view": "get", "fetch": "get", "see": "get", "retrieve": "get", "download": "get raw", "display": "get",
	"new": "create", "make": "create", "add": "add create", "write": "create", "approve": "create review", "review": "create review",
	"find": "search", "watch": "subscription", "merged": "is merged",
	// filters: a state or label narrows a list
	"open": "list", "closed": "list", "labelled": "list", "labeled": "list", "with": "list",
}

// findStopWords carry no meaning for the search.
var findStopWords = map[string]bool{"a": true, "an": true, "the": true, "of": true, "to": true, "on": true, "in": true,
	"for": true, "from": true, "by": true, "one": true, "someone": true, "all": true, "this": true, "that": true, "me": true}

// findTerms turns a query into search terms: lower-case words, synonyms
// replaced, stop words dropped.
func findTerms(query string) []string {
	words := searchWords(query)
	var out []string
	for i := 0; i < len(words); i++ {
		if i+2 < len(words) {
			if to, ok := findSynonyms[strings.Join(words[i:i+3], " ")]; ok {
				out, i = append(out, strings.Fields(to)...), i+2
				continue
			}
		}
		if i+1 < len(words) {
			if to, ok := findSynonyms[words[i]+" "+words[i+1]]; ok {
				out, i = append(out, strings.Fields(to)...), i+1
				continue
			}
		}
		if to, ok := findSynonyms[words[i]]; ok {
			out = append(out, strings.Fields(to)...)
		} else if !findStopWords[words[i]] {
			out = append(out, words[i])
		}
	}
	return out
}

// stem folds a plural to its singular: issues -> issue, branches -> branch,
// repositories -> repository.
func stem(w string) string {
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "xes"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && len(w) > 3:
		return w[:len(w)-1]
	}
	return w
}

// searchWords splits text into lower-case words, also at camelCase humps
// (a capital after a small letter: "issueListIssues", but "PRs" is one word).
func searchWords(text string) []string {
	var words []string
	var cur []rune
	prev := ' '
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for _, r := range text {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return words
}

// matchScore ranks an operation for search terms: an exact operationId wins;
// otherwise each term counts 30 found in the id (one more in the same form),
// 20 in the summary, 10 in a tag or the path, and each id word the terms lack
// costs one.
func matchScore(op *operation, query string, terms []string) int {
	if strings.EqualFold(strings.TrimSpace(query), op.ID) {
		return exactScore
	}
	idWords := searchWords(op.ID)
	summary := searchWords(op.Summary)
	routeWords := searchWords(op.Route)
	has := func(words []string, w string) bool {
		return slices.ContainsFunc(words, func(x string) bool { return stem(x) == stem(w) })
	}
	score := 0
	seen := map[string]bool{}
	for _, w := range terms {
		if seen[w] {
			continue
		}
		seen[w] = true
		switch {
		case has(idWords, w):
			score += 30
			if slices.Contains(idWords, w) {
				score++
			}
		case has(summary, w):
			score += 20
		case slices.ContainsFunc(op.Tags, func(t string) bool { return strings.EqualFold(t, w) }) || has(routeWords, w):
			score += 10
		}
	}
	if score == 0 {
		return 0
	}
	for _, w := range idWords {
		if !slices.ContainsFunc(terms, func(t string) bool { return stem(t) == stem(w) }) {
			score--
		}
	}
	return score
}

// callOperation serves gitea_call_operation; the executor validates the
// arguments as it does the operation's generated tool's.
func callOperation(ctx context.Context, s *server, _ *session, args map[string]any) map[string]any {
	id, _ := args["operation"].(string)
	op, ok := s.cat.operation(id)
	opArgs, _ := args["arguments"].(map[string]any)
	if !ok { // audited unless a read: a disabled operation is known, an unknown one may write
		msg := fmt.Sprintf("unknown operation %q; search with gitea_find_operations", id)
		s.exec.refuse(ctx, refusal{tool: "gitea_call_operation", op: s.cat.byID[id], args: opArgs, rule: "operation lookup", reason: msg})
		return errorResult("unknown_operation", msg)
	}
	full, _ := args["full"].(bool)
	return s.exec.do(ctx, &request{tool: "gitea_call_operation", op: op, args: opArgs, full: full})
}

// rawRequest serves gitea_api_request: the executor matches the method and
// path to a documented route before anything is sent.
func rawRequest(ctx context.Context, s *server, _ *session, args map[string]any) map[string]any {
	method, _ := args["method"].(string)
	p, _ := args["path"].(string)
	query, _ := args["query"].(map[string]any)
	return s.exec.do(ctx, &request{tool: "gitea_api_request", method: method, rawPath: p, query: query, body: args["body"], raw: true})
}

// jsonResult is the result of a hand-written tool: an envelope whose data is
// v, marked untrusted as it may hold Gitea data. isError says the action was
// not taken; data says why. callTool completes it (finish).
func jsonResult(v any, isError bool) map[string]any {
	env := &envelope{UntrustedContent: untrustedNotice, Data: v}
	if isError {
		env.Error = &failure{Kind: "not_done", Message: "the action was not taken; data says why"}
	}
	return pending(env)
}

// errorResult is the result of a call refused or failed before or without
// Gitea: an envelope with the error. callTool completes it (finish).
func errorResult(kind, msg string) map[string]any {
	return pending(&envelope{Error: &failure{Kind: kind, Message: msg}})
}

// pending is a complete tools/call result for env that also carries env for
// finish to name the tool and the caller in.
func pending(env *envelope) map[string]any {
	r := envelopeResult(env)
	r[localEnvelope] = env
	return r
}
