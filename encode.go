package main

// Path and argument encoding (README, "Execution profiles"): how an
// argument becomes a path segment or query value, with the route rules that
// say which parameters may hold "/" (each rule with its examples); a
// request's arguments validated and split into path, query and body
// (resolve); the raw tool's route matching: its method and path become an
// operation with its generated tool's arguments (rawCall), only the
// operation's own query parameters among them; and arguments as Gitea reads
// them (wholeNumbers, defaultMessage). A value that would change the route
// Gitea serves is refused here, never sent.

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// pathExamples maps a parameter value to the path encodePath must build from it
// (owner "alice", repo "demo", base "main").
type pathExamples map[string]string

// wildcardRule names a route parameter whose value may contain literal "/",
// because Gitea serves the route through a wildcard. It is keyed on the route
// and the parameter: the same name is single-segment elsewhere.
type wildcardRule struct {
	route, param string
	examples     pathExamples
}

// wildcardParams lists the wildcard parameters of Gitea 1.26.0
// (routers/api/v1/api.go). Every other parameter is one segment, "/" sent as %2F.
var wildcardParams = []wildcardRule{
	{"/repos/{owner}/{repo}/branches/{branch}", "branch", pathExamples{ // Group("/branches"): Get, Put, Patch, Delete "/*"
		"feature/x": "/repos/alice/demo/branches/feature/x", "main": "/repos/alice/demo/branches/main"}},
	{"/repos/{owner}/{repo}/branch_protections/{name}", "name", pathExamples{ // Group("/branch_protections"): Group("/*"); names may be globs
		"release/*": "/repos/alice/demo/branch_protections/release/%2A"}},
	{"/repos/{owner}/{repo}/tags/{tag}", "tag", pathExamples{ // Group("/tags"): Get, Delete "/*"
		"v1.0/rc 1": "/repos/alice/demo/tags/v1.0/rc%201"}},
	{"/repos/{owner}/{repo}/compare/{basehead}", "basehead", pathExamples{ // Get("/compare/*")
		"main...feature/x": "/repos/alice/demo/compare/main...feature/x"}},
	{"/repos/{owner}/{repo}/raw/{filepath}", "filepath", pathExamples{ // Get("/raw/*")
		"docs/read me?.md": "/repos/alice/demo/raw/docs/read%20me%3F.md"}},
	{"/repos/{owner}/{repo}/media/{filepath}", "filepath", pathExamples{ // Get("/media/*")
		"assets/logo#1.png": "/repos/alice/demo/media/assets/logo%231.png"}},
	{"/repos/{owner}/{repo}/archive/{archive}", "archive", pathExamples{ // Methods("HEAD,GET", "/archive/*")
		"feature/x.tar.gz": "/repos/alice/demo/archive/feature/x.tar.gz"}},
	{"/repos/{owner}/{repo}/contents/{filepath}", "filepath", pathExamples{ // Group("/contents"): Get "/*"; Group("/*"): Post, Put, Delete
		"src/100%.go": "/repos/alice/demo/contents/src/100%25.go", "a;b,c": "/repos/alice/demo/contents/a%3Bb%2Cc"}},
	{"/repos/{owner}/{repo}/contents-ext/{filepath}", "filepath", pathExamples{ // Group("/contents-ext"): Get "/*"
		"a/b/c.txt": "/repos/alice/demo/contents-ext/a/b/c.txt"}},
	{"/repos/{owner}/{repo}/git/refs/{ref}", "ref", pathExamples{ // Group("/git"): Get("/refs/*")
		"heads/feature/x": "/repos/alice/demo/git/refs/heads/feature/x"}},
	{"/repos/{owner}/{repo}/pulls/{base}/{head}", "head", pathExamples{ // Group("/pulls"): Get("/{base}/*"); base is one segment
		"feature/x": "/repos/alice/demo/pulls/main/feature/x"}},
	{"/repos/{owner}/{repo}/commits/{ref}/status", "ref", pathExamples{ // Group("/commits"): MatchPath("GET", "/<ref:*>/status")
		"feature/x": "/repos/alice/demo/commits/feature/x/status"}},
	{"/repos/{owner}/{repo}/commits/{ref}/statuses", "ref", pathExamples{ // MatchPath("GET", "/<ref:*>/statuses")
		"feature/x": "/repos/alice/demo/commits/feature/x/statuses"}},
}

