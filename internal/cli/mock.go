package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/mock"
)

type mockOptions struct {
	mock.Options
	RulesFile string
}

func (o *mockOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.Addr, "addr", "127.0.0.1:8089", "listen address (loopback by default)")
	f.DurationVar(&o.Latency, "latency", 0, "added latency per reply")
	f.DurationVar(&o.Jitter, "jitter", 0, "uniform extra latency in [0, jitter)")
	f.DurationVar(&o.TokenDelay, "token-delay", 0, "delay between streamed chunks")
	f.Float64Var(&o.Rate, "rate", 0, "requests per second accepted; above it 429 with Retry-After (0 = unlimited)")
	f.IntVar(&o.Burst, "burst", 0, "burst allowed above --rate")
	f.DurationVar(&o.RetryAfter, "retry-after", time.Second, "Retry-After sent with 429")
	f.IntVar(&o.Capacity, "capacity", 0, "requests served at once; the rest wait in a FIFO queue, so past capacity/latency req/s latency rises (0 = unlimited)")
	f.IntVar(&o.QueueLimit, "queue-limit", 0, "requests that may wait for a slot; beyond them 503 (0 = no limit, -1 = no queue; needs --capacity)")
	f.Float64Var(&o.Slowdown, "slowdown", 0, "service time grows with busy slots: latency × (1 + slowdown × busy/capacity) (needs --capacity)")
	f.Float64Var(&o.Fail, "fail", 0, "fraction of requests answered 500")
	f.Float64Var(&o.Overload, "overload", 0, "fraction answered 529 overloaded")
	f.Float64Var(&o.Hang, "hang", 0, "fraction that never answer (client time-out)")
	f.Float64Var(&o.Truncate, "truncate", 0, "fraction of replies cut short")
	f.Float64Var(&o.Malformed, "malformed", 0, "fraction answered with a body that is not JSON")
	f.Int64Var(&o.Seed, "seed", 1, "seed for fault injection")
	f.StringVar(&o.Default, "reply", "", "fixed reply (default: echo the last user message)")
	f.StringVar(&o.RulesFile, "rules", "", "JSONL of {\"match\": substring, \"reply\": text, \"model\": only for this model, \"tool_calls\": [{\"name\": tool, \"arguments\": JSON or text}], \"turn\": only the model's Nth turn} scripted replies (first match wins; an empty match is that model's default; see docs/mock.md)")
	f.IntVar(&o.ToolTurns, "tool-turns", 1, "model turns of a conversation that answer with tool calls before the mock answers in text")
	f.Float64Var(&o.MalformedArgs, "malformed-args", 0, "fraction of tool calls sent with arguments that are not valid JSON")
	f.StringVar(&o.APIKey, "require-key", "", "answer 401 unless this key is presented")
}

func newMockCommand(g *Globals) *cobra.Command {
	o := &mockOptions{}
	cmd := &cobra.Command{
		Use:   "mock",
		Short: "Serve OpenAI- and Anthropic-compatible endpoints with deterministic replies and injected faults",
		Long: `A local server speaking the OpenAI chat-completions (/v1/chat/completions) and
Anthropic messages (/v1/messages) wire formats, plain and streamed, with
deterministic replies and injectable faults. Point a target's base_url at it.
It binds to 127.0.0.1 unless --addr says otherwise. Stops on Ctrl-C.

--capacity N models a server's capacity for load tests (assay load): N
requests are served at once and the rest wait their turn, so with
--latency 50ms and --capacity 8 it completes at most 160 requests/s and
latency grows with the queue past that; --queue-limit answers 503 beyond a
queue length; --rate answers 429 above a rate. See docs/mock.md.`,
		Args: exactArgs(0),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			for name, v := range map[string]float64{"fail": o.Fail, "overload": o.Overload, "hang": o.Hang, "truncate": o.Truncate, "malformed": o.Malformed, "malformed-args": o.MalformedArgs} {
				if v < 0 || v > 1 {
					return usageError{fmt.Errorf("--%s must be a fraction in [0,1] (got %g)", name, v)}
				}
			}
			if err := o.Validate(); err != nil {
				return usageError{err}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMock(cmd.Context(), g, o)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

func runMock(ctx context.Context, g *Globals, o *mockOptions) error {
	if o.RulesFile != "" {
		rules, err := readRules(o.RulesFile)
		if err != nil {
			return err
		}
		o.Rules = rules
	}
	o.Now = g.Now
	srv := mock.New(o.Options)
	url, err := srv.Start()
	if err != nil {
		return err
	}
	defer srv.Close()
	fmt.Fprintf(g.Stdout, "assay mock listening on %s\n  openai:    base_url %s/v1\n  anthropic: base_url %s\n", url, url, url)
	select {
	case <-ctx.Done():
	case <-g.Interrupts:
	}
	s := srv.Stats()
	fmt.Fprintf(g.Stderr, "served %d requests: %d ok, %d 429, %d 500, %d 529, %d hung, %d truncated, %d malformed",
		s.Requests, s.OK, s.RateLimit, s.Fail, s.Overload, s.Hang, s.Truncate, s.Malformed)
	if o.MalformedArgs > 0 {
		fmt.Fprintf(g.Stderr, ", %d tool calls with malformed arguments", s.MalformedArgs)
	}
	if o.Capacity > 0 {
		fmt.Fprintf(g.Stderr, "; capacity %d: %d waited for a slot (%s in all, at most %d waiting), %d answered 503 for a full queue",
			o.Capacity, s.Queued, s.QueueWait.Round(time.Millisecond), s.MaxWaiting, s.QueueFull)
	}
	fmt.Fprintln(g.Stderr)
	return nil
}

func readRules(path string) ([]mock.Rule, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rules []mock.Rule
	dec := json.NewDecoder(f)
	dec.DisallowUnknownFields() // a misspelt key ("tool_call") is an error, not a rule that quietly does less
	for dec.More() {
		var r mock.Rule
		if err := dec.Decode(&r); err != nil {
			return nil, fmt.Errorf("%s: rule %d: %w (want {\"match\": \"...\", \"reply\": \"...\", \"tool_calls\": [{\"name\": \"...\", \"arguments\": {...}}]} per line)", path, len(rules)+1, err)
		}
		rules = append(rules, r)
	}
	return rules, nil
}
