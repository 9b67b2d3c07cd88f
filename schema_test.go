package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// schemaSuiteFiles are the JSON-Schema-Test-Suite draft2020-12 files, copied
// unmodified into testdata/schema, for the keywords Schema supports.
var schemaSuiteFiles = []string{
	"type", "enum", "const", "properties", "required", "additionalProperties", "items",
	"minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems", "uniqueItems",
	"pattern", "boolean_schema",
}

// schemaSuiteSkips are the suite groups, by "file: description", whose schemas
// use a keyword Schema does not support, each with that keyword. Unmarshal
// must refuse each with "KEYWORD: unknown keyword", and no other group.
var schemaSuiteSkips = map[string]string{
	"additionalProperties: additionalProperties being false does not allow other properties": "patternProperties",
	"additionalProperties: non-ASCII pattern with additionalProperties":                      "patternProperties",
	"additionalProperties: additionalProperties does not look in applicators":                "allOf",
	"additionalProperties: additionalProperties with propertyNames":                          "propertyNames",
	"additionalProperties: dependentSchemas with additionalProperties":                       "dependentSchemas",
	"items: items and subitems":                                                       "$defs",
	"items: prefixItems with no additional items allowed":                             "prefixItems",
	"items: items does not look in applicators, valid case":                           "allOf",
	"items: prefixItems validation adjusts the starting index for items":              "prefixItems",
	"items: items with heterogeneous array":                                           "prefixItems",
	"properties: properties, patternProperties, additionalProperties interaction":     "patternProperties",
	"uniqueItems: uniqueItems with an array of items":                                 "prefixItems",
	"uniqueItems: uniqueItems with an array of items and additionalItems=false":       "prefixItems",
	"uniqueItems: uniqueItems=false with an array of items":                           "prefixItems",
	"uniqueItems: uniqueItems=false with an array of items and additionalItems=false": "prefixItems",
}

// schemaSuiteGroup is one schema of the test suite with its test cases.
type schemaSuiteGroup struct {
	Description string
	Schema      json.RawMessage
	Tests       []struct {
		Description string
		Data        any
		Valid       bool
	}
}