// isWildcard reports whether param of route may span several segments.
func isWildcard(route, param string) bool {
	return slices.ContainsFunc(wildcardParams, func(r wildcardRule) bool { return r.route == route && r.param == param })
}

// encodePath fills the {name} placeholders of route, an OpenAPI route template
// relative to /api/v1, with percent-encoded params. It refuses, before anything
// is sent, values that Gitea or a proxy in front of it could resolve to another
// route. Entries of params that route does not name are ignored.
func encodePath(route string, params map[string]string) (string, error) {
	var b strings.Builder
	for rest := route; ; {
		i := strings.IndexByte(rest, '{')
		j := strings.IndexByte(rest, '}')
		if i < 0 || j < i {
			b.WriteString(rest)
			p := b.String()
			// Values and text can combine into a dot segment for a proxy that decodes
			// %2F: "x/" and "/y" in {sha}.{diffType} give "x%2F.%2Fy".
			if err := checkSegments(strings.ReplaceAll(p, "%2F", "/"), true); err != nil {
				return "", fmt.Errorf("path %q: %w once %%2F is decoded", p, err)
			}
			return p, nil
		}
		b.WriteString(rest[:i])
		name, v := rest[i+1:j], params[rest[i+1:j]]
		rest = rest[j+1:]
		wild := isWildcard(route, name)
		if v == "" {
			return "", fmt.Errorf("path parameter %q: missing", name)
		}
		// Dot segments are refused in single-segment values too: a proxy may decode %2F.
		if err := checkSegments(v, !wild); err != nil {
			return "", fmt.Errorf("path parameter %q: %w", name, err)
		}
		// Gitea ends a parameter followed by text in its segment ({sha}.{diffType})
		// at the first byte of that text.
		if rest != "" && rest[0] != '/' && strings.IndexByte(v, rest[0]) >= 0 {
			return "", fmt.Errorf("path parameter %q: %q not allowed in this route", name, rest[:1])
		}
		if !wild {
			b.WriteString(url.PathEscape(v)) // "/" as %2F; any other "%" begins a %XX of its own
			continue
		}
		for k, seg := range strings.Split(v, "/") { // each segment escaped alone: no second copy to undo %2F
			if k > 0 {
				b.WriteByte('/')
			}
			b.WriteString(url.PathEscape(seg))
		}
	}
}

// checkSegments refuses invalid UTF-8, control characters, "." and ".."
// segments and, unless allowEmpty, empty segments of the "/"-separated v.
func checkSegments(v string, allowEmpty bool) error {
	switch {
	case !utf8.ValidString(v):
		return errors.New("invalid utf-8")
	case strings.IndexFunc(v, unicode.IsControl) >= 0:
		return errors.New("control character not allowed")
	}
	for seg := range strings.SplitSeq(v, "/") {
		if seg == "." || seg == ".." {
			return errors.New("dot segment not allowed")
		}
		if seg == "" && !allowEmpty {
			return errors.New("empty segment not allowed")
		}
	}
	return nil
}

