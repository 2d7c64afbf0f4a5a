package export

import (
	"encoding/json"
	"strconv"
)

// kind is a column's type in every format.
type kind int

const (
	kString kind = iota
	kInt
	kFloat
	kBool
	kJSON // a JSON value: nested in JSONL, its text in CSV and Parquet
)

// column is one column of an export. get returns nil for a null.
type column struct {
	name     string
	kind     kind
	optional bool
	get      func(*Row) any
}

// columns lists an export's columns in order: the result's identity and
// data, the headline verdict, then six columns per scorer
// (score.<name>.pass, .value, .shape, .kind, .reason, .fields).
func (c Columns) columns() []column {
	str := func(name string, f func(*Row) string) column {
		return column{name: name, kind: kString, get: func(r *Row) any { return f(r) }}
	}
	num := func(name string, f func(*Row) int) column {
		return column{name: name, kind: kInt, get: func(r *Row) any { return int64(f(r)) }}
	}
	flt := func(name string, f func(*Row) float64) column {
		return column{name: name, kind: kFloat, get: func(r *Row) any { return f(r) }}
	}
	js := func(name string, f func(*Row) json.RawMessage) column {
		return column{name: name, kind: kJSON, optional: true, get: func(r *Row) any {
			if v := f(r); v != nil {
				return v
			}
			return nil
		}}
	}
	cols := []column{
		str("run_id", func(r *Row) string { return r.RunID }),
		str("case_id", func(r *Row) string { return r.CaseID }),
		num("line", func(r *Row) int { return r.Line }),
		str("target", func(r *Row) string { return r.Target }),
		num("epoch", func(r *Row) int { return r.Epoch }),
	}
	if c.Inputs {
		cols = append(cols, js("inputs", func(r *Row) json.RawMessage { return r.Inputs }))
	}
	cols = append(cols,
		js("expected", func(r *Row) json.RawMessage { return r.Expected }),
		js("tags", func(r *Row) json.RawMessage { return r.Tags }),
		str("raw", func(r *Row) string { return r.Raw }),
		js("parsed", func(r *Row) json.RawMessage { return r.Parsed }),
		str("parse_error", func(r *Row) string { return r.ParseError }),
		js("tool_calls", func(r *Row) json.RawMessage { return r.ToolCalls }),
		js("turns", func(r *Row) json.RawMessage { return r.Turns }),
		str("scorer", func(r *Row) string { return r.Scorer }),
		str("parse_note", func(r *Row) string {
			if r.Headline == nil {
				return ""
			}
			return r.Headline.ParseNote
		}),
		verdictCol("pass", kBool, func(r *Row) *Verdict { return r.Headline }, func(v *Verdict) any { return v.Pass }),
		verdictCol("value", kFloat, func(r *Row) *Verdict { return r.Headline }, func(v *Verdict) any { return v.Value }),
		str("shape", func(r *Row) string {
			if r.Headline == nil {
				return ""
			}
			return r.Headline.Shape
		}),
		str("kind", func(r *Row) string {
			if r.Headline == nil {
				return ""
			}
			return r.Headline.Kind
		}),
		str("error_kind", func(r *Row) string { return r.ErrorKind }),
		str("error", func(r *Row) string { return r.Error }),
		num("attempts", func(r *Row) int { return r.Attempts }),
		num("retries", func(r *Row) int { return r.Retries }),
		num("input_tokens", func(r *Row) int { return r.InputTokens }),
		num("output_tokens", func(r *Row) int { return r.OutputTokens }),
		num("cached_tokens", func(r *Row) int { return r.CachedTokens }),
		flt("cost_usd", func(r *Row) float64 { return r.CostUSD }),
		flt("saved_usd", func(r *Row) float64 { return r.SavedUSD }),
		flt("latency_ms", func(r *Row) float64 { return r.LatencyMS }),
		flt("first_token_ms", func(r *Row) float64 { return r.FirstTokenMS }),
		column{name: "from_cache", kind: kBool, get: func(r *Row) any { return r.FromCache }},
		str("finish_reason", func(r *Row) string { return r.FinishReason }),
		str("model", func(r *Row) string { return r.Model }),
	)
	for i, name := range c.Scorers {
		at := func(r *Row) *Verdict { return r.Scores[i] }
		p := "score." + name + "."
		cols = append(cols,
			verdictCol(p+"pass", kBool, at, func(v *Verdict) any { return v.Pass }),
			verdictCol(p+"value", kFloat, at, func(v *Verdict) any { return v.Value }),
			verdictCol(p+"shape", kString, at, func(v *Verdict) any { return v.Shape }),
			verdictCol(p+"kind", kString, at, func(v *Verdict) any { return v.Kind }),
			verdictCol(p+"reason", kString, at, func(v *Verdict) any { return v.Reason }),
		)
		// A field scorer's per-field outcomes (null for other scorers).
		cols = append(cols, verdictCol(p+"fields", kJSON, at, func(v *Verdict) any {
			if v.Fields == nil {
				return nil
			}
			return v.Fields
		}))
	}
	return cols
}

// verdictCol is a column of a verdict that may be missing (null).
func verdictCol(name string, k kind, at func(*Row) *Verdict, f func(*Verdict) any) column {
	return column{name: name, kind: k, optional: true, get: func(r *Row) any {
		if v := at(r); v != nil {
			return f(v)
		}
		return nil
	}}
}

// text is a value as a CSV cell: "" for null, JSON as its text, numbers
// in the shortest form that reads back exactly.
func text(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	case json.RawMessage:
		return string(v)
	}
	panic("export: unknown column value")
}
