package main

// The OpenAPI reader: Gitea's own document (embedded, live or a file) turned
// into operations and their input schemas, from which the tools are
// generated. It decides no access; a body schema it cannot follow is closed
// ({} only), never opened.

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// embeddedOpenAPI is Gitea 1.26.0's own OpenAPI 2.0 document (served by Gitea at
// /swagger.v1.json), minified. It is the default source of the generated tools,
// so the server works offline.
//
//go:embed gitea-openapi-1.26.0.json
var embeddedOpenAPI []byte

// maxRefDepth bounds how many nested $ref definitions are inlined into a body
// schema; a deeper object becomes {"type":"object","additionalProperties":false},
// which takes only {}: what it may reach is unknown. No body of Gitea 1.26.0's
// document is that deep (TestBodySchemasClosed).
const maxRefDepth = 3

// operation is one Gitea API operation of the OpenAPI document.
type operation struct {
	ID      string
	Method  string // upper case
	Route   string // relative to /api/v1, with {name} placeholders
	Summary string
	Tags    []string

	raw        []byte // the operation object, whose parameters are decoded on first use
	defs       *definitions
	paramsOnce sync.Once
	params     []param
	paramsErr  error
	schemaOnce sync.Once
	schema     *Schema
	schemaErr  error
	shapeOnce  sync.Once // compactShape
	shape      *shape
}

// param is an OpenAPI 2.0 parameter object.
type param struct {
	Name             string         `json:"name"`
	In               string         `json:"in"` // path, query, body or formData
	Description      string         `json:"description"`
	Required         bool           `json:"required"`
	Type             string         `json:"type"`
	Format           string         `json:"format"`
	Enum             []any          `json:"enum"`
	Default          any            `json:"default"`
	Minimum          *json.Number   `json:"minimum"`
	Items            *swaggerSchema `json:"items"`
	CollectionFormat string         `json:"collectionFormat"`
	Schema           *swaggerSchema `json:"schema"`
}

// swaggerSchema is the part of an OpenAPI 2.0 schema object that the tool
// schemas are generated from.
type swaggerSchema struct {
	Ref                  string                    `json:"$ref"`
	Type                 string                    `json:"type"`
	Format               string                    `json:"format"`
	Description          string                    `json:"description"`
	Enum                 []any                     `json:"enum"`
	Default              any                       `json:"default"`
	Items                *swaggerSchema            `json:"items"`
	Properties           map[string]*swaggerSchema `json:"properties"`
	Required             []string                  `json:"required"`
	AdditionalProperties json.RawMessage           `json:"additionalProperties"`
	UniqueItems          bool                      `json:"uniqueItems"`
	ReadOnly             bool                      `json:"readOnly"`
}

