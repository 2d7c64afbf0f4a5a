package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/collect"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/traces"
)

type collectOptions struct {
	Spec    string
	Files   []string
	Addr    string
	Token   string
	MaxBody string
	Every   time.Duration
}

func (o *collectOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	addOverlayFlag(cmd, &o.Files)
	f.StringVar(&o.Addr, "addr", collect.DefaultAddr, "address to listen on (host:port)")
	f.StringVar(&o.Token, "token", "", "access token every request must carry as Authorization: Bearer TOKEN (env "+collect.TokenEnv+"); required off loopback")
	f.StringVar(&o.MaxBody, "max-body", "16MiB", "largest request body, as sent and once decompressed (bytes, or with KiB, MiB, GiB)")
	f.DurationVar(&o.Every, "every", time.Minute, "print the count of stored traces this often when it changed (0: only when stopping)")
}

func newCollectCommand(g *Globals) *cobra.Command {
	o := &collectOptions{}
	cmd := &cobra.Command{
		Use:   "collect [SPEC]",
		Short: "Receive OpenTelemetry GenAI traces over OTLP/HTTP and store them",
		Long: `Receive traces from an application's OpenTelemetry SDK over OTLP/HTTP
(POST /v1/traces, protobuf or JSON, gzip or not) and store its GenAI spans
as traces in the store (--db; created if missing), for assay sample,
score-traces, trend and promote.

Point the application's exporter at it, e.g.
  OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318
  OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf

A GenAI span is one with a gen_ai.* attribute or event; others (HTTP,
database spans) are counted and dropped. Each is read in the current
OpenTelemetry GenAI semantic conventions (gen_ai.input.messages,
gen_ai.output.messages, gen_ai.system_instructions, gen_ai.provider.name,
gen_ai.usage.input_tokens, ...) and the older forms (gen_ai.system,
gen_ai.prompt.N.* and gen_ai.completion.N.* with tool calls, prompt and
completion tokens, the gen_ai.user.message / gen_ai.choice span events):
the conversation with its tool calls and their arguments, model, tokens,
latency, finish reason, error.type. Every attribute and the resource are
kept. A trace is stored once by its trace and span IDs: a retried export
stores nothing twice. The spans of one request are stored together or not
at all; a body that does not decode is answered 400 with the reason.

SPEC is optional: its traces: section prices the traces (traces.prices,
USD per million tokens by model) and sets the privacy redaction applied
before storing (traces.redact). Without one the traces are unpriced and
every named detector (email, phone, card, key) redacts.

It listens on 127.0.0.1:4318 (--addr). On an address that is not loopback
it refuses to start without a token (--token or ASSAY_COLLECT_TOKEN); every
request must then carry Authorization: Bearer TOKEN (with the SDK:
OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer TOKEN"). Without a token,
requests naming another host than the loopback are refused. Ctrl-C stops
it after the requests in flight are stored. docs/collect.md has more.

` + exitCodesHelp,
		Example: `  assay collect
  assay collect eval.yaml --db prod/assay.db
  ASSAY_COLLECT_TOKEN=... assay collect eval.yaml --addr 0.0.0.0:4318`,
		Args: rangeArgs(0, 1),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			if len(o.Files) > 0 && len(args) == 0 {
				return usageError{fmt.Errorf("-f overlays a spec: give the SPEC they overlay")}
			}
			if _, err := parseSize(o.MaxBody); err != nil {
				return usageError{fmt.Errorf("--max-body %q: %w", o.MaxBody, err)}
			}
			if o.Every < 0 {
				return usageError{fmt.Errorf("--every %s: must not be negative (0 prints only when stopping)", o.Every)}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Spec = args[0]
			}
			return runCollect(cmd.Context(), g, o)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

func runCollect(ctx context.Context, g *Globals, o *collectOptions) error {
	if o.Token == "" {
		o.Token = g.Getenv(collect.TokenEnv)
	}
	if err := collect.Guard(o.Token).CheckAddr(o.Addr); err != nil {
		return usageError{err}
	}
	maxBody, _ := parseSize(o.MaxBody) // checked in PreRunE
	var tr spec.Traces
	if o.Spec != "" {
		sp, err := spec.LoadWith(o.Spec, specOptions(g, o.Files))
		if err != nil {
			return err
		}
		if sp.Traces != nil {
			tr = *sp.Traces
		}
	}
	redact, err := traces.NewRedactor(tr.Redact)
	if err != nil {
		return fmt.Errorf("collect: %w", err)
	}
	st, err := openStore(ctx, g)
	if err != nil {
		return fmt.Errorf("collect: %w", err)
	}
	defer st.Close()
	rc, err := collect.New(collect.Options{Addr: o.Addr, Token: o.Token, MaxBody: maxBody, Store: st,
		Redact: redact, Prices: tr.Prices, Now: g.Now})
	if err != nil {
		return err
	}

	ctx, cancel := cancelOnInterrupt(ctx, g, "interrupt: finishing the requests in flight, then stopping")
	defer cancel()
	ticking := make(chan struct{})
	go func() {
		defer close(ticking)
		if o.Every <= 0 {
			return
		}
		t := time.NewTicker(o.Every)
		defer t.Stop()
		var last collect.Counts
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if c := rc.Counts(); c != last {
					fmt.Fprintln(g.Stdout, countLine(c))
					last = c
				}
			}
		}
	}()
	priced := "unpriced (no spec)"
	if o.Spec != "" {
		priced = fmt.Sprintf("%d model price(s) from %s", len(tr.Prices), o.Spec)
	}
	listening := false
	err = rc.ListenAndServe(ctx, func(addr string) {
		listening = true
		fmt.Fprintf(g.Stdout, "assay collect listening on http://%s%s (store %s; %s); Ctrl-C stops it\n", addr, collect.Path, storeName(g.DB), priced)
	})
	cancel()
	<-ticking
	if listening {
		fmt.Fprintln(g.Stdout, "stopped: "+countLine(rc.Counts()))
	}
	return err
}

// countLine says what the receiver has stored so far.
func countLine(c collect.Counts) string {
	s := fmt.Sprintf("%d trace(s) stored", c.Stored)
	if c.Duplicates > 0 {
		s += fmt.Sprintf(", %d already stored", c.Duplicates)
	}
	s += fmt.Sprintf(", %d non-GenAI span(s) ignored, %d request(s) received", c.Ignored, c.Requests)
	if c.Refused > 0 {
		s += fmt.Sprintf(", %d refused", c.Refused)
	}
	if c.Redactions > 0 {
		s += fmt.Sprintf(", %d value(s) redacted", c.Redactions)
	}
	if c.Unpriced > 0 {
		s += fmt.Sprintf(", %d unpriced", c.Unpriced)
	}
	return s
}

// parseSize reads a byte count: digits, optionally followed by KiB, MiB
// or GiB; between 1 KiB and 1 GiB.
func parseSize(s string) (int64, error) {
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if n, ok := strings.CutSuffix(num, u.suffix); ok {
			num, mult = strings.TrimSpace(n), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("want a positive number of bytes, optionally with KiB, MiB or GiB (e.g. 16MiB)")
	}
	if n > (1<<30)/mult || n*mult < 1<<10 {
		return 0, fmt.Errorf("want between 1KiB and 1GiB")
	}
	return n * mult, nil
}
