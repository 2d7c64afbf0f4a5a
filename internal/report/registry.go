package report

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// A Reporter writes one rendered document (vegeta's lib.Reporter): a
// document bound to a format, ready for a printer to send to stdout or a
// file.
type Reporter func(w io.Writer) error

// Format is one way to render a document of type V.
type Format[V any] struct {
	// Name is the --format value; Aliases are accepted too but not listed
	// (markdown's "md").
	Name    string
	Aliases []string
	Render  func(w io.Writer, v V) error
}

// Document is the formats one kind of result renders in, looked up by
// name. The zero value has no formats; NewRegistry builds every document.
type Document[V any] struct {
	// Name is the document's name in errors ("report", "gate", "plan" …).
	Name    string
	formats []Format[V]
}

func newDocument[V any](name string, fs ...Format[V]) *Document[V] {
	return &Document[V]{Name: name, formats: fs}
}

// Names are the document's format names, in the order help lists them.
func (d *Document[V]) Names() []string {
	out := make([]string, len(d.formats))
	for i, f := range d.formats {
		out[i] = f.Name
	}
	return out
}

// Lookup finds a format by name or alias; an unknown one is an
// *UnknownFormatError naming the valid ones.
func (d *Document[V]) Lookup(name string) (Format[V], error) {
	for _, f := range d.formats {
		if f.Name == name || slices.Contains(f.Aliases, name) {
			return f, nil
		}
	}
	return Format[V]{}, &UnknownFormatError{Document: d.Name, Format: name, Valid: d.Names()}
}

// Reporter binds v to the format name.
func (d *Document[V]) Reporter(name string, v V) (Reporter, error) {
	f, err := d.Lookup(name)
	if err != nil {
		return nil, err
	}
	return func(w io.Writer) error { return f.Render(w, v) }, nil
}

// Render writes v in the format name to w.
func (d *Document[V]) Render(w io.Writer, name string, v V) error {
	r, err := d.Reporter(name, v)
	if err != nil {
		return err
	}
	return r(w)
}

// UnknownFormatError is a format a document does not render in.
type UnknownFormatError struct {
	Document string
	Format   string
	// Valid are the formats the document renders in.
	Valid []string
}

func (e *UnknownFormatError) Error() string {
	return fmt.Sprintf("unknown %s format %q (formats are: %s)", e.Document, e.Format, strings.Join(e.Valid, ", "))
}

// JSONFormat renders any document as indented JSON, as every JSON output
// of assay is written.
func JSONFormat[V any]() Format[V] {
	return Format[V]{Name: "json", Render: func(w io.Writer, v V) error { return writeJSON(w, v) }}
}

// JSON writes v as indented JSON: the one JSON printer of every command.
func JSONOf(v any) Reporter {
	return func(w io.Writer) error { return writeJSON(w, v) }
}

// writeJSON writes v as indented JSON, as every JSON rendering here does.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
