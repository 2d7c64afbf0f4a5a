package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/report"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/traces"
)

// ingestBatch is how many traces one transaction stores.
const ingestBatch = 512

// ingestShownProblems bounds the bad lines listed per file (the rest are
// counted).
const ingestShownProblems = 20

type ingestOptions struct {
	Spec    string
	Files   []string // JSONL logs
	Overlay []string
	SkipBad bool
	Format  string
	Output  string
}

func (o *ingestOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	addOverlayFlag(cmd, &o.Overlay)
	f.BoolVar(&o.SkipBad, "skip-bad", false, "store the good lines of a file with bad lines, and count and list the bad (default: refuse the file, storing nothing)")
	f.StringVar(&o.Format, "format", "text", "output format: "+strings.Join(report.NewRegistry().Ingest.Names(), "|"))
	f.StringVarP(&o.Output, "output", "o", "", "write the summary to FILE, whole or not at all")
}

func newIngestCommand(g *Globals) *cobra.Command {
	o := &ingestOptions{}
	cmd := &cobra.Command{
		Use:   "ingest SPEC FILE...",
		Short: "Store JSONL logs as traces, mapped by the spec's traces: section",
		Long: `Read JSONL logs of model calls — one call per line — and store each line as
a trace in the store (--db; created if missing), for assay sample,
score-traces, trend and promote.

The spec's traces: section maps a line's fields by dotted paths (a number
indexes a list): traces.input and traces.output are required; id, system,
model, time, latency_ms, input_tokens, output_tokens and attributes are
optional. A conversation field is a string, one message, or a list of
messages in OpenAI's form ({role, content, tool_calls}) or the OpenTelemetry
GenAI form ({role, parts}). The line's other top-level fields are kept as
the trace's attributes. docs/traces.md has the whole mapping.

A trace is stored once by its ID — traces.id's value, or the SHA-256 of the
line when the spec maps no id — so ingesting a file again, or a log that
grew, stores only the lines not stored before. Before storing, the privacy
redaction (traces.redact: email, phone, card and key detectors and your own
patterns) replaces private values by [REDACTED:<name>], and traces.prices
prices each trace by its model. The summary counts, per file, the lines,
the traces stored, those already stored, the values redacted and the traces
without a price.

A bad line (not JSON, not an object, a mapped field missing or of the wrong
type) is reported at FILE:LINE:COL with what would be valid. By default
every file is checked before anything is stored, and one bad line refuses
them all (exit 4, nothing stored): a log is not half-stored without your
knowing. --skip-bad stores the good lines instead and counts and lists the
bad ones. Traces are stored in batches of 512, one transaction each; Ctrl-C
stops after the batch in flight (exit 130; run the same command again to
store the rest).

` + exitCodesHelp,
		Example: `  assay ingest eval.yaml logs/2026-11-*.jsonl
  assay ingest eval.yaml app.jsonl --skip-bad --format json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageError{fmt.Errorf("ingest takes the spec and at least one JSONL file: assay ingest SPEC FILE..., got %d argument(s)", len(args))}
			}
			return nil
		},
		PreRunE: func(cmd *cobra.Command, args []string) error {
			return checkFormat(o.Format, report.NewRegistry().Ingest.Names())
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Spec, o.Files = args[0], args[1:]
			return runIngest(cmd.Context(), g, o)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

func runIngest(ctx context.Context, g *Globals, o *ingestOptions) error {
	sp, err := spec.LoadWith(o.Spec, specOptions(g, o.Overlay))
	if err != nil {
		return err
	}
	if ps := sp.IngestProblems(); ps != nil {
		return ps
	}
	redact, err := traces.NewRedactor(sp.Traces.Redact)
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	readers := make([]*traces.JSONL, len(o.Files))
	for i, path := range o.Files {
		j, err := traces.NewJSONL(sp.Traces, path)
		if err != nil {
			return fmt.Errorf("ingest: %w", err)
		}
		j.Now = g.Now
		readers[i] = j
	}

	// A batch being stored is stored whole: the store works under the
	// command's context, the reading stops at Ctrl-C.
	storeCtx := ctx
	ctx, cancel := cancelOnInterrupt(ctx, g, "interrupt: stopping after the batch in flight")
	defer cancel()

	// Every file is read once before anything is stored: one bad line
	// refuses them all, unless --skip-bad. The bytes checked are the bytes
	// stored: a log that grows meanwhile is stored up to where it was
	// checked.
	sizes := make([]int64, len(o.Files))
	if !o.SkipBad {
		var shown []string
		bad := 0
		for i, path := range o.Files {
			inFile := 0
			n, err := readFile(ctx, path, -1, func(r io.Reader) (traces.JSONLCount, error) {
				return readers[i].Check(r, func(p spec.Problem) error {
					if inFile < ingestShownProblems {
						shown = append(shown, p.String())
					}
					inFile++
					return nil
				})
			})
			if err != nil {
				return ingestErr(ctx, err)
			}
			bad += inFile
			if inFile > ingestShownProblems {
				shown = append(shown, fmt.Sprintf("%s: … and %d more bad lines", path, inFile-ingestShownProblems))
			}
			sizes[i] = n.size
		}
		if bad > 0 {
			for _, p := range shown {
				fmt.Fprintln(g.Stderr, p)
			}
			return &ExitError{Code: ExitInvalid, Err: fmt.Errorf("ingest: %d bad line(s); nothing was stored (fix them, or pass --skip-bad to store the good lines and count the bad)", bad)}
		}
	}

	if err := ctx.Err(); err != nil {
		return ingestErr(ctx, err)
	}
	st, err := openStore(storeCtx, g)
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	defer st.Close()
	if err := refuseReadOnly(st, g, "ingest", "nothing was stored"); err != nil {
		return err
	}

	res := &traces.IngestResult{Files: make([]traces.IngestFile, 0, len(o.Files))}
	for i, path := range o.Files {
		f, err := ingestFile(ctx, storeCtx, st, readers[i], redact, sp.Traces.Prices, path, sizes[i], o.SkipBad)
		res.Files = append(res.Files, f)
		if err != nil {
			return ingestErr(ctx, err)
		}
	}
	r, err := report.NewRegistry().Ingest.Reporter(o.Format, res)
	if err != nil {
		return usageError{err}
	}
	return printOut(g.Stdout, o.Output, r)
}

// ingestErr is an error of ingesting: ErrInterrupted when the context was
// cancelled.
func ingestErr(ctx context.Context, err error) error {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return fmt.Errorf("ingest: %w (the batches stored are kept; run it again to store the rest)", ErrInterrupted)
	}
	return fmt.Errorf("ingest: %w", err)
}

// ingestCount is a read's count and the bytes it read.
type ingestCount struct {
	traces.JSONLCount
	size int64
}

// readFile opens path and reads it (its first limit bytes when limit is
// not negative) through read, until ctx is cancelled.
func readFile(ctx context.Context, path string, limit int64, read func(io.Reader) (traces.JSONLCount, error)) (ingestCount, error) {
	f, err := os.Open(path)
	if err != nil {
		return ingestCount{}, err
	}
	defer f.Close()
	cr := &countingReader{ctx: ctx, r: f}
	var r io.Reader = cr
	if limit >= 0 {
		r = io.LimitReader(cr, limit)
	}
	n, err := read(r)
	return ingestCount{n, cr.n}, err
}

// countingReader counts the bytes read, and stops reading when its
// context is cancelled.
type countingReader struct {
	ctx context.Context
	r   io.Reader
	n   int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// ingestFile stores one file's traces in batches, redacted and priced,
// until ctx is cancelled (a batch is stored under storeCtx).
// Without skipBad the file was checked already (its first size bytes are
// read), and a bad line now means it changed meanwhile: an error.
func ingestFile(ctx, storeCtx context.Context, st store.Store, j *traces.JSONL, redact *traces.Redactor, prices map[string]spec.Price, path string, size int64, skipBad bool) (traces.IngestFile, error) {
	res := traces.IngestFile{Path: path}
	batch := make([]record.Trace, 0, ingestBatch)
	read := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := st.PutTraces(storeCtx, batch)
		if err != nil {
			return fmt.Errorf("storing the traces of %s: %w", path, err)
		}
		res.Stored += n
		batch = batch[:0]
		return nil
	}
	limit := int64(-1)
	if !skipBad {
		limit = size
	}
	n, err := readFile(ctx, path, limit, func(r io.Reader) (traces.JSONLCount, error) {
		return j.Read(r, func(t *record.Trace) error {
			redact.Trace(t)
			traces.Price(t, prices)
			res.Redactions += t.Redactions
			if !t.Priced {
				res.Unpriced++
			}
			read++
			batch = append(batch, *t)
			if len(batch) == ingestBatch {
				return flush()
			}
			return nil
		}, func(p spec.Problem) error {
			if !skipBad {
				return fmt.Errorf("%s changed while it was ingested: %s", path, p)
			}
			if len(res.Problems) < ingestShownProblems {
				res.Problems = append(res.Problems, p)
			}
			return nil
		})
	})
	if err == nil {
		err = flush()
	}
	res.Lines, res.Bad = n.Lines, n.Bad
	res.Duplicates = read - res.Stored
	if err != nil {
		res.Duplicates = 0
	}
	return res, err
}