// checkRawPath validates the path argument of gitea_api_request, relative to
// /api/v1 (for example "/repos/alice/demo/branches/feature/x"), and returns it
// with one leading "/". A leading "/api/v1" is refused, not stripped, so that a
// path has one spelling. The result is not percent-encoded: "%" is refused, so
// values that need %2F go through the generated tool of their operation.
func checkRawPath(p string) (string, error) {
	first, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	switch {
	case strings.HasPrefix(p, "//") || strings.Contains(first, ":"): // //host or scheme:
		return "", errors.New("path: absolute url not allowed")
	case strings.ContainsAny(p, "?#"):
		return "", errors.New("path: query or fragment not allowed (pass query parameters separately)")
	case strings.Contains(p, "%"):
		return "", errors.New("path: percent-encoding not allowed (use the operation's own tool)")
	case strings.Contains(p, `\`):
		return "", errors.New("path: backslash not allowed")
	}
	p = "/" + strings.TrimPrefix(p, "/")
	if p == "/api/v1" || strings.HasPrefix(p, "/api/v1/") {
		return "", errors.New("path: must be relative to /api/v1, without that prefix")
	}
	if err := checkSegments(p[1:], false); err != nil {
		return "", fmt.Errorf("path: %w", err)
	}
	return p, nil
}

// resolve validates a request's arguments against its operation's input
// schema, splits them into path parameters, query and body, and encodes the
// path (expand). It is the one place every door's arguments are validated
// (the generated tools, gitea_call_operation, gitea_api_request, the
// workflow tools' steps): a body member the schema does not document, in any
// spelling Gitea would fold into a documented one, is refused here, so the
// policy and Gitea see the same body.
func (x *executor) resolve(r *request) (string, map[string]string, url.Values, any, error) {
	params := map[string]string{}
	q := url.Values{}
	var body any
	schema, err := r.op.inputSchema()
	if err != nil {
		return "", nil, nil, nil, err
	}
	if err := schema.Validate(r.args); err != nil {
		return "", nil, nil, nil, &kindError{"invalid_arguments", err}
	}
	wholeNumbers(r.args)
	for _, p := range r.op.params {
		v, ok := r.args[p.Name]
		if !ok {
			continue
		}
		switch p.In {
		case "path":
			params[p.Name] = scalar(v)
		case "query":
			addQuery(q, p.Name, v, p.CollectionFormat)
		case "body":
			body = v
		case "formData":
			s, _ := v.(string)
			if n := base64.StdEncoding.DecodedLen(len(s)); n > x.cfg.maxBinary {
				return "", nil, nil, nil, &kindError{"payload_too_large", fmt.Errorf("%s: %d bytes decoded would exceed MAX_BINARY_BYTES (%d)", p.Name, n, x.cfg.maxBinary)}
			}
			content, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return "", nil, nil, nil, fmt.Errorf("%s: not valid base64: %w", p.Name, err)
			}
			body = formFile{field: p.Name, content: content}
		}
	}
	p, err := x.routes().expand(r.op.routeSpec(), params)
	return p, params, q, body, err
}

// rawCall matches gitea_api_request's method and path to the operation Gitea
// would serve and returns it with the arguments its generated tool would
// take: the path's values and the query's texts read as their parameters'
// types (typed), and the body under its parameter's name.
func (x *executor) rawCall(method, rawPath string, query map[string]any, body any) (*operation, map[string]any, error) {
	p, err := checkRawPath(rawPath)
	if err != nil {
		return nil, nil, err
	}
	id, params, err := x.routes().match(method, p)
	if err != nil {
		return nil, nil, err
	}
	op, ok := x.cat.operation(id)
	if !ok {
		return nil, nil, fmt.Errorf("operation %q is disabled", id)
	}
	schema, err := op.inputSchema()
	if err != nil {
		return nil, nil, err
	}
	args := map[string]any{}
	for k, v := range params {
		args[k] = typed(schema.Properties[k], v)
	}
	for k, v := range query {
		// Only the operation's own query parameters: sudo, token or
		// access_token would change who acts behind the policy's back.
		if !slices.ContainsFunc(op.params, func(p param) bool { return p.In == "query" && p.Name == k }) {
			return nil, nil, fmt.Errorf("query parameter %q is not a parameter of %s", k, op.ID)
		}
		args[k] = typed(schema.Properties[k], v)
	}
	switch i := slices.IndexFunc(op.params, func(p param) bool { return p.In == "body" }); {
	case body == nil:
	case i < 0:
		return nil, nil, &kindError{"invalid_arguments", fmt.Errorf("body: %s takes no JSON body", op.ID)}
	default:
		args[op.params[i].Name] = body
	}
	return op, args, nil
}

// typed reads the text of a path segment or query value as Gitea reads it
// for a parameter of schema s: a JSON number, true or false, or a list of
// one; other text stays text, for the schema to refuse.
func typed(s *Schema, v any) any {
	text, ok := v.(string)
	switch {
	case !ok || s == nil:
	case s.Type == "array":
		return []any{typed(s.Items, text)}
	case (s.Type == "integer" || s.Type == "number") && schemaNumber.MatchString(text):
		return json.Number(text)
	case s.Type == "boolean":
		if b, err := strconv.ParseBool(text); err == nil {
			return b
		}
	}
	return v
}

// routeSpec is one operation of the OpenAPI document.
type routeSpec struct {
	Method, Route, OperationID string
	Enums                      map[string][]string // allowed values of enum path parameters
}

// routeTable finds the operation Gitea runs for a method and path: per method a
// trie of segment patterns, searched in the order of Gitea's router (chi).
type routeTable struct{ roots map[string]*routeNode }

// routeNode is one segment of the trie.
type routeNode struct {
	lits   map[string]*routeNode // children for literal segments
	params []*routeNode          // children for parameter segments, those with text first
	toks   []routeToken          // the pattern of a parameter child
	wild   []*tableRoute         // routes whose wildcard starts at this segment
	ends   []*tableRoute         // routes ending here; more than one is a tie
}

// tableRoute is a routeSpec split into segments of tokens.
type tableRoute struct {
	spec routeSpec
	segs [][]routeToken
	wild int // index of the wildcard segment, -1 if none
}

// routeToken is literal text or, if param, a parameter name.
type routeToken struct {
	text  string
	param bool
}

// newRouteTable compiles routes; methods may be in any case.
func newRouteTable(routes []routeSpec) *routeTable {
	t := &routeTable{roots: map[string]*routeNode{}}
	for _, s := range routes {
		s.Method = strings.ToUpper(s.Method)
		r := &tableRoute{spec: s, wild: -1}
		if t.roots[s.Method] == nil {
			t.roots[s.Method] = &routeNode{}
		}
		n := t.roots[s.Method]
		for i, seg := range strings.Split(strings.TrimPrefix(s.Route, "/"), "/") {
			var toks []routeToken // "{sha}.{diffType}" splits into "", "sha", ".", "diffType", ""
			for k, part := range strings.Split(strings.ReplaceAll(seg, "}", "{"), "{") {
				if part != "" {
					toks = append(toks, routeToken{text: part, param: k%2 == 1})
				}
			}
			r.segs = append(r.segs, toks)
			if len(toks) == 1 && toks[0].param && isWildcard(s.Route, toks[0].text) && r.wild < 0 {
				r.wild = i
			} else if r.wild < 0 {
				n = n.child(toks)
			}
		}
		if r.wild >= 0 {
			n.wild = append(n.wild, r)
		} else {
			n.ends = append(n.ends, r)
		}
	}
	return t
}

// child returns n's child for the segment pattern toks, adding it if missing.
func (n *routeNode) child(toks []routeToken) *routeNode {
	if len(toks) == 1 && !toks[0].param {
		if n.lits == nil {
			n.lits = map[string]*routeNode{}
		}
		if n.lits[toks[0].text] == nil {
			n.lits[toks[0].text] = &routeNode{}
		}
		return n.lits[toks[0].text]
	}
	for _, c := range n.params {
		if slices.EqualFunc(c.toks, toks, func(a, b routeToken) bool { return a.param == b.param && (a.param || a.text == b.text) }) {
			return c
		}
	}
	c := &routeNode{toks: toks}
	n.params = append(n.params, c)
	slices.SortStableFunc(n.params, func(a, b *routeNode) int { return len(b.toks) - len(a.toks) })
	return c
}

// match returns the operation and the unescaped path parameters for method and
// path (from checkRawPath or encodePath). As in Gitea's router, a literal
// segment beats a parameter with text ({index}.{diffType}), which beats a
// parameter, which beats a wildcard, at the first segment where routes differ.
// No match, a tie, and an enum value Gitea may route elsewhere are errors.
func (t *routeTable) match(method, path string) (string, map[string]string, error) {
	method = strings.ToUpper(method)
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	var found []*tableRoute
	if root := t.roots[method]; root != nil {
		found = root.find(segs, 0)
	}
	switch {
	case len(found) == 0:
		return "", nil, fmt.Errorf("no route for %s %q", method, path)
	case len(found) > 1:
		return "", nil, fmt.Errorf("ambiguous route for %s %q: %s or %s", method, path, found[0].spec.OperationID, found[1].spec.OperationID)
	}
	best, params := found[0], map[string]string{}
	best.bind(segs, params)
	for name, allowed := range best.spec.Enums {
		// Gitea checks these with regexps the document does not give; do not guess.
		if v, ok := params[name]; ok && !slices.Contains(allowed, v) {
			return "", nil, fmt.Errorf("uncertain route for %s %q: %s wants %s in %q", method, path, best.spec.OperationID, name, allowed)
		}
	}
	return best.spec.OperationID, params, nil
}

// find returns the routes below n that match segs[i:] first in Gitea's order:
// literal, parameter with text, parameter, wildcard. More than one is a tie.
func (n *routeNode) find(segs []string, i int) []*tableRoute {
	if i == len(segs) {
		return n.ends
	}
	if c := n.lits[segs[i]]; c != nil {
		if found := c.find(segs, i+1); found != nil {
			return found
		}
	}
	for _, c := range n.params {
		if matchSegment(c.toks, segs[i], nil) {
			if found := c.find(segs, i+1); found != nil {
				return found
			}
		}
	}
	var found []*tableRoute
	for _, r := range n.wild {
		if r.bind(segs, nil) {
			found = append(found, r)
		}
	}
	return found
}

// bind reports whether segs match r and, if params is not nil, records the values.
func (r *tableRoute) bind(segs []string, params map[string]string) bool {
	extra := len(segs) - len(r.segs) // segments beyond one taken by the wildcard
	if r.wild < 0 && extra != 0 || extra < 0 {
		return false
	}
	for i, toks := range r.segs {
		k := i // index in segs
		if i > r.wild {
			k += extra
		}
		if i == r.wild {
			span := segs[i : i+extra+1]
			if slices.Contains(span, "") || !bindValue(toks[0].text, strings.Join(span, "/"), params) {
				return false
			}
		} else if !matchSegment(toks, segs[k], params) {
			return false
		}
	}
	return true
}

// matchSegment matches one path segment against its tokens. A parameter followed by
// text ends at the first byte of that text, as in chi; one followed by another
// parameter ({a}{b}, not in the document) never matches.
func matchSegment(toks []routeToken, seg string, params map[string]string) bool {
	for k, tok := range toks {
		if !tok.param {
			if !strings.HasPrefix(seg, tok.text) {
				return false
			}
			seg = seg[len(tok.text):]
			continue
		}
		end := len(seg)
		if k+1 < len(toks) {
			if end = strings.IndexByte(seg, toks[k+1].text[0]); end < 0 || toks[k+1].param {
				return false
			}
		}
		if !bindValue(tok.text, seg[:end], params) {
			return false
		}
		seg = seg[end:]
	}
	return seg == ""
}

// bindValue accepts a non-empty, validly escaped value and records it unescaped.
func bindValue(name, v string, params map[string]string) bool {
	u, err := url.PathUnescape(v)
	if params != nil {
		params[name] = u
	}
	return v != "" && err == nil
}

// without adds to err, the refusal of a read's last path parameter given
// empty, "." or "/" (a file path meant as the root), the operation of the
// route without that parameter, if the document has one: repoGetContentsList
// for repoGetContents.
func (t *routeTable) without(spec routeSpec, params map[string]string, err error) error {
	i := strings.LastIndex(spec.Route, "/{")
	if i < 0 || spec.Method != http.MethodGet || !strings.HasSuffix(spec.Route, "}") {
		return err
	}
	name := strings.TrimSuffix(spec.Route[i+2:], "}")
	if strings.ContainsAny(name, "{}") || strings.Trim(params[name], "./") != "" || !strings.HasPrefix(err.Error(), fmt.Sprintf("path parameter %q:", name)) {
		return err
	}
	p, perr := encodePath(spec.Route[:i], params)
	if perr != nil {
		return err
	}
	if op, _, merr := t.match(spec.Method, p); merr == nil && op != spec.OperationID {
		return fmt.Errorf("%w; without %s, call %s (%s %s)", err, name, op, spec.Method, spec.Route[:i])
	}
	return err
}

// expand encodes spec's route with params and confirms that the path resolves
// back to spec's operation with the same values, so a value another route
// shadows (head "commits" in pulls/{base}/{head}) is refused instead of sent.
func (t *routeTable) expand(spec routeSpec, params map[string]string) (string, error) {
	p, err := encodePath(spec.Route, params)
	if err != nil {
		return "", t.without(spec, params, err)
	}
	op, got, err := t.match(spec.Method, p)
	same := err == nil && op == spec.OperationID
	for k, v := range got {
		same = same && params[k] == v
	}
	if !same {
		return "", fmt.Errorf("path %q does not resolve to operation %q", p, spec.OperationID)
	}
	return p, nil
}

// wholeNumbers rewrites in place each whole number in v written another way
// (1.0, 1e2), which JSON Schema counts as an integer, as Go's decoder in
// Gitea needs one: "1", "100" (a path 1.0 is not found, limit=1.0 is
// ignored, and 0.0 does not decode into an int64). Others stay as written.
func wholeNumbers(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if n, ok := whole(e); ok {
				v[k] = n
			}
		}
	case []any:
		for i, e := range v {
			if n, ok := whole(e); ok {
				v[i] = n
			}
		}
	}
}

// whole returns e, when a number written with a fraction or an exponent, as
// the text of the integer it equals; a container it rewrites in place.
func whole(e any) (json.Number, bool) {
	n, ok := e.(json.Number)
	if !ok {
		wholeNumbers(e)
		return "", false
	}
	if !strings.ContainsAny(string(n), ".eE") {
		return "", false
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || math.Abs(f) >= 1<<53 {
		return "", false
	}
	return json.Number(strconv.FormatInt(int64(f), 10)), true
}

// scalar formats a decoded JSON scalar for a path or query.
func scalar(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	}
	return string(encode(v))
}

// addQuery adds a query argument; arrays repeat the key ("multi") or join
// with commas.
func addQuery(q url.Values, name string, v any, format string) {
	list, ok := v.([]any)
	if !ok {
		q.Add(name, scalar(v))
		return
	}
	var parts []string
	for _, e := range list {
		parts = append(parts, scalar(e))
	}
	if format == "multi" {
		q[name] = append(q[name], parts...)
	} else {
		q.Add(name, strings.Join(parts, ","))
	}
}

// defaultMessage returns args with the commit message Gitea writes for a
// contents write that gives none: "Add", "Update" or "Delete" and the paths
// it writes, which the file's path parameter may hold; so its effects and
// references are judged as those of a message written out.
func defaultMessage(id string, args map[string]any, params map[string]string) map[string]any {
	if !slices.Contains(contentsOps, id) {
		return args
	}
	body, _ := args["body"].(map[string]any)
	if m, _ := body["message"].(string); body == nil || strings.TrimSpace(m) != "" {
		return args
	}
	paths := []string{params["filepath"]}
	files, _ := body["files"].([]any)
	for _, f := range files {
		f, _ := f.(map[string]any)
		for _, k := range []string{"path", "from_path"} {
			if s, ok := f[k].(string); ok {
				paths = append(paths, s)
			}
		}
	}
	body = maps.Clone(body)
	body["message"] = "Update " + strings.Join(paths, ", ")
	args = maps.Clone(args)
	args["body"] = body
	return args
}