// parseOpenAPI reads an OpenAPI 2.0 document into operations sorted by
// operationId. Only what every operation needs is decoded at start (id,
// method, route, summary, tags); parameters and definitions are decoded when
// a schema first needs them, so the server starts in a few milliseconds.
// The paths are walked in place, not split into maps: a route or method
// given twice is read twice, and its operationId is then a duplicate.
//
// Its text (summaries, descriptions, names) reaches the model through
// tools/list and gitea_find_operations: a live or file document has its
// hidden characters removed as it is read (readDoc); the embedded one has
// none (TestEmbeddedOpenAPIPlain).
func parseOpenAPI(doc []byte) ([]*operation, error) {
	top, err := members(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	if v := string(bytes.TrimSpace(top["swagger"])); v != `"2.0"` {
		return nil, fmt.Errorf("openapi document: swagger version %s, want \"2.0\"", v)
	}
	defs := &definitions{raw: top["definitions"], respRaw: top["responses"]}
	var ops []*operation
	var bad error // the first path item or operation that cannot be read
	err = eachMember(top["paths"], func(route string, item []byte) bool {
		err := eachMember(item, func(method string, raw []byte) bool {
			if slices.Contains(httpMethods, method) { // not "parameters" or an extension
				var op *operation
				if op, bad = readOperation(method, route, raw, defs); bad == nil {
					ops = append(ops, op)
				}
			}
			return bad == nil
		})
		if err != nil {
			bad = fmt.Errorf("openapi document: %s: %w", route, err)
		}
		return bad == nil
	})
	switch {
	case err != nil:
		return nil, fmt.Errorf("openapi document: paths: %w", err)
	case bad != nil:
		return nil, bad
	case len(ops) == 0:
		return nil, fmt.Errorf("openapi document: no operations")
	}
	slices.SortFunc(ops, func(a, b *operation) int { return strings.Compare(a.ID, b.ID) })
	for i := 1; i < len(ops); i++ {
		if op := ops[i]; op.ID == ops[i-1].ID {
			return nil, fmt.Errorf("openapi document: %s %s: missing, invalid or duplicate operationId %q", strings.ToLower(op.Method), op.Route, op.ID)
		}
	}
	return ops, nil
}

// sameOperations refuses a document (live or a file) that gives an operation
// of Gitea 1.26.0's embedded document another operationId, or its
// operationId another method or route: the policy names operations by id
// and by route, so a relabelled operation would carry another's grant
// (issueCreateIssue on PUT /user/starred/{owner}/{repo}). A known
// operation's route must be the same, placeholder names included; an
// operation the embedded document lacks is judged by its route alone, whose
// repository placeholders must stand as the policy reads them. A route must be plain segments: an empty,
// "." or ".." segment could reach another route than the one judged.
// A known operation must also take the same arguments, each where Gitea
// reads it: the policy reads body fields by their documented names, so
// delete_branch_after_merge renamed Delete_Branch_After_Merge in the body's
// definition (which Gitea folds into the same field) would have it judge a
// merge that keeps the head branch while Gitea deletes it.
func sameOperations(ops []*operation) error {
	known, err := parseOpenAPI(embeddedOpenAPI)
	if err != nil {
		return err
	}
	key := func(op *operation) string { return op.Method + " " + routeParam.ReplaceAllString(op.Route, "{}") }
	byID, byKey := map[string]*operation{}, map[string]string{}
	for _, op := range known {
		byID[op.ID], byKey[key(op)] = op, op.ID
	}
	for _, op := range ops {
		k, want := key(op), byID[op.ID]
		if want != nil && want.Method+" "+want.Route != op.Method+" "+op.Route || byKey[k] != "" && byKey[k] != op.ID ||
			!plainRoute.MatchString(op.Route) || !repoParamsInPlace(op.Route) {
			return fmt.Errorf("openapi document: %s %s: operation %q differs from Gitea 1.26.0's document", strings.ToLower(op.Method), op.Route, op.ID)
		}
		if want == nil {
			continue
		}
		got, err := op.inputSchema()
		if err != nil {
			return fmt.Errorf("openapi document: %w", err)
		}
		w, _ := want.inputSchema()
		if !bytes.Equal(encode(got), encode(w)) || !slices.EqualFunc(op.params, want.params, func(a, b param) bool { return a.In == b.In && a.Name == b.Name }) {
			return fmt.Errorf("openapi document: %s %s: operation %q takes other arguments than in Gitea 1.26.0's document", strings.ToLower(op.Method), op.Route, op.ID)
		}
	}
	return nil
}

// repoParamsInPlace reports whether each repoParams pair route holds stands
// as in its example: the owner before the repository, and next to it where
// the example has them so. The policy judges owner/repo by these names, so
// /repos/{repo}/{owner} would have it judge another repository than Gitea
// touches.
func repoParamsInPlace(route string) bool {
	for _, rp := range repoParams {
		o, r := strings.Index(route, rp.owner), strings.Index(route, rp.repo)
		if o >= 0 && r >= 0 && (o > r || strings.Contains(rp.example, rp.owner+"/"+rp.repo) && !strings.Contains(route, rp.owner+"/"+rp.repo)) {
			return false
		}
	}
	return true
}

// routeParam matches a placeholder of a route; plainRoute matches a route of
// non-empty segments of letters, digits, "_", "-", "." and placeholders,
// none of them "." or "..".
var (
	routeParam = regexp.MustCompile(`\{[^}]*\}`)
	plainRoute = regexp.MustCompile(`^(?:/(?:[A-Za-z0-9_{}-][A-Za-z0-9_.{}-]*|\.[A-Za-z0-9_{}-][A-Za-z0-9_.{}-]*|\.\.[A-Za-z0-9_.{}-]+))+$`)
)

// readOperation reads the members every operation needs, stopping once they
// are found: Gitea's document has them before the parameters and responses,
// which are read when a schema is built.
func readOperation(method, route string, raw []byte, defs *definitions) (*operation, error) {
	op := &operation{Method: strings.ToUpper(method), Route: route, raw: raw, defs: defs}
	found := 0
	err := eachMember(raw, func(key string, v []byte) bool {
		var err error
		switch key {
		case "operationId":
			op.ID, err = decodeString(v)
		case "summary":
			op.Summary, err = decodeString(v)
		case "tags":
			op.Tags, err = decodeStrings(v)
		default:
			return true
		}
		if err != nil {
			op.ID = "" // reported below
		}
		found++
		return found < 3
	})
	if err != nil {
		return nil, fmt.Errorf("openapi document: %s %s: %w", method, route, err)
	}
	if !validToolName(op.ID) {
		return nil, fmt.Errorf("openapi document: %s %s: missing, invalid or duplicate operationId %q", method, route, op.ID)
	}
	return op, nil
}

// decodeStrings decodes a JSON array of strings such as an operation's tags.
// A plain array is split with the scanner (encoding/json's reflection took a
// sixth of the start-up parse); anything else goes to encoding/json, whose
// result and errors stand.
func decodeStrings(v []byte) ([]string, error) {
	var out []string
	for i := 1; len(v) > 1 && v[0] == '['; {
		i = skipSpace(v, i)
		end, err := skipValue(v, i)
		if err != nil || end == i {
			break
		}
		s, err := decodeString(v[i:end])
		if err != nil {
			break
		}
		out = append(out, s)
		if i = skipSpace(v, end); i == len(v)-1 && v[i] == ']' {
			return out, nil
		} else if i >= len(v) || v[i] != ',' {
			break
		}
		i++
	}
	out = nil
	return out, json.Unmarshal(v, &out)
}

// httpMethods are the operation keys of an OpenAPI path item.
var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch"}

// definitions are the document's schema definitions, split on first use.
type definitions struct {
	once   sync.Once
	raw    []byte
	byName map[string][]byte

	respOnce  sync.Once
	respRaw   []byte // the document's named responses
	responses map[string][]byte
}

// response returns the raw object of a named response.
func (d *definitions) response(name string) ([]byte, bool) {
	d.respOnce.Do(func() { d.responses, _ = members(d.respRaw) })
	b, ok := d.responses[name]
	return b, ok
}

// get returns the raw schema of a definition.
func (d *definitions) get(name string) ([]byte, bool) {
	d.once.Do(func() { d.byName, _ = members(d.raw) })
	b, ok := d.byName[name]
	return b, ok
}

// validToolName reports whether s is a valid MCP tool name: 1 to 128 of
// A-Z, a-z, 0-9, '_', '-' and '.'.
func validToolName(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for _, c := range []byte(s) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
		if !ok {
			return false
		}
	}
	return true
}

