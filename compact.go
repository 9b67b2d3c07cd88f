package main

// The compact view (README "Results"): a successful JSON answer is projected
// along its response definition in the OpenAPI document before the result
// pipeline scrubs and bounds it, so that redaction, masking and the output
// bounds run on what is delivered. GITEA_MCP_RESULTS=full, or full: true on
// gitea_call_operation, delivers Gitea's answer whole; workflow tools decode
// whole answers for their gates. It decides no access, and an answer it
// cannot project is left whole for the pipeline to scrub and bound.

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
)

// compactIdentity says what a nested object of a definition shrinks to: the
// members that identify it. A top-level object (or an element of a top-level
// list) keeps every member; only the objects inside it shrink. Examples
// (TestCompactTable): a pull request's "user" {"id":2,"login":"bob",
// "full_name":"","avatar_url":...} becomes {"login":"bob"}; its head's "repo"
// becomes {"full_name":"alice/demo"}; a label in "labels" becomes
// {"name":"bug","color":"ee0701"}.
var compactIdentity = map[string][]string{
	"User":           {"login", "full_name"},
	"Repository":     {"full_name"},
	"RepositoryMeta": {"full_name"},
	"Label":          {"name", "color"},
	"Milestone":      {"id", "title"},
	"Team":           {"id", "name"},
	"Organization":   {"username"},
}

// compactRepeats are members of a definition that only repeat another member
// when their values are equal, and are then dropped. Example
// (TestCompactTable): a pull request's head {"label":"bob/change",
// "ref":"bob/change"} keeps only ref; a fork's "label":"bob:change" stays.
var compactRepeats = map[string][2]string{"PRBranchInfo": {"label", "ref"}}

// compactDrop reports whether a member is left out of the compact view:
// URL members other than html_url (url, clone_url, _links, ...), and empty
// values: null, "", [], {}, Gitea's zero times (Go's and Unix's) and the
// zeros of compactUnusedZero. Examples (TestCompactTable):
// "avatar_url":"http://..." and "merged_at":null are dropped;
// "html_url":"http://...", "mergeable":false and "comments":0 are kept.
func compactDrop(key string, v []byte) bool {
	if key != "html_url" && (key == "url" || key == "_links" || strings.HasSuffix(key, "_url")) {
		return !compactKeepEmpty[key]
	}
	switch string(v) {
	case "null", `""`, "[]", "{}", `"0001-01-01T00:00:00Z"`, `"1970-01-01T00:00:00Z"`:
		return !compactKeepEmpty[key]
	case "0":
		return compactUnusedZero[key]
	}
	return false
}

// compactUnusedZero are counters whose 0 only says a feature is not in use
// (not pinned, never edited, not migrated, no estimate); any other number
// stays. Examples (TestCompactTable): "pin_order":0 is dropped, "pin_order":2
// and "comments":0 are kept.
var compactUnusedZero = map[string]bool{"pin_order": true, "content_version": true, "original_author_id": true, "time_estimate": true}

// compactKeepEmpty are members kept even when empty: secret masking tells an
// access token's sha1 by them (secretMember).
var compactKeepEmpty = map[string]bool{"token_last_eight": true, "scopes": true}

// shape is the compact projection of one JSON value, compiled from its
// response definition: an identity keeps only its members; fields project
// the members that have definitions of their own; items projects the
// elements of an array; raw copies a free-form map as it is (a webhook's
// config, whose url is its target). A nil shape drops URLs and empties only.
type shape struct {
	identity []string
	repeats  [2]string // a member dropped when its value equals another's (compactRepeats)
	fields   map[string]*shape
	items    *shape
	raw      bool
}

// maxShapeDepth bounds how deep a response definition is compiled; deeper
// values drop URLs and empties only.
const maxShapeDepth = 6

