package main

// The JSON Schema validator of tool arguments: each call's arguments are
// checked against the tool's input schema before a request is built. It
// fails closed: an unknown keyword or a value it cannot judge is an error,
// never a constraint silently dropped. It never talks to Gitea.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Schema is the subset of JSON Schema 2020-12 that tool input schemas use.
// It marshals to the compact form sent in tools/list and unmarshals strictly:
// an unknown keyword or a null where a schema, name or number belongs is an
// error, never a constraint silently dropped. Numeric keywords hold exact
// JSON numbers. Schemas must be acyclic; unmarshalled ones always are.
type Schema struct {
	Type                 string             `json:"type,omitempty"`
	Types                []string           `json:"-"` // "type" as an array, written in Type's place
	Format               string             `json:"format,omitempty"`
	Description          string             `json:"description,omitempty"`
	Enum                 []any              `json:"enum,omitzero"` // [] is kept: it rejects everything
	Const                *any               `json:"const,omitempty"`
	Default              any                `json:"default,omitempty"`
	Minimum              *json.Number       `json:"minimum,omitempty"`
	Maximum              *json.Number       `json:"maximum,omitempty"`
	MinLength            *json.Number       `json:"minLength,omitempty"`
	MaxLength            *json.Number       `json:"maxLength,omitempty"`
	Pattern              string             `json:"pattern,omitempty"`
	Items                *Schema            `json:"items,omitempty"`
	MinItems             *json.Number       `json:"minItems,omitempty"`
	MaxItems             *json.Number       `json:"maxItems,omitempty"`
	UniqueItems          bool               `json:"uniqueItems,omitempty"`
	Properties           map[string]*Schema `json:"properties,omitempty"` // a nil schema here rejects its property
	Required             []string           `json:"required,omitempty"`
	AdditionalProperties *Schema            `json:"additionalProperties,omitempty"`
	Bool                 *bool              `json:"-"` // the boolean schema true or false; no other field may be set
}

// falseSchema returns the schema that accepts nothing, as in "additionalProperties": false.
func falseSchema() *Schema { return &Schema{Bool: new(false)} }

// schemaKind returns the JSON type of a decoded JSON value, or "" for a Go
// type that is not one.
func schemaKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case json.Number, float64, int, int64:
		return "number"
	}
	return ""
}

// schemaTypeNames are the values the type keyword may take.
var schemaTypeNames = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

// MarshalJSON writes s with "type" first and empty keywords left out;
// a boolean schema is written as true or false.
func (s Schema) MarshalJSON() ([]byte, error) {
	type fields Schema // no methods, so Marshal does not recurse here
	var t any
	switch {
	case s.Type != "" && s.Types != nil:
		return nil, errors.New("type: both Type and Types are set")
	case s.Types != nil:
		t = s.Types
	case s.Type != "":
		t = s.Type
	}
	b, err := json.Marshal(struct {
		Type any `json:"type,omitempty"` // shadows fields.Type
		fields
	}{t, fields(s)})
	if err != nil || s.Bool == nil {
		return b, err
	}
	if string(b) != "{}" {
		return nil, errors.New("schema: boolean schema with keywords")
	}
	return strconv.AppendBool(nil, *s.Bool), nil
}