// identityParams are the query parameters by which Gitea lets a request act
// as another user (sudo) or with another token; Gitea 1.26.0's document
// gives no operation one, a live or file document must not either
// (TestE2EOpenAPIIdentityParams).
var identityParams = []string{"sudo", "token", "access_token"}

// inputSchema returns the operation's tool input schema, built on first use:
// path, query and body parameters under their names in the document, the body
// schema inlined from the definitions, file uploads as base64 strings.
func (op *operation) inputSchema() (*Schema, error) {
	op.schemaOnce.Do(func() {
		if op.schemaErr = op.parameters(); op.schemaErr != nil {
			return
		}
		s := &Schema{Type: "object", Properties: map[string]*Schema{}, AdditionalProperties: falseSchema()}
		for _, p := range op.params {
			if p.In == "query" && slices.ContainsFunc(identityParams, func(n string) bool { return strings.EqualFold(n, p.Name) }) {
				op.schemaErr = fmt.Errorf("%s: query parameter %q would change who acts", op.ID, p.Name)
				return
			}
			var ps *Schema
			switch p.In {
			case "body":
				if p.Schema == nil {
					op.schemaErr = fmt.Errorf("%s: body parameter %q has no schema", op.ID, p.Name)
					return
				}
				ps = op.convert(p.Schema, 0, nil)
			case "formData":
				if p.Type != "file" {
					op.schemaErr = fmt.Errorf("%s: form parameter %q of type %q", op.ID, p.Name, p.Type)
					return
				}
				ps = &Schema{Type: "string", Format: "byte"}
				p.Description = strings.TrimSpace(p.Description + " (file content, base64-encoded)")
			default:
				ps = op.convert(&swaggerSchema{Type: p.Type, Format: p.Format, Enum: p.Enum, Default: p.Default, Items: p.Items}, 0, nil)
				if p.Minimum != nil {
					ps.Minimum = p.Minimum
				}
			}
			if p.Description != "" {
				ps.Description = oneLine(p.Description)
			}
			s.Properties[p.Name] = ps
			if p.Required || p.In == "path" {
				s.Required = append(s.Required, p.Name)
			}
		}
		op.schema = s
	})
	return op.schema, op.schemaErr
}