// compactShape returns the compact projection of op's successful answer,
// compiled on first use; nil when the document does not describe it.
func (op *operation) compactShape() *shape {
	op.shapeOnce.Do(func() {
		fields, err := members(op.raw)
		if err != nil {
			return
		}
		responses, err := members(fields["responses"])
		if err != nil {
			return
		}
		for _, code := range []string{"200", "201"} {
			var r struct {
				Ref    string         `json:"$ref"`
				Schema *swaggerSchema `json:"schema"`
			}
			if json.Unmarshal(responses[code], &r) != nil {
				continue
			}
			if name, ok := strings.CutPrefix(r.Ref, "#/responses/"); ok {
				raw, _ := op.defs.response(name)
				if r.Schema = nil; json.Unmarshal(raw, &r) != nil {
					r.Schema = nil
				}
			}
			if r.Schema != nil {
				op.shape = op.defs.shapeOf(r.Schema, true, 0)
				return
			}
		}
	})
	return op.shape
}

// shapeOf compiles the shape of a schema; top says whether its objects are
// top-level ones, which keep every member.
func (d *definitions) shapeOf(s *swaggerSchema, top bool, depth int) *shape {
	if depth > maxShapeDepth {
		return nil
	}
	if s.Items != nil {
		return &shape{items: d.shapeOf(s.Items, top, depth+1)}
	}
	name := ""
	if s.Ref != "" {
		name = strings.TrimPrefix(s.Ref, "#/definitions/")
		if keep, ok := compactIdentity[name]; ok && !top {
			return &shape{identity: keep}
		}
		raw, ok := d.get(name)
		if !ok {
			return nil
		}
		s = &swaggerSchema{}
		if json.Unmarshal(raw, s) != nil {
			return nil
		}
	}
	if len(s.Properties) == 0 {
		if len(s.AdditionalProperties) > 0 {
			return &shape{raw: true}
		}
		return nil
	}
	// A search answer {"ok":true,"data":[...]} wraps top-level objects.
	wrapper := len(s.Properties) == 2 && s.Properties["ok"] != nil && s.Properties["data"] != nil
	sh := &shape{fields: map[string]*shape{}, repeats: compactRepeats[name]}
	for member, p := range s.Properties {
		if sub := d.shapeOf(p, wrapper && top, depth+1); sub != nil {
			sh.fields[member] = sub
		}
	}
	return sh
}

// compact replaces a successful JSON answer by its compact view, unless the
// request or GITEA_MCP_RESULTS=full asks for it whole, and returns what the
// envelope says of the view ("" for an answer left whole). JSON that is not
// valid, or nested deeper than maxJSONDepth, is left whole for the pipeline,
// which withholds the one and delivers the other as text. The walk checks
// the structure and every value it leaves out; what it keeps is checked by
// the pipeline, so the answer is validated once in all.
func (x *executor) compact(op *operation, ex *sent, full bool) string {
	body := bytes.Trim(ex.body, " \t\r\n") // JSON's white space only: a form feed makes it invalid
	if full || x.cfg.fullResults || ex.status >= 300 || ex.class != jsonBody || len(body) == 0 || body[0] != '{' && body[0] != '[' {
		return ""
	}
	sh, out, ok := op.compactShape(), make([]byte, 0, len(body)), false
	if body[0] == '[' { // elements the output bounds will cut are copied, not projected
		out, ok = sh.array(out, body, maxJSONDepth, x.cfg.maxItems, x.cfg.maxChars)
	} else {
		out, ok = sh.value(out, body, maxJSONDepth)
	}
	if !ok {
		return ""
	}
	ex.body = out
	return compactView
}

