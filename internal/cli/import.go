package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/blind"
	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/engine"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/report"
	"github.com/assay-eval/assay/internal/runner"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/task"
)

// blindExportOptions are export's --blind flags.
type blindExportOptions struct {
	On    bool
	Key   string
	Cases int
	Seed  uint64
	Force bool
	// seedSet says --seed was given.
	seedSet bool
}

func (o *blindExportOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&o.On, "blind", false, "write a blinded sample of SPEC's cases for a vendor (export --blind SPEC -o sample.jsonl): rendered prompts only, shuffled, opaque IDs; a sealed key kept locally maps them back (assay import)")
	f.StringVar(&o.Key, "key", "", "with --blind: the key file (default: FILE.key, written 0600)")
	f.IntVar(&o.Cases, "cases", 0, "with --blind: draw this many cases at random (default: every case)")
	f.Uint64Var(&o.Seed, "seed", 0, "with --blind: the seed of the draw and the shuffle (default: a random one, recorded in the key)")
	f.BoolVar(&o.Force, "force", false, "with --blind: replace an existing key file (it is the only way back from the sample it was made with)")
}

// check is export's PreRunE under --blind.
func (o *blindExportOptions) check(cmd *cobra.Command, e *exportOptions) error {
	if e.Output == "" {
		return usageError{errors.New("export --blind: -o FILE is required (the sample to send)")}
	}
	if e.NoInputs || e.Scoring != 0 || e.Spec != "" {
		return usageError{errors.New("export --blind takes a spec, not a run: drop --no-inputs, --scoring and --spec")}
	}
	if o.Cases < 0 {
		return usageError{fmt.Errorf("--cases must not be negative (got %d)", o.Cases)}
	}
	if e.Format == "" {
		e.Format = "text"
	}
	o.seedSet = cmd.Flags().Changed("seed")
	if o.Key == "" {
		o.Key = e.Output + ".key"
	}
	return checkFormat(e.Format, report.NewRegistry().BlindExport.Names())
}

// unused refuses the --blind flags without --blind.
func (o *blindExportOptions) unused(cmd *cobra.Command) error {
	for _, name := range []string{"key", "cases", "seed", "force"} {
		if cmd.Flags().Changed(name) {
			return usageError{fmt.Errorf("--%s goes with --blind (assay export --blind SPEC -o sample.jsonl --%s …)", name, name)}
		}
	}
	return nil
}

// runBlindExport writes the blinded sample of a spec's cases and its key.
func runBlindExport(ctx context.Context, g *Globals, e *exportOptions, args []string) error {
	o := &e.Blind
	if len(args) != 1 {
		return usageError{errors.New("export --blind takes the spec: assay export --blind SPEC -o sample.jsonl")}
	}
	t, err := task.LoadWith(args[0], specOptions(g, nil))
	if err != nil {
		return err
	}
	if err := blindable(t); err != nil {
		return usageError{fmt.Errorf("export --blind: %w", err)}
	}
	var cases []blind.Case
	var bad []string
	err = dataset.Each(t.Spec, func(c *dataset.Case) error {
		msgs, err := t.Prompt.Render(c.Vars)
		if err != nil {
			bad = append(bad, fmt.Sprintf("case %s: %v", c.ID, err))
			return nil
		}
		cases = append(cases, blind.Case{ID: c.ID, Messages: blindMessages(msgs)})
		return ctx.Err()
	})
	if err != nil {
		return err
	}
	if len(bad) > 0 {
		more := ""
		if len(bad) > 5 {
			more = fmt.Sprintf("; and %d more", len(bad)-5)
		}
		return &ExitError{Code: ExitInvalid, Err: fmt.Errorf("export --blind: %d case(s) do not render, so the sample would not be what a run sends: %s%s", len(bad), strings.Join(bad[:min(5, len(bad))], "; "), more)}
	}
	sp := t.Spec
	res, err := blind.Export(cases, blind.ExportOptions{
		Sample: e.Output, Key: o.Key, Force: o.Force, Cases: o.Cases, Seed: o.Seed, SeedSet: o.seedSet,
		Offer: blindOffer(runner.OfferOf(sp)),
		Spec:  sp.Name, SpecPath: sp.File, SpecHash: sp.Hash, DatasetHash: t.Dataset.Hash, PromptHash: sp.PromptHash(),
		Now: g.Now(),
	})
	if errors.Is(err, blind.ErrKeyExists) {
		return usageError{fmt.Errorf("export --blind: %w", err)}
	}
	if err != nil {
		return fmt.Errorf("export --blind: %w", err)
	}
	r, err := report.NewRegistry().BlindExport.Reporter(e.Format, res)
	if err != nil {
		return usageError{err}
	}
	return printOut(g.Stdout, "", r)
}

