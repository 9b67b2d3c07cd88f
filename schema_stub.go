package main

import "encoding/json"

// Schema is a stub until the validator lands.
type Schema struct {
	Type                 string             `json:"type,omitempty"`
	Format               string             `json:"format,omitempty"`
	Description          string             `json:"description,omitempty"`
	Enum                 []any              `json:"enum,omitempty"`
	Default              any                `json:"default,omitempty"`
	Minimum              *json.Number       `json:"minimum,omitempty"`
	Properties           map[string]*Schema `json:"properties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	AdditionalProperties *Schema            `json:"additionalProperties,omitempty"`
	Items                *Schema            `json:"items,omitempty"`
	UniqueItems          bool               `json:"uniqueItems,omitempty"`
	Maximum              *json.Number       `json:"maximum,omitempty"`
	Types                []string           `json:"-"`
	isFalse              bool
}

func falseSchema() *Schema { return &Schema{isFalse: true} }

func (s *Schema) MarshalJSON() ([]byte, error) {
	if s.isFalse {
		return []byte("false"), nil
	}
	type plain Schema
	return json.Marshal((*plain)(s))
}

func (s *Schema) Validate(v any) error { return nil }
