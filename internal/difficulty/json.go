package difficulty

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"unicode"
)

// MarshalJSON writes the result as encoding/json would, fields in order,
// except that a number that is not finite — an infinite difficulty, a
// standard error the fit could not compute (irt gives NaN when the
// information is singular) — is written as null: JSON has no NaN, and one
// undefined number must not make the whole report unwritable.
func (f *Fitted) MarshalJSON() ([]byte, error) { return finiteJSON(reflect.ValueOf(*f)) }

// MarshalJSON writes the result with non-finite numbers as null (see
// Fitted.MarshalJSON).
func (m *Mismatch) MarshalJSON() ([]byte, error) { return finiteJSON(reflect.ValueOf(*m)) }

var marshalerType = reflect.TypeFor[json.Marshaler]()

// snakeCase is a Go field name as assay's JSON keys read: RankingRaw →
// ranking_raw, PAdjusted → p_adjusted, Lo → lo.
func snakeCase(name string) string {
	var b strings.Builder
	rs := []rune(name)
	for i, r := range rs {
		upper := unicode.IsUpper(r)
		if upper && i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]))) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

func finiteJSON(v reflect.Value) ([]byte, error) {
	var b bytes.Buffer
	if err := writeFinite(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeFinite encodes v as encoding/json does for the kinds these results
// hold (structs with optional json tags, pointers, slices, arrays, maps,
// numbers, strings, booleans), with non-finite floats as null.
func writeFinite(b *bytes.Buffer, v reflect.Value) error {
	if !v.IsValid() {
		b.WriteString("null")
		return nil
	}
	if v.Type().Implements(marshalerType) && (v.Kind() != reflect.Pointer || !v.IsNil()) {
		out, err := json.Marshal(v.Interface())
		if err != nil {
			return err
		}
		b.Write(out)
		return nil
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			b.WriteString("null")
			return nil
		}
		return writeFinite(b, v.Elem())
	case reflect.Float32, reflect.Float64:
		x := v.Float()
		if math.IsNaN(x) || math.IsInf(x, 0) {
			b.WriteString("null")
			return nil
		}
	case reflect.Struct:
		b.WriteByte('{')
		first := true
		t := v.Type()
		for i := range t.NumField() {
			sf := t.Field(i)
			if !sf.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
			if name == "-" && opts == "" {
				continue
			}
			if name == "" {
				name = snakeCase(sf.Name) // an untagged field (stats.Interval's Lo, Hi) as assay's JSON names keys
			}
			fv := v.Field(i)
			if strings.Contains(opts, "omitempty") && fv.IsZero() {
				continue
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			key, _ := json.Marshal(name)
			b.Write(key)
			b.WriteByte(':')
			if err := writeFinite(b, fv); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			b.WriteString("null")
			return nil
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			break // bytes: base64, as encoding/json
		}
		b.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeFinite(b, v.Index(i)); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	case reflect.Map:
		if v.IsNil() {
			b.WriteString("null")
			return nil
		}
		// encoding/json's key order (sorted) and key encoding, with the
		// values through writeFinite.
		keys := make(map[string]reflect.Value, v.Len())
		var names []string
		for _, k := range v.MapKeys() {
			kb, err := json.Marshal(k.Interface())
			if err != nil {
				return err
			}
			name := string(kb)
			if k.Kind() != reflect.String {
				name = `"` + strings.Trim(name, `"`) + `"`
			}
			keys[name] = v.MapIndex(k)
			names = append(names, name)
		}
		slices.Sort(names)
		b.WriteByte('{')
		for i, name := range names {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(name)
			b.WriteByte(':')
			if err := writeFinite(b, keys[name]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	}
	out, err := json.Marshal(v.Interface())
	if err != nil {
		return err
	}
	b.Write(out)
	return nil
}
