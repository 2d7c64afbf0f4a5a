// Package openai is the provider for the OpenAI chat-completions API and any
// server that speaks it (vLLM, Ollama, llama.cpp server, LM Studio,
// gateways), through the official openai-go SDK. It makes exactly one HTTP
// call per Complete — retries belong to the provider wrappers — and turns
// every failure into a classified *provider.Error whose text never holds
// the API key. It must not import the runner, scorer or store.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/provider/httpcall"
	"github.com/assay-eval/assay/internal/spec"
)

// DefaultBaseURL is used when the target names no base_url.
const DefaultBaseURL = "https://api.openai.com/v1"

// Provider calls one target's chat-completions endpoint.
type Provider struct {
	model  string
	stream bool
	key    string // only to redact it from error text
	limit  int64  // bytes read from a response body at most (0: httpcall.DefaultMaxReplyBytes)
	svc    sdk.ChatCompletionService
	now    func() time.Time // the clock latency is read from (registry.Env.Now)
}

var _ provider.Provider = (*Provider)(nil)

// New returns the provider for target t. apiKey may be empty for servers
// that need none. hc carries the connections; nil means a client with
// enough idle connections per host for concurrent calls. The SDK's own
// retries are off and it reads nothing from the environment: the spec
// decides everything.
func New(t *spec.Target, apiKey string, hc *http.Client) (*Provider, error) {
	if t == nil {
		return nil, errors.New("openai: no target")
	}
	if t.Model == "" {
		return nil, fmt.Errorf("openai: target %q has no model; set model to the name the server serves (such as gpt-4o-mini or llama3.1:8b)", t.Name)
	}
	base := t.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	if err := httpcall.CheckBaseURL(base, "http://127.0.0.1:11434/v1"); err != nil {
		return nil, fmt.Errorf("openai: target %q: %w", t.Name, err)
	}
	if hc == nil {
		hc = httpcall.NewClient()
	}
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithMaxRetries(0),
		option.WithHTTPClient(hc),
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
	return &Provider{
		now:    time.Now,
		model:  t.Model,
		stream: t.Stream,
		key:    apiKey,
		limit:  t.MaxOutputBytes,
		// The service alone, not sdk.NewClient: the client would add
		// OPENAI_* settings from the environment.
		svc: sdk.NewChatCompletionService(opts...),
	}, nil
}

// Complete makes one chat-completions call, streamed when the target says
// stream: true.
func (p *Provider) Complete(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	start := p.now()
	params, err := p.params(req)
	if err != nil {
		return nil, err
	}
	c := &httpcall.Call{WatchDone: p.stream, Limit: p.limit}
	mw := option.WithMiddleware(c.Middleware)
	var resp *provider.Response
	if p.stream {
		resp, err = p.completeStream(ctx, params, c, mw, start)
	} else {
		resp, err = p.completePlain(ctx, params, c, mw)
	}
	if err != nil {
		return nil, err
	}
	if resp.Model == "" {
		resp.Model = string(params.Model)
	}
	resp.Latency = p.now().Sub(start)
	resp.Attempts = 1
	return resp, nil
}

func (p *Provider) params(req *provider.Request) (sdk.ChatCompletionNewParams, error) {
	var params sdk.ChatCompletionNewParams
	params.Model = req.Model
	if params.Model == "" {
		params.Model = p.model
	}
	if len(req.Messages) == 0 {
		return params, &provider.Error{Kind: provider.KindBadRequest, Msg: "the request has no messages"}
	}
	params.Messages = make([]sdk.ChatCompletionMessageParamUnion, 0, len(req.Messages))
	for i, m := range req.Messages {
		switch m.Role {
		case "system":
			params.Messages = append(params.Messages, sdk.SystemMessage(m.Content))
		case "user":
			params.Messages = append(params.Messages, sdk.UserMessage(m.Content))
		case "assistant":
			params.Messages = append(params.Messages, sdk.AssistantMessage(m.Content))
		default:
			return params, &provider.Error{Kind: provider.KindBadRequest, Msg: fmt.Sprintf("message %d has role %q; valid roles are system, user and assistant", i, m.Role)}
		}
	}
	pr := req.Params
	if pr.Temperature != nil {
		params.Temperature = sdk.Float(*pr.Temperature)
	}
	if pr.TopP != nil {
		params.TopP = sdk.Float(*pr.TopP)
	}
	if pr.MaxTokens != nil {
		// max_tokens, not max_completion_tokens: vLLM, Ollama and llama.cpp
		// server know only max_tokens, and OpenAI still accepts it for
		// chat models.
		params.MaxTokens = sdk.Int(int64(*pr.MaxTokens))
	}
	if pr.Seed != nil {
		params.Seed = sdk.Int(*pr.Seed)
	}
	if len(pr.Stop) > 0 {
		params.Stop.OfStringArray = pr.Stop
	}
	if p.stream {
		params.StreamOptions.IncludeUsage = sdk.Bool(true)
	}
	return params, nil
}

