package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/assay-eval/assay/internal/traces"
	"github.com/assay-eval/assay/internal/units"
)

// IngestFormats are `assay ingest`'s formats.
func IngestFormats() []Format[*traces.IngestResult] {
	return []Format[*traces.IngestResult]{
		{Name: "text", Aliases: []string{""}, Render: IngestText},
		{Name: "markdown", Aliases: []string{"md"}, Render: IngestMarkdown},
		JSONFormat[*traces.IngestResult](),
	}
}

// ingestTotal sums the files.
func ingestTotal(r *traces.IngestResult) traces.IngestFile {
	t := traces.IngestFile{Path: "total"}
	for _, f := range r.Files {
		t.Lines += f.Lines
		t.Stored += f.Stored
		t.Duplicates += f.Duplicates
		t.Redactions += f.Redactions
		t.Unpriced += f.Unpriced
		t.Bad += f.Bad
	}
	return t
}

// ingestRows are the table's rows, a file each (and their total when
// more than one): its path as given, then its counts formatted.
func ingestRows(r *traces.IngestResult) [][]string {
	files := r.Files
	if len(files) > 1 {
		files = append(slices.Clone(files), ingestTotal(r))
	}
	rows := make([][]string, len(files))
	for i, f := range files {
		rows[i] = []string{f.Path, units.Count(f.Lines), units.Count(f.Stored), units.Count(f.Duplicates),
			units.Count(f.Bad), units.Count(f.Redactions), units.Count(f.Unpriced)}
	}
	return rows
}

// IngestText renders what assay ingest stored: a row per file (and their
// total), then the bad lines skipped.
func IngestText(w io.Writer, r *traces.IngestResult) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "file\tlines\tstored\talready stored\tbad (skipped)\tredacted\tunpriced\t")
	for _, row := range ingestRows(r) {
		row[0] = oneLine(row[0])
		fmt.Fprintf(tw, "%s\t\n", strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	ingestNotes(&b, r, oneLine, "  ")
	_, err := io.WriteString(w, b.String())
	return err
}

// ingestNotes says what the counts mean for the reader and lists the bad
// lines skipped.
func ingestNotes(b *strings.Builder, r *traces.IngestResult, esc func(string) string, item string) {
	t := ingestTotal(r)
	b.WriteString("\n")
	if t.Redactions > 0 {
		fmt.Fprintf(b, "%s replaced by [REDACTED:<name>] before storing (traces.redact).\n", plural(t.Redactions, "private value"))
	}
	if t.Unpriced > 0 {
		fmt.Fprintf(b, "%s without a price in traces.prices: stored with no cost.\n", plural(t.Unpriced, "trace"))
	}
	if t.Bad > 0 {
		fmt.Fprintf(b, "%s skipped (--skip-bad):\n", plural(t.Bad, "bad line"))
		for _, f := range r.Files {
			for _, p := range f.Problems {
				b.WriteString(item + esc(p.String()) + "\n")
			}
			if more := f.Bad - len(f.Problems); more > 0 {
				fmt.Fprintf(b, "%s… and %s more in %s\n", item, plural(more, "bad line"), esc(f.Path))
			}
		}
	}
}

// IngestMarkdown renders the same as a Markdown table.
func IngestMarkdown(w io.Writer, r *traces.IngestResult) error {
	var b strings.Builder
	b.WriteString("## assay ingest\n\n| file | lines | stored | already stored | bad (skipped) | redacted | unpriced |\n|---|--:|--:|--:|--:|--:|--:|\n")
	for _, row := range ingestRows(r) {
		row[0] = mdText(row[0])
		fmt.Fprintf(&b, "| %s |\n", strings.Join(row, " | "))
	}
	ingestNotes(&b, r, mdText, "- ")
	_, err := io.WriteString(w, b.String())
	return err
}
