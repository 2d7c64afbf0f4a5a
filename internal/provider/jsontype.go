package provider

import "bytes"

// JSONType names the type of a raw JSON value ("object", "array", "string",
// "boolean", "null", "number", or "nothing" when empty), for messages that
// tell a user what a reply or record held where something else was wanted.
func JSONType(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}