// TestSchemaSuite runs the official test suite cases. Each schema is also
// marshalled and read back, and that copy must give the same results.
func TestSchemaSuite(t *testing.T) {
	t.Parallel()
	ran, skipped, used := 0, 0, map[string]bool{}
	for _, file := range schemaSuiteFiles {
		data, err := os.ReadFile(filepath.Join("testdata", "schema", file+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var groups []schemaSuiteGroup
		if err := schemaDecode(data, &groups); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, g := range groups {
			id := file + ": " + g.Description
			var s Schema
			err := json.Unmarshal(schemaSuiteStrip(t, g.Schema), &s)
			if kw, skip := schemaSuiteSkips[id]; skip {
				used[id] = true
				if err == nil || err.Error() != kw+": unknown keyword" {
					t.Errorf("%s: unmarshal error %v, want %q", id, err, kw+": unknown keyword")
				}
				skipped += len(g.Tests)
				continue
			}
			if err != nil {
				t.Errorf("%s: %v", id, err)
				continue
			}
			var copied Schema
			if b, err := json.Marshal(s); err != nil || json.Unmarshal(b, &copied) != nil {
				t.Errorf("%s: round trip failed: %s, %v", id, b, err)
				continue
			}
			for _, c := range g.Tests {
				for _, s := range []*Schema{&s, &copied} {
					if err := s.Validate(c.Data); (err == nil) != c.Valid {
						t.Errorf("%s: %s: got error %v, want valid %v", id, c.Description, err, c.Valid)
					}
				}
				ran++
			}
		}
	}
	for id := range schemaSuiteSkips {
		if !used[id] {
			t.Errorf("skip %q matches no group", id)
		}
	}
	t.Logf("suite cases: %d run, %d skipped", ran, skipped)
}

// schemaSuiteStrip removes "$schema", which must name draft 2020-12, and
// "$comment", which is free text; Schema supports neither.
func schemaSuiteStrip(t *testing.T, raw json.RawMessage) json.RawMessage {
	var kws map[string]json.RawMessage
	if json.Unmarshal(raw, &kws) != nil {
		return raw // a boolean schema
	}
	if d := string(kws["$schema"]); d != `"https://json-schema.org/draft/2020-12/schema"` {
		t.Fatalf("$schema is %s, want draft 2020-12", d)
	}
	delete(kws, "$schema")
	delete(kws, "$comment")
	b, err := json.Marshal(kws)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// schemaPullRequest is a tool schema like Gitea's createPullRequest input:
// path parameters and a CreatePullRequestOption-like body of 8 properties.
const schemaPullRequest = `{
  "type": "object",
  "properties": {
    "owner": {"type": "string", "description": "owner of the repo"},
    "repo": {"type": "string", "description": "name of the repo"},
    "state": {"type": "string", "enum": ["open", "closed"]},
    "body": {
      "type": "object",
      "properties": {
        "title": {"type": "string", "minLength": 1, "maxLength": 255},
        "head": {"type": "string"},
        "base": {"type": "string"},
        "body": {"type": "string"},
        "assignees": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
        "labels": {"type": "array", "items": {"type": "integer", "format": "int64"}, "maxItems": 50},
        "milestone": {"type": "integer", "format": "int64", "minimum": 0},
        "allow_maintainer_edit": {"type": "boolean"}
      },
      "required": ["title", "head", "base"],
      "additionalProperties": false
    }
  },
  "required": ["owner", "repo"],
  "additionalProperties": false
}`

// schemaPullRequestArgs are valid arguments for schemaPullRequest.
const schemaPullRequestArgs = `{"owner": "gitea", "repo": "tea", "body": {
  "title": "Fix flaky integration test on arm64", "head": "fix/flaky-arm64", "base": "main",
  "body": "The test raced the indexer; wait for it.\n\nFixes #1234", "assignees": ["alice", "bob"],
  "labels": [1, 5, 9], "milestone": 3, "allow_maintainer_edit": true}}`

// schemaMust unmarshals a schema that the test itself defines.
func schemaMust(t testing.TB, text string) *Schema {
	t.Helper()
	s := new(Schema)
	if err := json.Unmarshal([]byte(text), s); err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return s
}

// schemaValue decodes a JSON value as tool arguments are decoded, with UseNumber.
func schemaValue(t testing.TB, text string) any {
	t.Helper()
	var v any
	if err := schemaDecode([]byte(text), &v); err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return v
}

// TestSchemaErrors checks the error for each keyword: path, keyword, got and want.
func TestSchemaErrors(t *testing.T) {
	t.Parallel()
	long := `"` + strings.Repeat("é", 40) + `"`
	for _, c := range []struct {
		schema  string
		value   string // JSON, decoded with UseNumber; or else
		goValue any    // a Go value, passed as is
		want    string // "" for valid
	}{
		{schema: schemaPullRequest, value: schemaPullRequestArgs},
		{schema: `{"type": "object"}`, value: `"x"`, want: `type: got string, want object`},
		{schema: schemaPullRequest, value: `{"owner": "o", "repo": "r", "body": {"title": "t", "head": "h", "base": "b", "assignees": ["a", "b", 3]}}`,
			want: `body.assignees[2]: type: got number, want string`},
		{schema: schemaPullRequest, value: `{"owner": "o", "repo": "r", "body": {"head": "h", "base": "b"}}`,
			want: `body.title: required: missing`},
		{schema: schemaPullRequest, value: `{"owner": "o", "repo": "r", "body": {"title": "t", "head": "h", "base": "b", "foo": 1}}`,
			want: `body.foo: unknown property`},
		{schema: schemaPullRequest, value: `{"owner": "o", "repo": "r", "state": "x"}`,
			want: `state: enum: got "x", want one of "open", "closed"`},
		{schema: schemaPullRequest, value: `{"owner": "o", "repo": "r", "body": {"title": "", "head": "h", "base": "b"}}`,
			want: `body.title: minLength: got length 0, want at least 1`},
		{schema: schemaPullRequest, value: `{"owner": "o", "repo": "r", "body": {"title": "t", "head": "h", "base": "b", "milestone": -1}}`,
			want: `body.milestone: minimum: got -1, want >= 0`},
		{schema: schemaPullRequest, value: `{"owner": "o", "repo": "r", "body": {"title": "t", "head": "h", "base": "b", "labels": [1, 9223372036854775808]}}`,
			want: `body.labels[1]: format: got 9223372036854775808, want int64`},
		{schema: schemaPullRequest, value: `{"owner": "o", "repo": "r", "body": {"title": "t", "head": "h", "base": "b", "assignees": ["a", "b", "a"]}}`,
			want: `body.assignees: uniqueItems: items [0] and [2] are equal`},
		{schema: schemaPullRequest, value: `{"repo": "r", "owner": 1, "zzz": 1}`,
			want: `owner: type: got number, want string`}, // members in sorted order
		{schema: `{"type": "integer"}`, value: `1.0`},
		{schema: `{"type": "integer"}`, value: `1.5`, want: `type: got number, want integer`},
		{schema: `{"type": "integer"}`, value: `1e3`},
		{schema: `{"type": ["string", "null"]}`, value: `5`, want: `type: got number, want one of string, null`},
		{schema: `{"type": "number"}`, value: `1e5000`, want: `type: got number 1e5000, want at most 1000 characters and 3 exponent digits`},
		{schema: `{"type": "integer"}`, value: `1e-999`, want: `type: got number, want integer`},
		{schema: `{"type": "integer"}`, value: `0.5e0999`},
		{schema: `{"maximum": 9007199254740992}`, value: `9007199254740992.0`},
		{schema: `{"maximum": 9007199254740992}`, value: `9007199254740993`,
			want: `maximum: got 9007199254740993, want <= 9007199254740992`},
		{schema: `{"minimum": 0.1}`, value: `0.1`},
		{schema: `{"format": "int64"}`, value: `9223372036854775807`},
		{schema: `{"format": "int64"}`, value: `-9223372036854775809`, want: `format: got -9223372036854775809, want int64`},
		{schema: `{"format": "int32"}`, value: `2147483648`, want: `format: got 2147483648, want int32`},
		{schema: `{"format": "int32"}`, value: `1.5`, want: `format: got 1.5, want int32`},
		{schema: `{"format": "date-time"}`, value: `"not a date"`},
		{schema: `{"const": {"a": [1, true]}}`, value: `{"a": [1.0, true]}`},
		{schema: `{"const": "a"}`, value: `"b"`, want: `const: got "b", want "a"`},
		{schema: `{"const": null}`, value: `false`, want: `const: got false, want null`},
		{schema: `{"enum": []}`, value: `1`, want: `enum: got 1, want one of `},
		{schema: `{"enum": ["a"]}`, value: long, want: `enum: got "` + strings.Repeat("é", 30) + `...", want one of "a"`},
		{schema: `{"maxLength": 2}`, value: `"💩💩💩"`, want: `maxLength: got length 3, want at most 2`},
		{schema: `{"pattern": "^[a-z]+$"}`, value: `"ABC"`, want: `pattern: got "ABC", want match for "^[a-z]+$"`},
		{schema: `{"pattern": "^[a-z]+$"}`, value: `"a\nb"`, want: `pattern: got "a\nb", want match for "^[a-z]+$"`},
		{schema: `{"minItems": 1}`, value: `[]`, want: `minItems: got length 0, want at least 1`},
		{schema: `{"maxItems": 1}`, value: `[1, 2]`, want: `maxItems: got length 2, want at most 1`},
		{schema: `{"items": false}`, value: `[1]`, want: `[0]: items: not allowed`},
		{schema: `{"items": {"items": {"type": "string"}}}`, value: `[[], ["a", 1]]`, want: `[1][1]: type: got number, want string`},
		{schema: `false`, value: `{}`, want: `schema: not allowed`},
		{schema: `true`, value: `{"anything": [null]}`},
		{schema: `{"properties": {"a b": {"properties": {"c": {"type": "string"}}}}}`, value: `{"a b": {"c": 1}}`,
			want: `["a b"].c: type: got number, want string`},
		{schema: `{"additionalProperties": false}`, value: `{"x\ny": 1}`, want: `["x\ny"]: unknown property`},
		{schema: `{"additionalProperties": {"type": "boolean"}}`, value: `{"x": 1}`, want: `x: type: got number, want boolean`},
		{schema: `{"properties": {"a": null}}`, value: `{"a": 1}`, want: `a: properties: not allowed`},
		{schema: `{"maximum": 4}`, goValue: 5, want: `maximum: got 5, want <= 4`},
		{schema: `{"type": "integer"}`, goValue: int64(7)},
		{schema: `{"type": "integer"}`, goValue: 2.5, want: `type: got number, want integer`},
		{schema: `{}`, goValue: int8(1), want: `type: got Go int8, want JSON value`},
		{schema: `{"uniqueItems": true}`, goValue: []any{1, json.Number("1.0")}, want: `uniqueItems: items [0] and [1] are equal`},
	} {
		v := c.goValue
		if c.value != "" {
			v = schemaValue(t, c.value)
		}
		got := ""
		if err := schemaMust(t, c.schema).Validate(v); err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%#v against %s: mismatch (-want +got):\n%s", v, c.schema, cmp.Diff(c.want, got))
		}
	}
}

// TestSchemaUnmarshalErrors checks that invalid and unsupported schemas are refused.
func TestSchemaUnmarshalErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ schema, want string }{
		{`{"title": "x"}`, `title: unknown keyword`},
		{`{"properties": {"a": {"items": {"$ref": "#"}}}}`, `properties: items: $ref: unknown keyword`},
		{`{"Type": "string"}`, `Type: unknown keyword`},
		{`{"items": null}`, `items: got null`},
		{`{"additionalProperties": null}`, `additionalProperties: got null`},
		{`{"type": "strin"}`, `type: got "strin", want names from array, boolean, integer, null, number, object, string, each once`},
		{`{"type": ""}`, `type: got "", want names from array, boolean, integer, null, number, object, string, each once`},
		{`{"type": ["string", "string"]}`, `type: got ["string", "string"], want names from array, boolean, integer, null, number, object, string, each once`},
		{`{"type": 5}`, `type: got 5, want names from array, boolean, integer, null, number, object, string, each once`},
		{`{"pattern": "(?=a)"}`, "pattern: error parsing regexp: invalid or unsupported Perl syntax: `(?=`"},
		{`{"minimum": true}`, `minimum: json: cannot unmarshal bool into Go value of type json.Number`},
		{`{"uniqueItems": 1}`, `uniqueItems: json: cannot unmarshal number into Go value of type bool`},
		{`[]`, `want schema object or boolean`},
		{`null`, `want schema object or boolean`},
	} {
		var s Schema
		got := "<nil>"
		if err := json.Unmarshal([]byte(c.schema), &s); err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s: mismatch (-want +got):\n%s", c.schema, cmp.Diff(c.want, got))
		}
	}
}