func (p *Provider) completePlain(ctx context.Context, params sdk.ChatCompletionNewParams, c *httpcall.Call, mw option.RequestOption) (*provider.Response, error) {
	cc, err := p.svc.New(ctx, params, mw)
	if err != nil || c.OverLimit() {
		return nil, c.Classify(ctx, err, p.key, nil)
	}
	if len(cc.Choices) == 0 {
		return nil, &provider.Error{Kind: provider.KindMalformed, Status: c.Status(), Msg: "the response has no choices"}
	}
	ch := cc.Choices[0]
	text := ch.Message.Content
	if text == "" {
		text = ch.Message.Refusal // what the model said instead
	}
	return &provider.Response{
		Text:              text,
		FinishReason:      ch.FinishReason,
		Usage:             usage(cc.Usage),
		Model:             cc.Model,
		SystemFingerprint: systemFingerprint(cc),
	}, nil
}

func (p *Provider) completeStream(ctx context.Context, params sdk.ChatCompletionNewParams, c *httpcall.Call, mw option.RequestOption, start time.Time) (*provider.Response, error) {
	stream := p.svc.NewStreaming(ctx, params, mw)
	defer stream.Close()
	var (
		resp     provider.Response
		text     strings.Builder
		refusal  strings.Builder
		chunks   int
		sawUsage bool
	)
	for stream.Next() {
		ch := stream.Current()
		chunks++
		if ch.Model != "" {
			resp.Model = ch.Model
		}
		if fp := systemFingerprint(&ch); fp != "" {
			resp.SystemFingerprint = fp
		}
		if ch.JSON.Usage.Valid() {
			resp.Usage = usage(ch.Usage)
			sawUsage = true
		}
		for _, choice := range ch.Choices {
			if choice.Index != 0 {
				continue
			}
			if choice.Delta.Content != "" {
				if resp.FirstToken == 0 {
					resp.FirstToken = p.now().Sub(start)
				}
				text.WriteString(choice.Delta.Content)
			}
			refusal.WriteString(choice.Delta.Refusal)
			if choice.FinishReason != "" {
				resp.FinishReason = choice.FinishReason
			}
		}
	}
	if err := stream.Err(); err != nil || c.OverLimit() {
		return nil, c.Classify(ctx, err, p.key, streamError)
	}
	status := c.Status()
	switch {
	case chunks == 0:
		return nil, &provider.Error{Kind: provider.KindMalformed, Status: status, Msg: fmt.Sprintf("the stream carried no chunks (Content-Type %q); does the server stream chat completions?", httpcall.Clean(c.ContentType()))}
	case resp.FinishReason == "":
		return nil, &provider.Error{Kind: provider.KindTruncated, Status: status, Msg: fmt.Sprintf("the stream ended after %d chunks without a finish_reason", chunks)}
	case !sawUsage && !c.SawDone():
		// A server that ignores include_usage still ends with [DONE]; with
		// neither, the tail of the stream was lost.
		return nil, &provider.Error{Kind: provider.KindTruncated, Status: status, Msg: "the stream ended without its usage chunk or data: [DONE]"}
	}
	resp.Text = text.String()
	if resp.Text == "" {
		resp.Text = refusal.String()
	}
	return &resp, nil
}

// streamError classifies an error object the server sent inside a stream.
func streamError(err error) (provider.ErrorKind, string) {
	var se *ssestream.StreamError
	if !errors.As(err, &se) {
		return "", ""
	}
	var typ struct {
		Error struct {
			Type string `json:"type"`
			Code any    `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(se.Event.Data, &typ)
	kind := httpcall.KindForErrorType(typ.Error.Type)
	if code, ok := typ.Error.Code.(string); ok && kind == provider.KindServer {
		kind = httpcall.KindForErrorType(code)
	}
	return kind, "error in the stream: " + httpcall.ErrorText(se.Event.Data)
}

// systemFingerprint is the backend configuration a reply (a completion or a
// stream chunk) says it was served by; drift, diff and the gate compare it
// across runs and warn when it changed. The SDK marks the field deprecated
// (OpenAI may stop sending it) but the API and compatible servers still send
// it, and when one does not, "" is recorded, as for providers without one.
// This is the one place that reads it: when the SDK drops the field, only
// this function changes (to read the raw JSON, or to return "").
func systemFingerprint(reply any) string {
	switch r := reply.(type) {
	case *sdk.ChatCompletion:
		//lint:ignore SA1019 read while the API sends it (see above), "" otherwise.
		return r.SystemFingerprint
	case *sdk.ChatCompletionChunk:
		//lint:ignore SA1019 as for a completion.
		return r.SystemFingerprint
	}
	return ""
}

func usage(u sdk.CompletionUsage) provider.Usage {
	return provider.Usage{
		Input:  int(u.PromptTokens),
		Output: int(u.CompletionTokens),
		Cached: int(u.PromptTokensDetails.CachedTokens),
	}
}