// blindMessages are rendered messages as the sample writes them.
func blindMessages(msgs []provider.Message) []record.Message {
	out := make([]record.Message, len(msgs))
	for i, m := range msgs {
		out[i] = record.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, ToolCalls: runner.ToolCalls(m.ToolCalls)}
	}
	return out
}

// blindOffer is what a request offers besides its messages, as the sample
// writes it.
func blindOffer(o runner.Offer) blind.Offer {
	var b blind.Offer
	for _, t := range o.Tools {
		b.Tools = append(b.Tools, blind.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	b.ToolChoice = o.ToolChoice
	if f := o.ResponseFormat; f != nil {
		b.ResponseFormat = &blind.ResponseFormat{Name: f.Name, Schema: f.Schema, Strict: f.Strict}
	}
	return b
}

// blindable refuses a spec whose cases cannot be sent blind: an agent
// loop (the vendor would need the tool handlers) or a prompt that shows the
// expected value.
func blindable(t *task.Task) error {
	sp := t.Spec
	if sp.Agent != nil {
		return errors.New("the spec runs an agent loop (agent:): a blinded sample holds one request per case, and the vendor cannot answer the tool calls without the spec's handlers")
	}
	if exp := sp.Dataset.Expected; exp != "" {
		if slices.Contains(t.Prompt.Fields(), exp) || t.Prompt.History() == exp {
			return fmt.Errorf("the prompt uses the expected field %q: the sample would show the vendor the answers", exp)
		}
	}
	return nil
}

type importOptions struct {
	Responses string
	Spec      string // "" is the key's spec path
	Key       string
	As        string
	// Into is the complete run the answers join as one more target
	// ("" stores a run of their own).
	Into   string
	Format string
	Output string
}

func (o *importOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.Key, "key", "", "the key file export --blind wrote with the sample (required)")
	f.StringVar(&o.As, "as", "", "the target name the vendor's answers are stored under (required; not a target of the spec)")
	f.StringVar(&o.Into, "into", "", "add the answers as one more target of this complete run of the spec (a run ID or latest), scored with its scorers and paired with its targets in its report")
	f.StringVar(&o.Format, "format", "text", "output format: "+strings.Join(report.NewRegistry().BlindImport.Names(), "|"))
	f.StringVarP(&o.Output, "output", "o", "", "write the summary to FILE, whole or not at all")
}

func newImportCommand(g *Globals) *cobra.Command {
	o := &importOptions{}
	cmd := &cobra.Command{
		Use:   "import RESPONSES.jsonl --key KEYFILE --as TARGET [SPEC]",
		Short: "Read a vendor's answers to a blinded sample as a target and score them",
		Long: `Read a vendor's answers to a sample written by assay export --blind, map
them back to the cases through the sealed key kept locally, and store them
as a run of the spec with one target, --as TARGET: no model is called. The
run is scored with the spec's scorers like any candidate and records the
dataset's hash and the spec's experiment: assay report sets the vendor
beside the experiment's other variants, paired case by case, and assay
compare pairs it with another run of the same target name (a later round
of the vendor's answers). docs/vendors.md explains the exchange.

With --into RUN (a run ID, or latest: the spec's newest run) the answers
are not a run of their own: they join RUN, a complete run of the spec, as
one more target, so assay report RUN sets the vendor beside the run's
targets with a paired comparison on the cases both have (a sample of
--cases N pairs N; the report warns that the vendor covers N of the run's
cases). The vendor is scored in every complete scoring of the run made
with the spec's scorers (scoring 1, and each rescore with them), like its
other targets. RUN is refused, and nothing stored, when it is of another
spec, not complete, has another dataset version, prompt hash, or latest
scoring made with other scorers (rescore it with the spec first), already
has a target --as names, has several epochs, the spec has pairwise judges,
or a live process is writing it. The answers are scored in memory and
added at once: an interrupt or a failure leaves RUN as it was.

RESPONSES.jsonl has one JSON object a line, one line for every line of the
sample, in the sample's order:

  {"id": "<the sample line's id>", "output": "<the model's reply>"}

"tool_calls" (a list of {"name", "arguments", "id"?}) may stand beside or
instead of "output". Nothing else is accepted. SPEC defaults to the spec the
key names.

Nothing is stored, and every problem is listed at FILE:LINE:COL (exit 4),
when: the key's seal does not match (it was edited or damaged); the
dataset or the prompt changed since the sample was made (their hashes
differ from the key's); a line is not such an object; an id is not in the
sample, or is answered twice; lines are out of the sample's order (a
shuffled file is refused, so that no answer can land on another case); or
ids have no answer (a truncated file: how many, and the first few).

` + exitCodesHelp,
		Example: `  assay export --blind assay.yaml -o sample.jsonl --cases 200 --seed 7
  # send sample.jsonl; keep sample.jsonl.key
  assay import answers.jsonl --key sample.jsonl.key --as vendor-x
  assay report latest
  # or, beside the candidates of an existing run of the spec:
  assay run assay.yaml
  assay import answers.jsonl --key sample.jsonl.key --as vendor-x --into latest
  assay report latest`,
		Args: rangeArgs(1, 2),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(o.Format, report.NewRegistry().BlindImport.Names()); err != nil {
				return err
			}
			if o.Key == "" {
				return usageError{errors.New("--key is required: the key file export --blind wrote with the sample")}
			}
			if o.As == "" {
				return usageError{errors.New("--as is required: the target name the answers are stored under (e.g. vendor-x)")}
			}
			if strings.ContainsAny(o.As, ", \t\n") || strings.ContainsFunc(o.As, unicode.IsControl) {
				return usageError{fmt.Errorf("--as %q: a target name has no commas, spaces or control characters (use letters, digits, '-', '_' or '.')", o.As)}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Responses = args[0]
			if len(args) == 2 {
				o.Spec = args[1]
			}
			return runImport(cmd.Context(), g, o)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

func runImport(ctx context.Context, g *Globals, o *importOptions) error {
	key, err := blind.ReadKey(o.Key)
	if errors.Is(err, blind.ErrSeal) {
		return &ExitError{Code: ExitInvalid, Err: fmt.Errorf("import: %w", err)}
	}
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	specPath := o.Spec
	if specPath == "" {
		specPath = key.SpecPath
	}
	t, err := task.LoadWith(specPath, specOptions(g, nil))
	if err != nil {
		return err
	}
	sp := t.Spec
	if err := blindable(t); err != nil {
		return usageError{fmt.Errorf("import: %w", err)}
	}
	if slices.ContainsFunc(sp.Targets, func(x spec.Target) bool { return x.Name == o.As }) {
		return usageError{fmt.Errorf("import: --as %s: the spec has a target of that name; store the vendor's answers under another name", o.As)}
	}
	changed, err := key.CheckSpec(o.Key, sp.Hash, t.Dataset.Hash, sp.PromptHash())
	if err != nil {
		return &ExitError{Code: ExitInvalid, Err: fmt.Errorf("import: %w", err)}
	}
	if changed {
		fmt.Fprintf(g.Stderr, "note: %s changed since the sample was made (not its dataset or prompt): the answers are scored with the spec as it is now\n", specPath)
	}
	f, err := os.Open(o.Responses)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	answers, err := blind.ReadResponses(f, o.Responses, key)
	f.Close()
	if err != nil {
		return err
	}
	byCase := make(map[string]*blind.Answer, len(answers))
	for i := range answers {
		byCase[answers[i].Case] = &answers[i]
	}
	// The run's cases: the sample's, in the dataset's order.
	var cases []*dataset.Case
	if err := dataset.Each(sp, func(c *dataset.Case) error {
		if byCase[c.ID] != nil {
			cases = append(cases, c)
		}
		return nil
	}); err != nil {
		return err
	}
	if len(cases) != len(answers) {
		return &ExitError{Code: ExitInvalid, Err: fmt.Errorf("import: %d of the key's %d cases are not in the dataset %s, though its hash is the key's", len(answers)-len(cases), len(answers), sp.Dataset.Path)}
	}

	// The vendor is one more target of the spec, answering from memory:
	// the engine runs and scores it like any candidate.
	sp.Targets = append(sp.Targets, spec.Target{Name: o.As, Provider: "blind-import", Limits: spec.Limits{Concurrency: 8}})
	if len(sp.Candidates) > 0 {
		sp.Candidates = append(sp.Candidates, o.As) // a candidate, whatever the spec's list
	}
	vendor := provider.Func(func(ctx context.Context, req *provider.Request) (*provider.Response, error) {
		if err := ctx.Err(); err != nil {
			return nil, &provider.Error{Kind: provider.KindCanceled, Err: err}
		}
		a := byCase[req.CaseID]
		if a == nil {
			return nil, &provider.Error{Kind: provider.KindNoRecord, Msg: fmt.Sprintf("case %q has no answer", req.CaseID)}
		}
		var calls []provider.ToolCall
		for _, c := range a.ToolCalls {
			calls = append(calls, provider.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
		return &provider.Response{Text: a.Output, ToolCalls: calls, Attempts: 1, Latency: time.Nanosecond}, nil
	})

	open := openStore
	if o.Into != "" {
		open = openExistingStore // the run is in a store; never make one
	}
	st, err := open(ctx, g)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	defer st.Close()
	e := newEngine(g, st)
	var closers engine.Closers
	defer closers.Close()
	set, err := e.Scorers(sp, false, &closers)
	if err != nil {
		return err
	}
	kit := &engine.Kit{Targets: []runner.Target{{Spec: &sp.Targets[len(sp.Targets)-1], Provider: vendor}}, Scorers: set}
	if o.Into != "" {
		return importInto(ctx, g, o, t, e, kit, cases)
	}
	run, err := e.Start(ctx, t, engine.StartOptions{Targets: []string{o.As}, Epochs: 1, Experiment: sp.Experiment,
		Cases: cases, Kit: kit, CommitEvery: 100 * time.Millisecond})
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	defer run.Close()
	runCtx, stop, unwatch := watchInterrupts(ctx, g)
	defer unwatch()
	_, execErr := run.Execute(runCtx, engine.ExecuteOptions{Stop: stop})
	out, err := run.Finish(ctx)
	if err = errors.Join(execErr, err); err != nil {
		return fmt.Errorf("import: run %s: %w", run.Record.ID, err)
	}
	res := &blind.ImportResult{RunID: run.Record.ID, Target: o.As, Cases: len(cases), Status: out.Status,
		Spec: sp.Name, DatasetHash: run.Record.DatasetHash, Key: o.Key, Responses: o.Responses}
	r, err := report.NewRegistry().BlindImport.Reporter(o.Format, res)
	if err != nil {
		return usageError{err}
	}
	if err := printOut(g.Stdout, o.Output, r); err != nil {
		return err
	}
	if out.Status == record.StatusInterrupted {
		return fmt.Errorf("%w: %d of %d answers scored and stored in run %s", ErrInterrupted, out.Have, out.Total, run.Record.ID)
	}
	return nil
}

// importInto adds the vendor's answers to the complete run o.Into as one
// more target (engine.JoinRun): all of them, or nothing.
func importInto(ctx context.Context, g *Globals, o *importOptions, t *task.Task, e *engine.Engine, kit *engine.Kit, cases []*dataset.Case) error {
	// latest is the newest run of the spec.
	id, err := latestOf(ctx, e.Store, o.Into, t.Spec.Name)
	if err != nil {
		return fmt.Errorf("import --into %s: %w", o.Into, err)
	}
	run, err := getRun(ctx, e.Store, "import --into "+o.Into, id)
	if err != nil {
		return err
	}
	runCtx, stop, unwatch := watchInterrupts(ctx, g)
	defer unwatch()
	j, err := e.JoinRun(runCtx, t, run.ID, engine.JoinOptions{Kit: kit, Cases: cases, CommitEvery: 100 * time.Millisecond},
		engine.ExecuteOptions{Stop: stop})
	if refused := (*engine.JoinRefusedError)(nil); errors.As(err, &refused) {
		return &ExitError{Code: ExitInvalid, Err: fmt.Errorf("import: %w; nothing was stored", err)}
	}
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	if j.Interrupted {
		return fmt.Errorf("%w: nothing was added to run %s (it is as it was); import again to add the answers", ErrInterrupted, run.ID)
	}
	sp := t.Spec
	res := &blind.ImportResult{RunID: run.ID, Target: o.As, Cases: len(cases), Status: j.Run.Status,
		Spec: sp.Name, DatasetHash: run.DatasetHash, Key: o.Key, Responses: o.Responses,
		Into: true, Targets: j.Run.Targets, RunCases: run.Cases, Scorings: j.Scorings}
	r, err := report.NewRegistry().BlindImport.Reporter(o.Format, res)
	if err != nil {
		return usageError{err}
	}
	return printOut(g.Stdout, o.Output, r)
}