// TestSchemaRoundTrip checks that schemas marshal compactly with "type"
// first, and that reading the output back gives the same output again.
func TestSchemaRoundTrip(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		schema *Schema // built in Go, or nil to unmarshal in
		in     string
		want   string // the marshalled text, or the marshal error
	}{
		{in: `true`, want: `true`},
		{in: `false`, want: `false`},
		{in: `{}`, want: `{}`},
		{in: `{"description": "d", "type": "string"}`, want: `{"type":"string","description":"d"}`},
		{in: `{"type": ["string"]}`, want: `{"type":["string"]}`},
		{in: `{"type": []}`, want: `{"type":[]}`},
		{in: `{"enum": []}`, want: `{"enum":[]}`},
		{in: `{"const": null, "default": false}`, want: `{"const":null,"default":false}`},
		{in: `{"minimum": 1.50, "maximum": 9007199254740993, "minLength": 2.0}`,
			want: `{"minimum":1.50,"maximum":9007199254740993,"minLength":2.0}`},
		{in: `{"required": ["a"], "additionalProperties": false, "properties": {"b": {}, "a": false}, "type": "object"}`,
			want: `{"type":"object","properties":{"a":false,"b":{}},"required":["a"],"additionalProperties":false}`},
		{in: `{"type": "array", "items": {"type": "integer", "format": "int64"}, "minItems": 1, "maxItems": 9, "uniqueItems": true}`,
			want: `{"type":"array","items":{"type":"integer","format":"int64"},"minItems":1,"maxItems":9,"uniqueItems":true}`},
		{in: `{"pattern": "^[a-z<>&]+$", "maxLength": 3, "enum": ["a", 1]}`,
			want: `{"enum":["a",1],"maxLength":3,"pattern":"^[a-z\u003c\u003e\u0026]+$"}`},
		{schema: &Schema{Type: "object", Properties: map[string]*Schema{"n": {Type: "integer", Minimum: new(json.Number("1"))}},
			AdditionalProperties: falseSchema()},
			want: `{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"additionalProperties":false}`},
		{schema: &Schema{Types: []string{"string", "null"}}, want: `{"type":["string","null"]}`},
		{schema: &Schema{Type: "string", Types: []string{"null"}},
			want: `json: error calling MarshalJSON for type *main.Schema: type: both Type and Types are set`},
		{schema: &Schema{Bool: new(true), Type: "string"},
			want: `json: error calling MarshalJSON for type *main.Schema: schema: boolean schema with keywords`},
	} {
		s := c.schema
		if s == nil {
			s = schemaMust(t, c.in)
		}
		b, err := json.Marshal(s)
		got := string(b)
		if err != nil {
			got = err.Error()
		} else if again, _ := json.Marshal(schemaMust(t, got)); string(again) != got {
			t.Errorf("%s: marshals to %s, then to %s", c.in, got, again)
		}
		if got != c.want {
			t.Errorf("%s: mismatch (-want +got):\n%s", c.in, cmp.Diff(c.want, got))
		}
	}
}

