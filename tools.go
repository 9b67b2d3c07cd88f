package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
)

// defaultTools are the generated tools listed when GITEA_MCP_TOOLS is unset,
// beside the workflow tools: the everyday reads. Every other operation is one
// gitea_find_operations away.
var defaultTools = []string{"repoGet", "issueGetIssue", "repoListPullRequests", "repoGetPullRequest"}

// listPageSize is how many tools one tools/list page carries.
const listPageSize = 50

// tool is one MCP tool: a generated tool calls its operation; a hand-written
// tool runs its own function. Both only describe requests for the executor.
type tool struct {
	name        string
	description string
	schema      *Schema
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
		}{t.name, t.description, t.schema, t.annotations()})
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

// newCatalog builds the tool catalog from the operations.
func newCatalog(ops []*operation, include, disabled string) (*catalog, error) {
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
		patterns = defaultTools
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
				c.add(&tool{name: op.ID, description: op.Summary, schema: s, op: op})
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
	if err := t.schema.Validate(args); err != nil {
		return errorResult("invalid_arguments", err.Error()), nil
	}
	if t.op != nil {
		return s.exec.do(ctx, &request{tool: t.name, op: t.op, args: args}), nil
	}
	return t.run(ctx, s, sess, args), nil
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
			description: "Search every Gitea API operation by words (operationId, summary, path, tag). Returns the best matches with method, path, summary and input schema; call one with gitea_call_operation.",
			schema: obj([]string{"query"}, map[string]*Schema{
				"query": str("words describing the operation, e.g. \"merge pull request\""),
				"limit": {Type: "integer", Description: "most results to return (default 5, at most 20)", Minimum: jsonNum("1"), Maximum: jsonNum("20")},
			})},
		{name: "gitea_call_operation", run: callOperation,
			description: "Call any Gitea API operation by its operationId (find it with gitea_find_operations) with the arguments of its input schema.",
			schema: obj([]string{"operation", "arguments"}, map[string]*Schema{
				"operation": str("operationId, e.g. repoMergePullRequest"),
				"arguments": {Type: "object", Description: "arguments as the operation's input schema describes"},
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
// operations this server may call.
func findOperations(_ context.Context, s *server, _ *session, args map[string]any) map[string]any {
	query, _ := args["query"].(string)
	limit := 5
	if n, ok := args["limit"].(json.Number); ok {
		if v, err := n.Int64(); err == nil {
			limit = int(v)
		}
	}
	words := searchWords(query)
	type hit struct {
		op    *operation
		score int
	}
	var hits []hit
	for _, op := range s.cat.ops {
		if _, ok := s.cat.operation(op.ID); !ok || !s.exec.permits(op) {
			continue
		}
		if score := matchScore(op, query, words); score > 0 {
			hits = append(hits, hit{op, score})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	out := []map[string]any{}
	for _, h := range hits[:min(limit, len(hits))] {
		schema, err := h.op.inputSchema()
		if err != nil {
			continue
		}
		out = append(out, map[string]any{"operation": h.op.ID, "method": h.op.Method, "path": h.op.Route,
			"summary": h.op.Summary, "inputSchema": schema})
	}
	return jsonResult(map[string]any{"query": query, "matches": out, "total_matches": len(hits)}, false)
}

// searchWords splits text into lower-case words, also at camelCase humps.
func searchWords(text string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for i, r := range text {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && i > 0:
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return words
}

// matchScore ranks an operation for a query: an exact operationId wins, then
// words found in the id, the summary, the tags and the path.
func matchScore(op *operation, query string, words []string) int {
	if strings.EqualFold(strings.TrimSpace(query), op.ID) {
		return 1000
	}
	idWords := searchWords(op.ID)
	summary := searchWords(op.Summary)
	routeWords := searchWords(op.Route)
	score := 0
	for _, w := range words {
		switch {
		case slices.Contains(idWords, w) || slices.Contains(idWords, strings.TrimSuffix(w, "s")):
			score += 3
		case slices.Contains(summary, w) || slices.Contains(summary, strings.TrimSuffix(w, "s")):
			score += 2
		case slices.ContainsFunc(op.Tags, func(t string) bool { return strings.EqualFold(t, w) }) || slices.Contains(routeWords, w):
			score++
		default:
			continue
		}
	}
	return score
}

// callOperation serves gitea_call_operation with the same validation as the
// operation's generated tool.
func callOperation(ctx context.Context, s *server, _ *session, args map[string]any) map[string]any {
	id, _ := args["operation"].(string)
	op, ok := s.cat.operation(id)
	if !ok {
		return errorResult("unknown_operation", fmt.Sprintf("unknown operation %q; search with gitea_find_operations", id))
	}
	opArgs, _ := args["arguments"].(map[string]any)
	schema, err := op.inputSchema()
	if err != nil {
		return errorResult("internal", err.Error())
	}
	if err := schema.Validate(opArgs); err != nil {
		return errorResult("invalid_arguments", err.Error())
	}
	return s.exec.do(ctx, &request{tool: "gitea_call_operation", op: op, args: opArgs})
}

// rawRequest serves gitea_api_request: the executor matches the method and
// path to a documented route before anything is sent.
func rawRequest(ctx context.Context, s *server, _ *session, args map[string]any) map[string]any {
	method, _ := args["method"].(string)
	p, _ := args["path"].(string)
	query, _ := args["query"].(map[string]any)
	return s.exec.do(ctx, &request{tool: "gitea_api_request", method: method, rawPath: p, query: query, body: args["body"], raw: true})
}

// jsonResult wraps v as a tools/call result with one text content item.
func jsonResult(v any, isError bool) map[string]any {
	r := map[string]any{"content": []any{map[string]any{"type": "text", "text": string(encode(v))}}}
	if isError {
		r["isError"] = true
	}
	return r
}

// errorResult is an isError result that is not a Gitea answer.
func errorResult(kind, msg string) map[string]any {
	return jsonResult(map[string]any{"error": map[string]any{"kind": kind, "message": msg}}, true)
}