// convert turns an OpenAPI 2.0 schema into a tool schema, inlining $ref
// definitions up to maxRefDepth and never following a cycle. Objects are
// closed: a member the document does not name is refused, unless the
// document gives additionalProperties a schema (a free-form map, such as a
// webhook's config). A body is then the documented fields, spelled as
// documented, and nothing Gitea would fold into them. A schema without a
// type (a label given by id or name) stays open: Gitea decodes it into an
// interface{}, which folds no key.
func (op *operation) convert(in *swaggerSchema, depth int, stack []string) *Schema {
	if in.Ref != "" {
		name := strings.TrimPrefix(in.Ref, "#/definitions/")
		raw, ok := op.defs.get(name)
		var def swaggerSchema
		if !ok || depth >= maxRefDepth || slices.Contains(stack, name) || json.Unmarshal(raw, &def) != nil {
			return &Schema{Type: "object", AdditionalProperties: falseSchema()}
		}
		return op.convert(&def, depth+1, append(stack, name))
	}
	s := &Schema{Type: in.Type, Format: in.Format, Enum: in.Enum, Default: in.Default}
	if in.Type == "array" { // Gitea's document sets uniqueItems on strings too, which strict validators reject
		s.UniqueItems = in.UniqueItems
	}
	if in.Description != "" && depth > 0 {
		s.Description = in.Description
	}
	if in.Items != nil {
		s.Items = op.convert(in.Items, depth, stack)
	}
	if len(in.Properties) > 0 {
		s.Properties = make(map[string]*Schema, len(in.Properties))
		for name, p := range in.Properties {
			if p.ReadOnly {
				continue
			}
			ps := op.convert(p, depth, stack)
			if p.Description != "" {
				ps.Description = oneLine(p.Description)
			}
			s.Properties[name] = ps
		}
		s.Required = in.Required
	}
	if len(in.AdditionalProperties) > 0 && string(in.AdditionalProperties) != "true" && string(in.AdditionalProperties) != "false" {
		var ap swaggerSchema
		if json.Unmarshal(in.AdditionalProperties, &ap) == nil {
			s.AdditionalProperties = op.convert(&ap, depth, stack)
		}
	}
	if s.AdditionalProperties == nil && s.Type == "object" {
		s.AdditionalProperties = falseSchema()
	}
	return s
}

// parameters decodes op.params on first use, without building the schema
// (the route table reads only path enums).
func (op *operation) parameters() error {
	op.paramsOnce.Do(func() {
		fields, err := members(op.raw)
		if err != nil {
			op.paramsErr = fmt.Errorf("%s: %w", op.ID, err)
		} else if raw := fields["parameters"]; raw != nil {
			if err := json.Unmarshal(raw, &op.params); err != nil {
				op.paramsErr = fmt.Errorf("%s: parameters: %w", op.ID, err)
			}
		}
	})
	return op.paramsErr
}

// routeSpec returns what the route table needs of the operation: its route
// and the allowed values of enum path parameters. Only an operation object
// that may spell the key "enum" is decoded for them (spellsEnum): building
// the table decoded all 471 of Gitea 1.26.0's, 20 ms of the first call, for 13.
func (op *operation) routeSpec() routeSpec {
	spec := routeSpec{Method: op.Method, Route: op.Route, OperationID: op.ID}
	if !spellsEnum(op.raw) {
		return spec
	}
	op.parameters() // a broken operation keeps no enums
	for _, p := range op.params {
		if p.In == "path" && len(p.Enum) > 0 {
			spec.Enums = map[string][]string{}
			for _, e := range p.Enum {
				spec.Enums[p.Name] = append(spec.Enums[p.Name], fmt.Sprint(e))
			}
		}
	}
	return spec
}

// spellsEnum reports whether b holds "enum" in any case or a \u escape: the
// forms in which encoding/json reads the key (no other letter folds to e, n,
// u or m).
func spellsEnum(b []byte) bool {
	for i := 0; i+4 <= len(b); i++ {
		if b[i]|0x20 == 'e' && b[i+1]|0x20 == 'n' && b[i+2]|0x20 == 'u' && b[i+3]|0x20 == 'm' {
			return true
		}
	}
	return bytes.Contains(b, []byte(`\u`))
}

// oneLine joins the lines of a description.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
