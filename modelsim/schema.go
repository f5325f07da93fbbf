package modelsim

import (
	"encoding/json"
	"sort"
	"strings"
)

// jsonFor builds a JSON value that satisfies a (simple) JSON schema, for the
// structured side requests CLIs make (Gemini's complexity score, its
// next-speaker check): numbers take their minimum, at least 1, because a
// complexity score below 1 is refused; an enum that offers "user" takes it, so
// the model hands the turn back; strings say who answered.
func jsonFor(schema map[string]any) string {
	data, _ := json.Marshal(valueFor(schema))
	return string(data)
}

func valueFor(schema map[string]any) any {
	if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
		for _, e := range enum {
			if s, ok := e.(string); ok && s == "user" {
				return s
			}
		}
		return enum[0]
	}
	switch strings.ToLower(schemaType(schema)) {
	case "object":
		out := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p, ok := props[k].(map[string]any); ok {
				out[k] = valueFor(p)
			}
		}
		return out
	case "array":
		if items, ok := schema["items"].(map[string]any); ok {
			return []any{valueFor(items)}
		}
		return []any{}
	case "integer", "number":
		n := 1.0
		if m, ok := schema["minimum"].(float64); ok && m > n {
			n = m
		}
		return n
	case "boolean":
		return false
	}
	return "model-sim"
}

// schemaType reads "type", which may be a list (["string","null"]).
func schemaType(schema map[string]any) string {
	switch t := schema["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && s != "null" {
				return s
			}
		}
	}
	if _, ok := schema["properties"]; ok {
		return "object"
	}
	return "string"
}
