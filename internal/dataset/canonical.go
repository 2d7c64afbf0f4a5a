package dataset

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
)

// The dataset's version is a hash of its cases as parsed, not of the
// file's bytes, so saving the same cases another way — LF or CRLF line
// ends, with or without a UTF-8 byte-order mark, CSV cells quoted or not,
// JSONL keys in another order — keeps the version, while any change to a
// case changes it.
//
// Each case is encoded as one line of canonical JSON, and the lines are
// hashed (SHA-256) in dataset order after casesHashHeader:
//
//	{"id":…,"fields":{…},"expected":…,"tags":{…},"weight":…}
//
// The id is the case's ID as a string; fields the whole record as parsed,
// object keys sorted (by bytes) at every depth, numbers as written in the
// file (json.Number: 1.50 stays 1.50 and is not 1.5), a CSV cell a
// string; expected the expected value (after expected_extract), null when
// the spec names none; tags the case's tags, keys sorted; weight the
// weight as a number, null when the case sets none.
//
// Strings are JSON strings with only the quote, the backslash and control
// characters (below U+0020) escaped, as \", \\ and \u00XX; every other
// byte is written as it is. The encoding is unambiguous, so two datasets
// hash equal only when their cases are equal in this sense.
//
// Consequences: a CSV file and a JSONL file of the same cases hash equal
// only when they parse to the same values — every JSONL value a string, as
// CSV cells are, and the same IDs (`id: line` counts JSONL lines but CSV
// rows after the header). In general they differ. The hash also covers
// what the spec's dataset settings make of the file: choosing another
// id, expected or weight field, an expected_extract or other tags is a new
// dataset version.
const casesHashHeader = "assay dataset cases v1\n"

// appendCase appends the canonical line of c (with its newline) to b.
func appendCase(b []byte, c *Case) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, c.ID)
	b = append(b, `,"fields":`...)
	if c.Vars == nil {
		b = append(b, "{}"...)
	} else {
		b = appendValue(b, c.Vars)
	}
	b = append(b, `,"expected":`...)
	b = appendValue(b, c.Expected)
	b = append(b, `,"tags":{`...)
	if len(c.Tags) > 0 {
		keys := make([]string, 0, len(c.Tags))
		for k := range c.Tags {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			b = appendString(b, c.Tags[k])
		}
	}
	b = append(b, `},"weight":`...)
	if c.HasWeight {
		b = appendFloat(b, c.Weight)
	} else {
		b = append(b, "null"...)
	}
	return append(b, "}\n"...)
}

// appendValue appends v, a value as the readers decode it, in the
// canonical encoding.
func appendValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case string:
		return appendString(b, x)
	case json.Number:
		// The decoder checked the syntax; the written form is the value.
		return append(b, x...)
	case bool:
		return strconv.AppendBool(b, x)
	case float64:
		return appendFloat(b, x)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			b = appendValue(b, x[k])
		}
		return append(b, '}')
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, e)
		}
		return append(b, ']')
	}
	// Not produced by the readers; kept unambiguous all the same.
	return appendString(b, Stringify(v))
}

// appendFloat writes a float64 in its shortest form; NaN and the
// infinities (which no reader produces) as strings.
func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return appendString(b, strconv.FormatFloat(f, 'g', -1, 64))
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

// appendString appends s as a JSON string escaping only ", \ and the
// control characters below U+0020.
func appendString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
