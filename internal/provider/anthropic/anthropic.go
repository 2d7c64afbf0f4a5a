// Package anthropic is the provider for the Anthropic Messages API through
// the official anthropic-sdk-go. It makes exactly one HTTP call per
// Complete — retries belong to the provider wrappers — and turns every
// failure into a classified *provider.Error whose text never holds the API
// key. It must not import the runner, scorer or store.
package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

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
	format := "" // the tool the response format is sent as
	if req.ResponseFormat != nil {
		format = req.ResponseFormat.Name
	}
	var resp *provider.Response
	if p.stream {
		resp, err = p.completeStream(ctx, params, format, c, opts, start)
	} else {
		// The caller's context bounds the call. A long request timeout keeps
		// the SDK from imposing its own 10-minute limit and from refusing a
		// large max_tokens without streaming.
		opts = append(opts, option.WithRequestTimeout(24*time.Hour))
		resp, err = p.completePlain(ctx, params, format, c, opts)
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
	results := false // the last message holds tool results
	for i, m := range req.Messages {
		last := len(params.Messages) - 1
		switch m.Role {
		case "system":
			params.System = append(params.System, sdk.TextBlockParam{Text: m.Content})
		case "user":
			if results {
				// After tool results, in the same user message (an empty
				// text block, which the API refuses, is left out).
				if m.Content != "" {
					params.Messages[last].OfUser.Content = append(params.Messages[last].OfUser.Content, sdk.NewTextBlock(m.Content))
				}
				results = false
				continue
			}
			params.Messages = append(params.Messages, sdk.NewUserMessage(sdk.NewTextBlock(m.Content)))
		case "assistant":
			var blocks []sdk.ContentBlockParamUnion
			if m.Content != "" || len(m.ToolCalls) == 0 {
				blocks = append(blocks, sdk.NewTextBlock(m.Content))
			}
			for _, tc := range m.ToolCalls {
				input, err := toolInput(tc.Arguments)
				if err != nil {
					return params, &provider.Error{Kind: provider.KindBadRequest, Msg: fmt.Sprintf("message %d: tool call %q: %v", i, tc.Name, err)}
				}
				blocks = append(blocks, sdk.NewToolUseBlock(tc.ID, input, tc.Name))
			}
			params.Messages = append(params.Messages, sdk.NewAssistantMessage(blocks...))
			results = false
		case "tool":
			if m.ToolCallID == "" {
				return params, &provider.Error{Kind: provider.KindBadRequest, Msg: fmt.Sprintf("message %d has role tool but no tool_call_id; a tool message answers the call it names", i)}
			}
			// Tool results go back as a user message of tool_result
			// blocks; consecutive ones share it.
			block := sdk.NewToolResultBlock(m.ToolCallID, m.Content, false)
			block.OfToolResult.IsError = param.Opt[bool]{}
			if results {
				params.Messages[last].OfUser.Content = append(params.Messages[last].OfUser.Content, block)
			} else {
				params.Messages = append(params.Messages, sdk.NewUserMessage(block))
			}
			results = true
		default:
			return params, &provider.Error{Kind: provider.KindBadRequest, Msg: fmt.Sprintf("message %d has role %q; valid roles are system, user, assistant and tool", i, m.Role)}
		}
	}
	if err := tools(&params, req); err != nil {
		return params, err
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

// toolInput is a tool call's arguments as a tool_use block's input, which
// the Messages API takes only as an object: empty arguments are {}.
func toolInput(args string) (json.RawMessage, error) {
	a := strings.TrimSpace(args)
	if a == "" {
		return json.RawMessage(`{}`), nil
	}
	if a[0] != '{' || !json.Valid([]byte(a)) {
		// The Messages API takes a tool_use input only as an object, so a
		// past call whose arguments the model wrote as invalid JSON (an
		// agent loop told it so and went on) is sent as an object holding
		// the text as written: the conversation goes on as it does
		// through the OpenAI wire, where arguments are text.
		return json.Marshal(map[string]string{InvalidArgumentsKey: args})
	}
	return json.RawMessage(a), nil
}

// InvalidArgumentsKey is the one key of the object a past tool call's
// arguments are sent as when they are not a JSON object (see toolInput).
const InvalidArgumentsKey = "invalid_arguments"

// inputSchema is a JSON Schema as a tool's input_schema, every keyword but
// type sent as written.
func inputSchema(name string, schema json.RawMessage) (sdk.ToolInputSchemaParam, error) {
	var in sdk.ToolInputSchemaParam
	if len(bytes.TrimSpace(schema)) == 0 {
		// No parameters: an object without properties (the API needs an
		// input_schema, and an empty one would not be sent).
		in.Properties = map[string]any{}
		return in, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(schema, &fields); err != nil || fields == nil {
		return in, &provider.Error{Kind: provider.KindBadRequest, Msg: fmt.Sprintf("tool %q: the schema must be a JSON Schema object", name)}
	}
	if t, ok := fields["type"]; ok && string(bytes.TrimSpace(t)) != `"object"` {
		return in, &provider.Error{Kind: provider.KindBadRequest, Msg: fmt.Sprintf("tool %q: the schema's type is %s; a tool's input_schema must be of type \"object\"", name, t)}
	}
	delete(fields, "type")
	if len(fields) > 0 {
		in.ExtraFields = make(map[string]any, len(fields))
		for k, v := range fields {
			in.ExtraFields[k] = v
		}
	}
	return in, nil
}

// tools sets the request's tools, its tool choice (auto → auto, required →
// any, none → none, a name → that tool) and its response format, which the
// Messages API does not have: it goes as one more tool, named after the
// format, whose input_schema is the schema, and the model is made to call
// it (with other tools offered, to call one of them or it), so its input is
// the reply's text (see response).
func tools(params *sdk.MessageNewParams, req *provider.Request) error {
	for _, t := range req.Tools {
		schema, err := inputSchema(t.Name, t.Parameters)
		if err != nil {
			return err
		}
		tp := sdk.ToolParam{Name: t.Name, InputSchema: schema}
		if t.Description != "" {
			tp.Description = sdk.String(t.Description)
		}
		params.Tools = append(params.Tools, sdk.ToolUnionParam{OfTool: &tp})
	}
	choice := req.ToolChoice
	if len(req.Tools) == 0 {
		choice = "" // the API refuses a tool choice without tools
	}
	if f := req.ResponseFormat; f != nil {
		for _, t := range req.Tools {
			if t.Name == f.Name {
				return &provider.Error{Kind: provider.KindBadRequest, Msg: fmt.Sprintf("the response format %q has the name of a tool; on the Messages API it is sent as a tool of that name, so the names must differ", f.Name)}
			}
		}
		schema, err := inputSchema(f.Name, f.Schema)
		if err != nil {
			return err
		}
		tp := sdk.ToolParam{Name: f.Name, InputSchema: schema, Description: sdk.String(formatDescription)}
		if f.Strict {
			tp.Strict = sdk.Bool(true)
		}
		params.Tools = append(params.Tools, sdk.ToolUnionParam{OfTool: &tp})
		switch choice {
		case "", provider.ToolChoiceAuto, provider.ToolChoiceRequired:
			if len(req.Tools) > 0 {
				choice = provider.ToolChoiceRequired
				break
			}
			choice = f.Name
		case provider.ToolChoiceNone:
			choice = f.Name
		}
	}
	switch choice {
	case "":
	case provider.ToolChoiceAuto:
		params.ToolChoice = sdk.ToolChoiceUnionParam{OfAuto: &sdk.ToolChoiceAutoParam{}}
	case provider.ToolChoiceRequired:
		params.ToolChoice = sdk.ToolChoiceUnionParam{OfAny: &sdk.ToolChoiceAnyParam{}}
	case provider.ToolChoiceNone:
		params.ToolChoice = sdk.ToolChoiceUnionParam{OfNone: &sdk.ToolChoiceNoneParam{}}
	default:
		params.ToolChoice = sdk.ToolChoiceParamOfTool(choice)
	}
	return nil
}

func (p *Provider) completePlain(ctx context.Context, params sdk.MessageNewParams, format string, c *httpcall.Call, opts []option.RequestOption) (*provider.Response, error) {
	msg, err := p.svc.New(ctx, params, opts...)
	if err != nil || c.OverLimit() {
		return nil, c.Classify(ctx, err, p.key, nil)
	}
	if msg == nil { // a body of JSON null
		return nil, &provider.Error{Kind: provider.KindMalformed, Status: c.Status(), Msg: "the response is null, not a message"}
	}
	if msg.StopReason == "" && len(msg.Content) == 0 {
		return nil, &provider.Error{Kind: provider.KindMalformed, Status: c.Status(), Msg: "the response has neither content nor a stop_reason"}
	}
	return response(msg, format, nil, c.Status())
}

func (p *Provider) completeStream(ctx context.Context, params sdk.MessageNewParams, format string, c *httpcall.Call, opts []option.RequestOption, start time.Time) (*provider.Response, error) {
	stream := p.svc.NewStreaming(ctx, params, opts...)
	defer stream.Close()
	var (
		msg      sdk.Message
		first    time.Duration
		events   int
		sawStart bool
		sawStop  bool
		texts    = map[int64]*strings.Builder{} // text of each content block
		inputs   = map[int64]*strings.Builder{} // tool_use input of each block
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
			// Text goes to a builder instead; thinking is not kept. A
			// tool_use block's input fragments go to a builder too: the
			// SDK replaces an input that reads {} at any point by the next
			// fragment, which would rewrite arguments a model wrote.
			switch ev.Delta.Type {
			case "text_delta", "thinking_delta", "signature_delta", "input_json_delta":
				if ev.Index < 0 || ev.Index >= int64(len(msg.Content)) {
					return nil, &provider.Error{Kind: provider.KindMalformed, Status: c.Status(), Msg: fmt.Sprintf("the stream's events do not fit together: a delta for content block %d of %d", ev.Index, len(msg.Content))}
				}
				var into map[int64]*strings.Builder
				piece := ev.Delta.Text
				switch ev.Delta.Type {
				case "text_delta":
					into = texts
				case "input_json_delta":
					if msg.Content[ev.Index].Type != "tool_use" {
						return nil, &provider.Error{Kind: provider.KindMalformed, Status: c.Status(), Msg: fmt.Sprintf("the stream's events do not fit together: input_json_delta for content block %d of type %q", ev.Index, msg.Content[ev.Index].Type)}
					}
					if first == 0 {
						first = p.now().Sub(start)
					}
					into, piece = inputs, ev.Delta.PartialJSON
				default:
					continue
				}
				b := into[ev.Index]
				if b == nil {
					b = &strings.Builder{}
					into[ev.Index] = b
				}
				b.WriteString(piece)
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
	resp, err := response(&msg, format, inputs, status)
	if err != nil {
		return nil, err
	}
	resp.FirstToken = first
	return resp, nil
}

// formatDescription describes the tool a response format is sent as.
const formatDescription = "Give your reply as this tool's input: a JSON value that fills its schema."

// response reads a message: the text of its text blocks, and its tool_use
// blocks as tool calls in order, their arguments the input's JSON text (the
// streamed fragments as written, when streamed). The block of the response
// format's tool (format, "" for none) is no call: its input is the text,
// and a stop_reason tool_use that only it caused is reported as end_turn.
func response(msg *sdk.Message, format string, streamed map[int64]*strings.Builder, status int) (*provider.Response, error) {
	var text strings.Builder
	var calls []provider.ToolCall
	formatted, isFormatted := "", false
	for i, b := range msg.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			// No fragment, or empty ones, leave the input the block
			// started with ({} for a call without arguments).
			var args string
			if in := streamed[int64(i)]; in != nil && in.Len() > 0 {
				args = in.String()
			} else {
				args = inputText(b.Input)
			}
			if b.Name == "" {
				return nil, &provider.Error{Kind: provider.KindMalformed, Status: status, Msg: fmt.Sprintf("content block %d is a tool_use without a name", i)}
			}
			if format != "" && b.Name == format && !isFormatted {
				formatted, isFormatted = args, true
				continue
			}
			calls = append(calls, provider.ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		}
	}
	out := text.String()
	finish := string(msg.StopReason)
	if isFormatted {
		out = formatted
		if len(calls) == 0 && msg.StopReason == sdk.StopReasonToolUse {
			// The format's tool is no call: the model ended its turn
			// with the reply.
			finish = string(sdk.StopReasonEndTurn)
		}
	}
	u := msg.Usage
	return &provider.Response{
		Text:         out,
		FinishReason: finish,
		ToolCalls:    calls,
		// input_tokens excludes what was read from or written to the
		// prompt cache; Input counts every input token, as OpenAI's
		// prompt_tokens does, with the cache reads in Cached.
		Usage: provider.Usage{
			Input:  int(u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens),
			Output: int(u.OutputTokens),
			Cached: int(u.CacheReadInputTokens),
		},
		Model: msg.Model,
	}, nil
}

// inputText is a whole tool_use block's input as arguments text: an object
// (or any JSON value) in its compact form; a JSON string is taken as the
// text itself — how a server passes on arguments that are not an object,
// such as invalid JSON, which a whole message cannot carry otherwise.
func inputText(in json.RawMessage) string {
	in = bytes.TrimSpace(in)
	if len(in) > 0 && in[0] == '"' {
		var s string
		if json.Unmarshal(in, &s) == nil {
			return s
		}
	}
	var b bytes.Buffer
	if json.Compact(&b, in) != nil {
		return string(in)
	}
	return b.String()
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
