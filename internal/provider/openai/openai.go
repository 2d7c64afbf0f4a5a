// Package openai is the provider for the OpenAI chat-completions API and any
// server that speaks it (vLLM, Ollama, llama.cpp server, LM Studio,
// gateways), through the official openai-go SDK. It makes exactly one HTTP
// call per Complete — retries belong to the provider wrappers — and turns
// every failure into a classified *provider.Error whose text never holds
// the API key. It must not import the runner, scorer or store.
package openai

import (
	"bytes"
	"cmp"
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
	"github.com/openai/openai-go/v3/packages/respjson"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

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
			if len(m.ToolCalls) == 0 {
				params.Messages = append(params.Messages, sdk.AssistantMessage(m.Content))
				continue
			}
			var a sdk.ChatCompletionAssistantMessageParam
			if m.Content != "" {
				a.Content.OfString = sdk.String(m.Content)
			}
			for _, tc := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
					ID:       tc.ID,
					Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: tc.Arguments},
				}})
			}
			params.Messages = append(params.Messages, sdk.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case "tool":
			if m.ToolCallID == "" {
				return params, &provider.Error{Kind: provider.KindBadRequest, Msg: fmt.Sprintf("message %d has role tool but no tool_call_id; a tool message answers the call it names", i)}
			}
			params.Messages = append(params.Messages, sdk.ToolMessage(m.Content, m.ToolCallID))
		default:
			return params, &provider.Error{Kind: provider.KindBadRequest, Msg: fmt.Sprintf("message %d has role %q; valid roles are system, user, assistant and tool", i, m.Role)}
		}
	}
	if err := tools(&params, req); err != nil {
		return params, err
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

// tools sets the request's tools (function definitions, their parameters
// sent as written), its tool choice and its response format (a json_schema,
// strict when asked).
func tools(params *sdk.ChatCompletionNewParams, req *provider.Request) error {
	for _, t := range req.Tools {
		fn := shared.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			fn.Description = sdk.String(t.Description)
		}
		if len(t.Parameters) > 0 {
			var fields map[string]json.RawMessage
			if err := json.Unmarshal(t.Parameters, &fields); err != nil || fields == nil {
				return &provider.Error{Kind: provider.KindBadRequest, Msg: fmt.Sprintf("tool %q: parameters must be a JSON Schema object", t.Name)}
			}
			fn.Parameters = make(shared.FunctionParameters, len(fields))
			for k, v := range fields {
				fn.Parameters[k] = v
			}
		}
		params.Tools = append(params.Tools, sdk.ChatCompletionFunctionTool(fn))
	}
	switch c := req.ToolChoice; {
	case c == "" || len(req.Tools) == 0:
		// The API refuses a tool choice without tools.
	case c == provider.ToolChoiceAuto || c == provider.ToolChoiceNone || c == provider.ToolChoiceRequired:
		params.ToolChoice.OfAuto = sdk.String(c)
	default:
		params.ToolChoice.OfFunctionToolChoice = &sdk.ChatCompletionNamedToolChoiceParam{Function: sdk.ChatCompletionNamedToolChoiceFunctionParam{Name: c}}
	}
	if f := req.ResponseFormat; f != nil {
		js := shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: f.Name}
		if len(f.Schema) > 0 {
			js.Schema = f.Schema
		}
		if f.Strict {
			js.Strict = sdk.Bool(true)
		}
		params.ResponseFormat.OfJSONSchema = &shared.ResponseFormatJSONSchemaParam{JSONSchema: js}
	}
	return nil
}