// schemaFuzzPath matches an error's start: an optional path, then a keyword.
var schemaFuzzPath = regexp.MustCompile(`^(?:(?:[A-Za-z0-9_-]+|\[[0-9]+\]|\["(?:[^"\\]|\\.)*"\])` +
	`(?:\.[A-Za-z0-9_-]+|\[[0-9]+\]|\["(?:[^"\\]|\\.)*"\])*: )?` +
	`(?:(?:type|enum|const|format|minimum|maximum|minLength|maxLength|pattern|minItems|maxItems|uniqueItems|items|required|properties|additionalProperties|schema): |unknown property)`)

// FuzzValidate validates random JSON against fixed schemas: it must not panic,
// and an error must be a one-line *schemaError that starts with a path or a
// keyword and does not change when the value is validated again.
func FuzzValidate(f *testing.F) {
	schemas := []*Schema{
		schemaMust(f, schemaPullRequest),
		schemaMust(f, `{"type": ["array", "object", "null"], "items": {"enum": [1, "a", [true], {"k": null}]},
		  "uniqueItems": true, "maxItems": 5, "additionalProperties": {"type": "string", "pattern": "^[a-z]*$", "maxLength": 3}}`),
		schemaMust(f, `{"type": "number", "minimum": -1.5, "maximum": 1e20, "format": "int32", "const": 7}`),
		schemaMust(f, `{"items": {"items": {"items": false}}, "properties": {"": true, "a.b": false}}`),
		falseSchema(),
	}
	for _, seed := range []string{
		schemaPullRequestArgs, `{}`, `[]`, `null`, `[1, 1.0, "a", [true], {"k": null}]`, `{"a": "bcd", "é": 1}`,
		`7.0`, `1e5000`, `-0`, `2147483648`, `[[[[1]]]]`, `{"": 1, "a.b": 2}`, `"💩"`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		var v any
		if d.Decode(&v) != nil {
			return
		}
		for i, s := range schemas {
			err := s.Validate(v)
			if err == nil {
				continue
			}
			var se *schemaError
			msg := err.Error()
			if !errors.As(err, &se) || !schemaFuzzPath.MatchString(msg) || strings.ContainsAny(msg, "\r\n") {
				t.Fatalf("schema %d: malformed error %q", i, msg)
			}
			if again := s.Validate(v); again == nil || again.Error() != msg {
				t.Fatalf("schema %d: error %q, then %v", i, msg, again)
			}
		}
	})
}

// BenchmarkValidate validates createPullRequest-like arguments, valid and not.
func BenchmarkValidate(b *testing.B) {
	s := schemaMust(b, schemaPullRequest)
	for _, c := range []struct{ name, args string }{
		{"valid", schemaPullRequestArgs},
		{"invalid", strings.Replace(schemaPullRequestArgs, `"milestone": 3`, `"milestone": "3"`, 1)},
	} {
		v := schemaValue(b, c.args)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s.Validate(v)
			}
		})
	}
}