// array appends the compact form of the JSON array v: its first maxItems
// elements are projected while the output is at most maxChars bytes, the
// rest copied as it is (the output bounds cut it). It walks at most depth levels and returns false
// when v is nested deeper or is not valid JSON.
func (sh *shape) array(out, v []byte, depth, maxItems, maxChars int) ([]byte, bool) {
	el := sh
	if sh != nil && sh.items != nil {
		el = sh.items
	}
	out = append(out, '[')
	i, ok := skipSpace(v, 1), false
	for n := 0; i < len(v) && v[i] != ']'; n++ {
		if n > 0 {
			out = append(out, ',')
		}
		if n >= maxItems || len(out) > maxChars {
			// the rest as it is: nothing of it is left out, and the
			// pipeline checks all it gets
			return append(out, v[i:]...), true
		}
		end, err := skipValue(v, i)
		if err != nil || end == i {
			return out, false
		}
		if out, ok = el.value(out, v[i:end], depth-1); !ok {
			return out, false
		}
		if i = skipSpace(v, end); i < len(v) && v[i] == ',' {
			if i = skipSpace(v, i+1); i < len(v) && v[i] == ']' {
				return out, false // a trailing comma
			}
		} else if i < len(v) && v[i] != ']' {
			return out, false
		}
	}
	return append(out, ']'), i == len(v)-1
}

// value appends the compact form of the JSON value v, walking at most depth
// levels; false when v is nested deeper or is not valid JSON.
func (sh *shape) value(out, v []byte, depth int) ([]byte, bool) {
	if depth == 0 {
		return out, false
	}
	switch {
	case v[0] == '[':
		return sh.array(out, v, depth, math.MaxInt, math.MaxInt)
	case v[0] != '{' || sh != nil && sh.raw:
		return append(out, v...), true
	}
	out = append(out, '{')
	n, ok := 0, false
	i := skipSpace(v, 1)
	for i < len(v) && v[i] != '}' {
		kEnd, err := skipValue(v, i)
		if err != nil || v[i] != '"' {
			return out, false
		}
		key, plain := plainKey(v[i+1 : kEnd-1])
		if !plain {
			if key, err = decodeString(v[i:kEnd]); err != nil {
				return out, false
			}
		}
		if i = skipSpace(v, kEnd); i >= len(v) || v[i] != ':' {
			return out, false
		}
		i = skipSpace(v, i+1)
		end, err := skipValue(v, i)
		if err != nil || end == i {
			return out, false
		}
		m := v[i:end]
		if i = skipSpace(v, end); i < len(v) && v[i] == ',' {
			if i = skipSpace(v, i+1); i < len(v) && v[i] == '}' {
				return out, false // a trailing comma
			}
		} else if i < len(v) && v[i] != '}' {
			return out, false
		}
		if compactDrop(key, m) || sh != nil && (sh.identity != nil && !slices.Contains(sh.identity, key) ||
			sh.repeats[0] == key && bytes.Equal(m, memberValue(v, sh.repeats[1]))) {
			if !json.Valid(m) { // left out, so checked here
				return out, false
			}
			continue
		}
		var sub *shape
		if sh != nil {
			sub = sh.fields[key]
		}
		mark := len(out)
		if n > 0 {
			out = append(out, ',')
		}
		out = append(appendString(out, key), ':')
		valStart := len(out)
		if out, ok = sub.value(out, m, depth-1); !ok {
			return out, false
		}
		if len(out)-valStart == 2 && (out[valStart] == '{' || out[valStart] == '[') && !compactKeepEmpty[key] { // emptied by the projection
			out = out[:mark]
			continue
		}
		n++
	}
	return append(out, '}'), i == len(v)-1
}

// memberValue returns the raw value of the member name of the JSON object v,
// or nil.
func memberValue(v []byte, name string) []byte {
	var out []byte
	eachMember(v, func(key string, m []byte) bool {
		if key == name {
			out = m
		}
		return out == nil
	})
	return out
}

// plainKey returns a member name of printable ASCII without escapes, as
// Gitea's are, without decoding it (inlined, it allocates nothing); false for
// any other, which decodeString decodes.
func plainKey(b []byte) (string, bool) {
	for _, c := range b {
		if c < 0x20 || c >= 0x80 || c == '\\' || c == '"' {
			return "", false
		}
	}
	return string(b), true
}

// compactView is what the envelope says of a compact answer, so that a model
// knows more exists; gitea_call_operation's full argument says how to get it.
const compactView = "compact"