func (p *Provider) completePlain(ctx context.Context, params sdk.ChatCompletionNewParams, c *httpcall.Call, mw option.RequestOption) (*provider.Response, error) {
	cc, err := p.svc.New(ctx, params, mw)
	if err != nil || c.OverLimit() {
		return nil, c.Classify(ctx, err, p.key, nil)
	}
	if cc == nil { // a body of JSON null
		return nil, &provider.Error{Kind: provider.KindMalformed, Status: c.Status(), Msg: "the response is null, not a chat completion"}
	}
	if len(cc.Choices) == 0 {
		return nil, &provider.Error{Kind: provider.KindMalformed, Status: c.Status(), Msg: "the response has no choices"}
	}
	ch := cc.Choices[0]
	text := ch.Message.Content
	if text == "" {
		text = ch.Message.Refusal // what the model said instead
	}
	var calls []provider.ToolCall
	if invalid(ch.Message.JSON.ToolCalls) {
		return nil, &provider.Error{Kind: provider.KindMalformed, Status: c.Status(), Msg: "the message's tool_calls is not a list of tool calls"}
	}
	for i, tc := range ch.Message.ToolCalls {
		if invalid(tc.Function.JSON.Name) {
			return nil, &provider.Error{Kind: provider.KindMalformed, Status: c.Status(), Msg: fmt.Sprintf("tool call %d of the response has a name that is not a string", i)}
		}
		call := provider.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}
		if a := tc.Function.JSON.Arguments; invalid(a) {
			// Some compatible servers send the arguments as a JSON value
			// rather than its text: kept as its compact text.
			var b bytes.Buffer
			if json.Compact(&b, []byte(a.Raw())) != nil {
				return nil, &provider.Error{Kind: provider.KindMalformed, Status: c.Status(), Msg: fmt.Sprintf("tool call %d of the response has arguments that are neither a string nor JSON", i)}
			}
			call.Arguments = b.String()
		}
		if tc.Type == "custom" {
			call.Name, call.Arguments = tc.Custom.Name, tc.Custom.Input
		}
		if call.Name == "" {
			return nil, &provider.Error{Kind: provider.KindMalformed, Status: c.Status(), Msg: fmt.Sprintf("tool call %d of the response has no name", i)}
		}
		calls = append(calls, call)
	}
	return &provider.Response{
		Text:              text,
		FinishReason:      ch.FinishReason,
		ToolCalls:         calls,
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
		calls    streamCalls
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
			if len(choice.Delta.ToolCalls) > 0 && resp.FirstToken == 0 {
				resp.FirstToken = p.now().Sub(start)
			}
			if invalid(choice.Delta.JSON.ToolCalls) {
				return nil, &provider.Error{Kind: provider.KindMalformed, Status: c.Status(), Msg: "a chunk's tool_calls is not a list of tool call deltas"}
			}
			for _, d := range choice.Delta.ToolCalls {
				if invalid(d.Function.JSON.Arguments) || invalid(d.Function.JSON.Name) || invalid(d.JSON.Index) {
					return nil, &provider.Error{Kind: provider.KindMalformed, Status: c.Status(), Msg: "a chunk's tool call delta has a field of the wrong type"}
				}
				calls.add(d.Index, d.ID, d.Function.Name, d.Function.Arguments)
			}
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
	tc, err := calls.done()
	if err != nil {
		return nil, &provider.Error{Kind: provider.KindMalformed, Status: status, Msg: err.Error()}
	}
	resp.ToolCalls = tc
	return &resp, nil
}

// invalid reports whether a reply's field was present with a value of the
// wrong type, which the SDK reads as the zero value.
func invalid(f respjson.Field) bool { return !f.Valid() && f.Raw() != "" && f.Raw() != respjson.Null }

// streamCalls accumulates a stream's tool calls: each delta names the
// call's index; the first gives its id and name, every one may carry a
// fragment of its arguments. A delta whose id differs from the id of the call
// at its index starts another call (a server that leaves the index out, so
// every call is at 0, still gives one call per id).
type streamCalls struct {
	cur   map[int64]*streamCall // the call each index is filling
	calls []*streamCall         // in order of their first delta
}

type streamCall struct {
	index    int64
	id, name string
	args     strings.Builder
}

func (s *streamCalls) add(index int64, id, name, args string) {
	if s.cur == nil {
		s.cur = map[int64]*streamCall{}
	}
	c := s.cur[index]
	if c == nil || (id != "" && c.id != "" && id != c.id) {
		c = &streamCall{index: index}
		s.cur[index] = c
		s.calls = append(s.calls, c)
	}
	if c.id == "" {
		c.id = id
	}
	// The name comes whole in the call's first delta; a server that
	// repeats it is not read as a longer name, one that splits it is joined.
	if name != c.name {
		c.name += name
	}
	c.args.WriteString(args)
}

// done returns the calls in index order (calls at one index in the order
// they began), arguments as the fragments wrote them; a call that never got
// a name is an error.
func (s *streamCalls) done() ([]provider.ToolCall, error) {
	if len(s.calls) == 0 {
		return nil, nil
	}
	slices.SortStableFunc(s.calls, func(a, b *streamCall) int { return cmp.Compare(a.index, b.index) })
	out := make([]provider.ToolCall, 0, len(s.calls))
	for _, c := range s.calls {
		if c.name == "" {
			return nil, fmt.Errorf("the stream's tool call at index %d has no name", c.index)
		}
		out = append(out, provider.ToolCall{ID: c.id, Name: c.name, Arguments: c.args.String()})
	}
	return out, nil
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
