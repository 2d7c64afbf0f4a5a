package scorer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/assay-eval/assay/internal/spec"
)

// jsonSchema passes when the parsed JSON output validates against the
// schema (inline in the spec, or file://PATH relative to the spec). Every
// violation is listed in the reason, each at its instance location. A
// violation is a loud invalid_format.
type jsonSchema struct {
	name       string
	schema     *jsonschema.Schema
	allowEmpty bool
}

// maxSchemaViolations bounds how many violations a reason lists.
const maxSchemaViolations = 50

func buildJSONSchema(b *builder, i int, sc *spec.Scorer) Scorer {
	if sc.Schema == nil {
		b.problemf(i, "schema", "inline, e.g. schema: {type: object, required: [team]}, or schema: file://schema.json", "json_schema scorer needs schema:")
		return nil
	}
	sch, err := compileSchema(b.sp, i, sc.Schema)
	if err != nil {
		b.problemf(i, "schema", "a JSON Schema (draft 2020-12 unless $schema says otherwise)", "schema does not compile: %v", err)
		return nil
	}
	return &jsonSchema{name: sc.Name, schema: sch, allowEmpty: sc.AllowEmpty}
}

// compileSchema compiles an inline schema (a YAML mapping) or file://PATH.
// Every file the compiler loads — the schema file and each file it $refs,
// at any depth — is read through sp.ReadFile, so ScorersHash covers its
// content and a file is read once per spec, bounded in size.
func compileSchema(sp *spec.Spec, i int, v any) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(specLoader{sp})
	if s, ok := v.(string); ok {
		path, ok := strings.CutPrefix(s, "file://")
		if !ok {
			return nil, fmt.Errorf("schema %q is neither an inline schema nor file://PATH", clip(s, 60))
		}
		abs, err := filepath.Abs(sp.Resolve(path))
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(abs); err != nil {
			return nil, fmt.Errorf("reading schema file: %w", err)
		}
		return c.Compile(abs)
	}
	if _, ok := canonical(v).(map[string]any); !ok {
		if _, isBool := v.(bool); !isBool {
			return nil, fmt.Errorf("schema must be a mapping (or file://PATH), not %T", v)
		}
	}
	b, err := json.Marshal(canonical(v))
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	url := fmt.Sprintf("mem:///scorers/%d/schema.json", i)
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// specLoader loads a schema resource the compiler asks for (file URLs
// only) through the spec, which records its content hash.
type specLoader struct{ sp *spec.Spec }

func (l specLoader) Load(url string) (any, error) {
	path, err := jsonschema.FileLoader{}.ToFile(url)
	if err != nil {
		return nil, err
	}
	b, err := l.sp.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %s", filepath.Base(path), spec.FileError(err))
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}

func (s *jsonSchema) Name() string { return s.name }

func (s *jsonSchema) Score(_ context.Context, in *Input) Verdict {
	out, v, ok := parsedAnswer(in, s.allowEmpty)
	if !ok {
		return v
	}
	err := s.schema.Validate(out)
	if err == nil {
		return pass("valid against the schema")
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return loud(KindScorerError, "validating: %v", err)
	}
	list := violations(ve)
	return loud(KindInvalidFormat, "%d schema violation(s): %s", len(list), strings.Join(list, "; "))
}

// violations lists every leaf violation as "at LOCATION: message", sorted.
func violations(ve *jsonschema.ValidationError) []string {
	var out []string
	seen := map[string]bool{}
	printer := message.NewPrinter(language.English)
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		loc := "/" + strings.Join(e.InstanceLocation, "/")
		msg := e.ErrorKind.LocalizedString(printer)
		line := fmt.Sprintf("at %s: %s", loc, clip(msg, 200))
		if !seen[line] {
			seen[line] = true
			out = append(out, line)
		}
	}
	walk(ve)
	// The validator's causes come in map order: sorted, a reason is the
	// same on every scoring of the same output.
	sort.Strings(out)
	if len(out) > maxSchemaViolations {
		n := len(out) - maxSchemaViolations
		out = append(out[:maxSchemaViolations], fmt.Sprintf("and %d more", n))
	}
	return out
}
