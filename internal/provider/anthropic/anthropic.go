// Package anthropic is the provider for the Anthropic Messages API through
// the official anthropic-sdk-go. It makes exactly one HTTP call per
// Complete — retries belong to the provider wrappers — and turns every
// failure into a classified *provider.Error whose text never holds the API
// key. It must not import the runner, scorer or store.
package anthropic

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/provider/httpcall"
	"github.com/assay-eval/assay/internal/spec"
)

// DefaultBaseURL is used when the target names no base_url.
const DefaultBaseURL = "https://api.anthropic.com"

// DefaultMaxTokens is sent when neither the request nor the target sets
// params.max_tokens: the Messages API requires a value.
const DefaultMaxTokens = 1024

// Provider calls one target's Messages endpoint.
type Provider struct {
	model     string
	maxTokens int64 // when the request sets none
	stream    bool
	key       string // only to redact it from error text
	limit     int64  // bytes read from a response body at most (0: httpcall.DefaultMaxReplyBytes)
	svc       sdk.MessageService
	now       func() time.Time // the clock latency is read from (registry.Env.Now)
}

var _ provider.Provider = (*Provider)(nil)

// New returns the provider for target t. apiKey may be empty for a proxy
// that adds its own. hc carries the connections; nil means a client with
// enough idle connections per host for concurrent calls. The SDK's own
// retries and telemetry are off and it reads nothing from the environment
// or from credential files: the spec decides everything. max_tokens, which
// the API requires, is the request's, else the target's, else
// DefaultMaxTokens.
func New(t *spec.Target, apiKey string, hc *http.Client) (*Provider, error) {
	if t == nil {
		return nil, errors.New("anthropic: no target")
	}
	if t.Model == "" {
		return nil, fmt.Errorf("anthropic: target %q has no model; set model to a Claude model name such as claude-sonnet-4-5", t.Name)
	}
	if t.Params.Seed != nil {
		return nil, fmt.Errorf("anthropic: target %q sets params.seed, which the Messages API does not have; remove it", t.Name)
	}
	base := t.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	if err := httpcall.CheckBaseURL(base, "https://api.anthropic.com"); err != nil {
		return nil, fmt.Errorf("anthropic: target %q: %w", t.Name, err)
	}
	if hc == nil {
		hc = httpcall.NewClient()
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(base),
		option.WithMaxRetries(0),
		option.WithHTTPClient(hc),
		option.WithoutOpenTelemetry(),
	}
	if apiKey != "" {
		opts = append(opts, option.WithAPIKey(apiKey))
	}
	// The spec's extra headers (checked by spec: names are tokens, values
	// one line, none the SDK sets); their values are secrets, redacted by
	// the wrapper the CLI puts around every provider.
	for _, name := range slices.Sorted(maps.Keys(t.Headers)) {
		opts = append(opts, option.WithHeader(name, t.Headers[name]))
	}
	p := &Provider{now: time.Now, model: t.Model, maxTokens: DefaultMaxTokens, stream: t.Stream, key: apiKey, limit: t.MaxOutputBytes, svc: sdk.NewClient(opts...).Messages}
	if mt := t.Params.MaxTokens; mt != nil {
		if *mt < 1 {
			return nil, fmt.Errorf("anthropic: target %q sets params.max_tokens to %d; the Messages API needs at least 1", t.Name, *mt)
		}
		p.maxTokens = int64(*mt)
	}
	return p, nil
}

// Complete makes one Messages call, streamed when the target says
// stream: true.
func (p *Provider) Complete(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	start := p.now()
	params, err := p.params(req)
	if err != nil {
		return nil, err
	}
	c := &httpcall.Call{Limit: p.limit}
	opts := []option.RequestOption{option.WithMiddleware(c.Middleware)}
	var resp *provider.Response
	if p.stream {
		resp, err = p.completeStream(ctx, params, c, opts, start)
	} else {
		// The caller's context bounds the call. A long request timeout keeps
		// the SDK from imposing its own 10-minute limit and from refusing a
		// large max_tokens without streaming.
		opts = append(opts, option.WithRequestTimeout(24*time.Hour))
		resp, err = p.completePlain(ctx, params, c, opts)
	}
	if err != nil {
		return nil, err
	}
	if resp.Model == "" {
		resp.Model = params.Model
	}
	resp.Latency = p.now().Sub(start)
	resp.Attempts = 1
	return resp, nil
}

func (p *Provider) params(req *provider.Request) (sdk.MessageNewParams, error) {
	var params sdk.MessageNewParams
	params.Model = req.Model
	if params.Model == "" {
		params.Model = p.model
	}
	for i, m := range req.Messages {
		switch m.Role {
		case "system":
			params.System = append(params.System, sdk.TextBlockParam{Text: m.Content})
		case "user":
			params.Messages = append(params.Messages, sdk.NewUserMessage(sdk.NewTextBlock(m.Content)))
		case "assistant":
			params.Messages = append(params.Messages, sdk.NewAssistantMessage(sdk.NewTextBlock(m.Content)))
		default:
			return params, &provider.Error{Kind: provider.KindBadRequest, Msg: fmt.Sprintf("message %d has role %q; valid roles are system, user and assistant", i, m.Role)}
		}
	}
	if len(params.Messages) == 0 {
		return params, &provider.Error{Kind: provider.KindBadRequest, Msg: "the request has no user or assistant message; the Messages API needs at least one"}
	}
	pr := req.Params
	params.MaxTokens = p.maxTokens
	if pr.MaxTokens != nil {
		params.MaxTokens = int64(*pr.MaxTokens)
	}
	if pr.Seed != nil {
		return params, &provider.Error{Kind: provider.KindBadRequest, Msg: "params.seed is set, but the Messages API has no seed parameter"}
	}
	params.StopSequences = pr.Stop
	// This SDK version no longer models temperature and top_p; the API
	// still takes them for the models that support them, so they go as
	// extra fields rather than being dropped behind the user's back.
	extra := map[string]any{}
	if pr.Temperature != nil {
		extra["temperature"] = *pr.Temperature
	}
	if pr.TopP != nil {
		extra["top_p"] = *pr.TopP
	}
	if len(extra) > 0 {
		params.SetExtraFields(extra)
	}
	return params, nil
}