// UnmarshalJSON reads a schema object or boolean. It refuses unknown
// keywords, null values (but for const and default), unknown type names and
// patterns that Go's regexp cannot compile.
func (s *Schema) UnmarshalJSON(data []byte) error {
	if b := string(data); b == "true" || b == "false" {
		*s = Schema{Bool: new(b == "true")}
		return nil
	}
	var kws map[string]json.RawMessage
	if json.Unmarshal(data, &kws) != nil || kws == nil {
		return errors.New("want schema object or boolean")
	}
	*s = Schema{}
	var typ json.RawMessage
	var cst any
	dst := map[string]any{ // the keywords, each with where its value goes
		"type": &typ, "format": &s.Format, "description": &s.Description, "enum": &s.Enum,
		"const": &cst, "default": &s.Default, "minimum": &s.Minimum, "maximum": &s.Maximum,
		"minLength": &s.MinLength, "maxLength": &s.MaxLength, "pattern": &s.Pattern,
		"items": &s.Items, "minItems": &s.MinItems, "maxItems": &s.MaxItems,
		"uniqueItems": &s.UniqueItems, "properties": &s.Properties, "required": &s.Required,
		"additionalProperties": &s.AdditionalProperties,
	}
	for _, k := range slices.Sorted(maps.Keys(kws)) {
		var err error
		switch p, known := dst[k]; {
		case !known:
			err = errors.New("unknown keyword")
		case string(kws[k]) == "null" && k != "const" && k != "default":
			err = errors.New("got null")
		default:
			err = schemaDecode(kws[k], p)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	if kws["const"] != nil {
		s.Const = &cst
	}
	if typ != nil {
		names := []string{""}
		if json.Unmarshal(typ, &names[0]) == nil {
			s.Type = names[0]
		} else if json.Unmarshal(typ, &s.Types) == nil {
			names = s.Types
		}
		for i, t := range names {
			if !slices.Contains(schemaTypeNames, t) || slices.Contains(names[:i], t) {
				return fmt.Errorf("type: got %s, want names from %s, each once", typ, strings.Join(schemaTypeNames, ", "))
			}
		}
	}
	if _, err := schemaRegexp(s.Pattern); err != nil {
		return fmt.Errorf("pattern: %w", err)
	}
	return nil
}

// schemaDecode decodes JSON keeping numbers as exact json.Number values.
func schemaDecode(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	return d.Decode(v)
}

// schemaPatterns caches compiled patterns by source text. Patterns come from
// schemas, never from arguments, so the cache stays small.
var schemaPatterns sync.Map

// schemaRegexp compiles pattern in Go's RE2 syntax, once per process.
func schemaRegexp(pattern string) (*regexp.Regexp, error) {
	if re, ok := schemaPatterns.Load(pattern); ok {
		return re.(*regexp.Regexp), nil
	}
	re, err := regexp.Compile(pattern)
	if err == nil {
		schemaPatterns.Store(pattern, re)
	}
	return re, err
}

// schemaNumber is the syntax of a JSON number (RFC 8259, section 6), but
// with an exponent of at most 3 digits, so that 1e999999999 cannot make
// math/big build a huge power of ten.
var schemaNumber = regexp.MustCompile(`^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?0*[0-9]{1,3})?$`)

// schemaMaxNumber bounds the length of a number, for the same reason.
const schemaMaxNumber = 1000

// schemaRat returns the exact value of a JSON number given as json.Number,
// float64, int or int64. It reports false for anything else, for non-JSON
// syntax, and for numbers beyond the bounds of schemaNumber and schemaMaxNumber.
func schemaRat(v any) (*big.Rat, bool) {
	switch n := v.(type) {
	case json.Number:
		if len(n) > schemaMaxNumber || !schemaNumber.MatchString(string(n)) {
			return nil, false
		}
		return new(big.Rat).SetString(string(n))
	case float64:
		r := new(big.Rat).SetFloat64(n) // nil for NaN and infinities
		return r, r != nil
	case int:
		return big.NewRat(int64(n), 1), true
	case int64:
		return big.NewRat(n, 1), true
	}
	return nil, false
}

// schemaInt returns a JSON number written as an integer that fits an int64,
// the common case, which needs no math/big.
func schemaInt(v any) (int64, bool) {
	switch n := v.(type) {
	case json.Number:
		i, err := strconv.ParseInt(string(n), 10, 64)
		return i, err == nil
	case int:
		return int64(n), true
	case int64:
		return n, true
	}
	return 0, false
}

// schemaBeyond reports whether the number x lies beyond a set bound: below
// it for sign -1, above it for sign +1. An unusable number crosses any bound.
func schemaBeyond(x any, bound *json.Number, sign int) bool {
	if bound == nil {
		return false
	}
	if a, ok := schemaInt(x); ok {
		if b, ok := schemaInt(*bound); ok {
			return cmp.Compare(a, b) == sign
		}
	}
	a, okA := schemaRat(x)
	b, okB := schemaRat(*bound)
	return !okA || !okB || a.Cmp(b) == sign
}

// schemaIntFormats are the formats that are checked, with their ranges.
var schemaIntFormats = map[string]struct {
	lo, hi         int64
	loText, hiText json.Number
}{
	"int32": {math.MinInt32, math.MaxInt32, "-2147483648", "2147483647"},
	"int64": {math.MinInt64, math.MaxInt64, "-9223372036854775808", "9223372036854775807"},
}

// schemaError is a validation failure: where in the arguments, which keyword, and why.
type schemaError struct {
	Path    string // e.g. body.assignees[2]; empty at the root
	Keyword string // the failed keyword; "schema" for a false schema at the root; "" for an unknown property
	Detail  string // e.g. got number, want string
}

// Error formats e as "PATH: KEYWORD: DETAIL", without PATH at the root and
// without KEYWORD for an unknown property.
func (e *schemaError) Error() string {
	msg := e.Detail
	if e.Keyword != "" {
		msg = e.Keyword + ": " + msg
	}
	if e.Path == "" {
		return msg
	}
	return e.Path + ": " + msg
}

// schemaPlainName matches property names written bare in a path; others are written ["quoted"].
var schemaPlainName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// under prefixes e's path with a property name or, if index >= 0, an array index.
func (e *schemaError) under(name string, index int) *schemaError {
	seg := name
	if index >= 0 {
		seg = "[" + strconv.Itoa(index) + "]"
	} else if !schemaPlainName.MatchString(name) {
		seg = fmt.Sprintf("[%q]", name)
	}
	if e.Path != "" && e.Path[0] != '[' {
		seg += "."
	}
	e.Path = seg + e.Path
	return e
}

// schemaFail returns the error for keyword with a formatted detail.
func schemaFail(keyword, format string, args ...any) *schemaError {
	return &schemaError{Keyword: keyword, Detail: fmt.Sprintf(format, args...)}
}

// Validate reports the first way v breaks s, as a *schemaError, or nil.
// v is a value decoded by encoding/json into any, best with UseNumber so
// numbers stay exact; float64, int and int64 are accepted too. Numbers compare
// exactly: 1.0 is an integer and 9007199254740993 is not 9007199254740992.
// Of an object's failing members the first in sorted order is reported, so
// the error is deterministic. Object members are closed where s says so
// (additionalProperties false): an unknown member is refused with the
// property it folds to, if any, as Go's encoding/json would match it.
//
// Recursion follows the schema, not the value: v is descended only where s
// has items, properties or additionalProperties, so the depth is bounded by
// the schema's. Only equality (enum, const, uniqueItems) walks whole values,
// whose depth encoding/json has already bounded.
func (s *Schema) Validate(v any) error {
	if err := s.validate(v, "schema"); err != nil {
		return err
	}
	return nil
}

// validate checks v against s; via is the keyword that led to s, named when s rejects everything.
func (s *Schema) validate(v any, via string) *schemaError {
	if s == nil || s.Bool != nil && !*s.Bool {
		return schemaFail(via, "not allowed")
	}
	kind := schemaKind(v)
	if kind == "" {
		return schemaFail("type", "got Go %T, want JSON value", v)
	}
	i, fits := schemaInt(v)
	isInt := fits
	if kind == "number" && !isInt {
		r, ok := schemaRat(v)
		if !ok {
			return schemaFail("type", "got number %s, want at most %d characters and 3 exponent digits", schemaBrief(v), schemaMaxNumber)
		}
		isInt = r.IsInt()
	}
	isType := func(t string) bool { return t == kind || t == "integer" && isInt }

	// type: the value's JSON type is Type, or one of Types; an integer is a number whose fraction is zero.
	if s.Type != "" && !isType(s.Type) {
		return schemaFail("type", "got %s, want %s", kind, s.Type)
	}
	if s.Types != nil && !slices.ContainsFunc(s.Types, isType) {
		return schemaFail("type", "got %s, want one of %s", kind, strings.Join(s.Types, ", "))
	}
	// enum: the value equals one of Enum.
	if s.Enum != nil && !slices.ContainsFunc(s.Enum, func(e any) bool { return schemaEqual(v, e) }) {
		want := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			want[i] = schemaBrief(e)
		}
		return schemaFail("enum", "got %s, want one of %s", schemaBrief(v), strings.Join(want, ", "))
	}
	// const: the value equals Const.
	if s.Const != nil && !schemaEqual(v, *s.Const) {
		return schemaFail("const", "got %s, want %s", schemaBrief(v), schemaBrief(*s.Const))
	}

	if kind == "number" {
		// format: int32 and int64 take integers in range; other formats are
		// annotations. An integer written as one that fits an int64 (the
		// common case) is compared as such, any other exactly.
		if r, ok := schemaIntFormats[s.Format]; ok &&
			(!isInt || fits && (i < r.lo || i > r.hi) || !fits && (schemaBeyond(v, &r.loText, -1) || schemaBeyond(v, &r.hiText, +1))) {
			return schemaFail("format", "got %s, want %s", schemaBrief(v), s.Format)
		}
		// minimum: the value is at least Minimum.
		if schemaBeyond(v, s.Minimum, -1) {
			return schemaFail("minimum", "got %s, want >= %s", schemaBrief(v), *s.Minimum)
		}
		// maximum: the value is at most Maximum.
		if schemaBeyond(v, s.Maximum, +1) {
			return schemaFail("maximum", "got %s, want <= %s", schemaBrief(v), *s.Maximum)
		}
	}

	if str, ok := v.(string); ok {
		n := 0 // counted only if needed: bodies hold long texts
		if s.MinLength != nil || s.MaxLength != nil {
			n = utf8.RuneCountInString(str)
		}
		// minLength: at least MinLength Unicode code points.
		if schemaBeyond(n, s.MinLength, -1) {
			return schemaFail("minLength", "got length %d, want at least %s", n, *s.MinLength)
		}
		// maxLength: at most MaxLength Unicode code points.
		if schemaBeyond(n, s.MaxLength, +1) {
			return schemaFail("maxLength", "got length %d, want at most %s", n, *s.MaxLength)
		}
		// pattern: Pattern matches somewhere in the string; it is not anchored.
		if s.Pattern != "" {
			if re, err := schemaRegexp(s.Pattern); err != nil || !re.MatchString(str) {
				return schemaFail("pattern", "got %s, want match for %q", schemaBrief(str), s.Pattern)
			}
		}
	}

	if arr, ok := v.([]any); ok {
		// minItems: at least MinItems items.
		if schemaBeyond(len(arr), s.MinItems, -1) {
			return schemaFail("minItems", "got length %d, want at least %s", len(arr), *s.MinItems)
		}
		// maxItems: at most MaxItems items.
		if schemaBeyond(len(arr), s.MaxItems, +1) {
			return schemaFail("maxItems", "got length %d, want at most %s", len(arr), *s.MaxItems)
		}
		// items: every item is valid against Items.
		if s.Items != nil {
			for i, e := range arr {
				if err := s.Items.validate(e, "items"); err != nil {
					return err.under("", i)
				}
			}
		}
		// uniqueItems: no two items are equal.
		if s.UniqueItems {
			seen := make(map[string]int, len(arr))
			for i, e := range arr {
				k := schemaCanon(nil, e)
				if j, dup := seen[string(k)]; dup {
					return schemaFail("uniqueItems", "items [%d] and [%d] are equal", j, i)
				}
				seen[string(k)] = i
			}
		}
	}

	if obj, ok := v.(map[string]any); ok {
		// properties, additionalProperties: each member is valid against its
		// schema in Properties, or else against AdditionalProperties if set.
		// Of several failing members, the first in sorted order is reported.
		var first *schemaError
		firstName := ""
		if s.Properties != nil || s.AdditionalProperties != nil {
			for name, m := range obj {
				if first != nil && name > firstName {
					continue // cannot come first
				}
				if err := s.member(name, m); err != nil {
					first, firstName = err, name
				}
			}
		}
		if first != nil {
			return first.under(firstName, -1)
		}
		// required: every name in Required is present. It is checked after
		// the members, so that "State" is reported as a misspelling of
		// "state" rather than "state" as missing.
		for _, name := range s.Required {
			if _, ok := obj[name]; !ok {
				return schemaFail("required", "missing").under(name, -1)
			}
		}
	}
	return nil
}

// member checks the member name of an object against s.
func (s *Schema) member(name string, v any) *schemaError {
	sub, in := s.Properties[name]
	if in {
		return sub.validate(v, "properties")
	}
	sub = s.AdditionalProperties
	if sub == nil {
		return nil
	}
	// A member no property names is unknown where AdditionalProperties is
	// false; so is one that a property names under Go's case folding
	// wherever AdditionalProperties is set, as Gitea's encoding/json would
	// decode it into that property's field: {"state": "open", "ſtate":
	// "closed"} must not be judged open and then closed.
	if alike := s.foldsTo(name); alike != "" {
		return schemaFail("", "unknown property; did you mean %q?", alike)
	}
	if sub.Bool != nil && !*sub.Bool {
		return schemaFail("", "unknown property")
	}
	return sub.validate(v, "additionalProperties")
}

// foldsTo returns the property of s whose name equals name under Go's
// encoding/json matching (strings.EqualFold: case and Unicode simple folding,
// so "ſtate" is "state" and the Kelvin sign is "k"), or "" if none does. Of
// several, it returns the first in sorted order.
func (s *Schema) foldsTo(name string) string {
	alike := ""
	for p := range s.Properties {
		if strings.EqualFold(p, name) && (alike == "" || p < alike) {
			alike = p
		}
	}
	return alike
}

// schemaEqual reports whether a and b are the same JSON value: 1 equals 1.0,
// member order does not matter, and true is not 1.
func schemaEqual(a, b any) bool {
	if x, ok := a.(string); ok { // the common case, without encoding
		y, ok := b.(string)
		return ok && x == y
	}
	return bytes.Equal(schemaCanon(nil, a), schemaCanon(nil, b))
}

// schemaCanon appends an encoding of v in which equal JSON values encode
// alike: numbers as exact fractions, members sorted. A number that
// schemaRat refuses encodes as its text, anything else as its Go syntax.
func schemaCanon(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, 'n')
	case bool:
		return strconv.AppendBool(b, x)
	case string:
		return strconv.AppendQuote(append(b, 's'), x)
	case []any:
		b = append(b, '[')
		for _, e := range x {
			b = append(schemaCanon(b, e), ',')
		}
		return append(b, ']')
	case map[string]any:
		b = append(b, '{')
		for _, k := range slices.Sorted(maps.Keys(x)) {
			b = append(schemaCanon(append(strconv.AppendQuote(b, k), ':'), x[k]), ',')
		}
		return append(b, '}')
	}
	if i, ok := schemaInt(v); ok {
		return strconv.AppendInt(append(b, 'd'), i, 10)
	}
	if r, ok := schemaRat(v); ok {
		return append(append(b, 'd'), r.RatString()...)
	}
	return fmt.Appendf(b, "?%#v", v)
}

// schemaBrief renders a value for an error detail: a string with %q, anything
// else as JSON, cut short so that a long argument cannot flood the message.
func schemaBrief(v any) string {
	s, isStr := v.(string)
	if !isStr {
		b, err := json.Marshal(v)
		if s = string(b); err != nil {
			s = fmt.Sprintf("(Go %T)", v)
		}
	}
	if len(s) > 60 {
		i := 60
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s = s[:i] + "..."
	}
	if isStr {
		return fmt.Sprintf("%q", s)
	}
	return s
}