func (p *Provider) completePlain(ctx context.Context, params sdk.MessageNewParams, c *httpcall.Call, opts []option.RequestOption) (*provider.Response, error) {
	msg, err := p.svc.New(ctx, params, opts...)
	if err != nil || c.OverLimit() {
		return nil, c.Classify(ctx, err, p.key, nil)
	}
	if msg.StopReason == "" && len(msg.Content) == 0 {
		return nil, &provider.Error{Kind: provider.KindMalformed, Status: c.Status(), Msg: "the response has neither content nor a stop_reason"}
	}
	return response(msg), nil
}

func (p *Provider) completeStream(ctx context.Context, params sdk.MessageNewParams, c *httpcall.Call, opts []option.RequestOption, start time.Time) (*provider.Response, error) {
	stream := p.svc.NewStreaming(ctx, params, opts...)
	defer stream.Close()
	var (
		msg      sdk.Message
		first    time.Duration
		events   int
		sawStart bool
		sawStop  bool
		texts    = map[int64]*strings.Builder{} // text of each content block
	)
	for stream.Next() {
		ev := stream.Current()
		events++
		switch ev.Type {
		case "message_start":
			sawStart = true
		case "content_block_delta":
			if first == 0 && ev.Delta.Type == "text_delta" && ev.Delta.Text != "" {
				first = p.now().Sub(start)
			}
			// The SDK's Accumulate appends each text, thinking or
			// signature delta to a string, copying the whole block every
			// time: quadratic in the events of a long (or hostile) stream.
			// Text goes to a builder instead; thinking is not kept.
			switch ev.Delta.Type {
			case "text_delta", "thinking_delta", "signature_delta":
				if ev.Index < 0 || ev.Index >= int64(len(msg.Content)) {
					return nil, &provider.Error{Kind: provider.KindMalformed, Status: c.Status(), Msg: fmt.Sprintf("the stream's events do not fit together: a delta for content block %d of %d", ev.Index, len(msg.Content))}
				}
				if ev.Delta.Type == "text_delta" {
					b := texts[ev.Index]
					if b == nil {
						b = &strings.Builder{}
						texts[ev.Index] = b
					}
					b.WriteString(ev.Delta.Text)
				}
				continue
			}
		case "message_stop":
			sawStop = true
		}
		if err := msg.Accumulate(ev); err != nil {
			return nil, &provider.Error{Kind: provider.KindMalformed, Status: c.Status(), Msg: "the stream's events do not fit together", Err: httpcall.RedactError(err, p.key)}
		}
	}
	if err := stream.Err(); err != nil || c.OverLimit() {
		return nil, c.Classify(ctx, err, p.key, streamError)
	}
	status := c.Status()
	switch {
	case events == 0 || !sawStart:
		return nil, &provider.Error{Kind: provider.KindMalformed, Status: status, Msg: fmt.Sprintf("the stream has no message_start event (%d events, Content-Type %q); does the server stream messages?", events, httpcall.Clean(c.ContentType()))}
	case !sawStop:
		return nil, &provider.Error{Kind: provider.KindTruncated, Status: status, Msg: fmt.Sprintf("the stream ended after %d events without message_stop", events)}
	}
	for i, b := range texts {
		if i < int64(len(msg.Content)) {
			msg.Content[i].Text += b.String()
		}
	}
	resp := response(&msg)
	resp.FirstToken = first
	return resp, nil
}

func response(msg *sdk.Message) *provider.Response {
	var text strings.Builder
	for _, b := range msg.Content {
		if b.Type == "text" {
			text.WriteString(b.Text)
		}
	}
	u := msg.Usage
	return &provider.Response{
		Text:         text.String(),
		FinishReason: string(msg.StopReason),
		// input_tokens excludes what was read from or written to the
		// prompt cache; Input counts every input token, as OpenAI's
		// prompt_tokens does, with the cache reads in Cached.
		Usage: provider.Usage{
			Input:  int(u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens),
			Output: int(u.OutputTokens),
			Cached: int(u.CacheReadInputTokens),
		},
		Model: msg.Model,
	}
}

// streamError classifies an error event inside a 200 stream, which the SDK
// returns as an *sdk.Error carrying the event's error type.
func streamError(err error) (provider.ErrorKind, string) {
	var ae *sdk.Error
	if !errors.As(err, &ae) || ae.Type() == "" {
		return "", ""
	}
	msg := "error in the stream: " + string(ae.Type())
	if ae.Message != "" {
		msg += ": " + ae.Message
	}
	return httpcall.KindForErrorType(string(ae.Type())), msg
}
