// Package provider owns the one narrow interface every model backend
// implements — one call in, one response out — and the wrappers that add
// behaviour around it while returning the same interface: redaction of
// secrets, rate limits, retries with backoff, the response cache, and the
// circuit breaker that gives up a target after consecutive auth or
// unavailable failures (WithBreaker). Backends live in
// sub-packages (openai, anthropic, exec, replay); the conformance suite every
// backend passes is providertest. This package must not import the runner,
// scorer or store.
package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Message is one chat message. An assistant message may carry the tool calls
// the model made (ToolCalls, with or without Content); a "tool" message is
// the result of one of them (ToolCallID names the call it answers).
type Message struct {
	Role       string     `json:"role"` // system | user | assistant | tool
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// Tool is one function the model may call: its name, what it does, and a
// JSON Schema (an object schema) for its arguments, sent as the user wrote it.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// ToolCall is one call the model made. Arguments is the text the model
// wrote for them, kept as written: it may be invalid JSON (a loud failure the
// scorers report), so it is a string, never re-encoded. ID is the provider's
// identifier for the call ("" when it gives none).
type ToolCall struct {
	ID        string `json:"id,omitempty"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Tool choices a request may carry in ToolChoice; any other non-empty value
// is the name of the one tool the model must call.
const (
	ToolChoiceAuto     = "auto"
	ToolChoiceNone     = "none"
	ToolChoiceRequired = "required"
)

// ResponseFormat asks for a reply that fills a JSON Schema: OpenAI's
// structured outputs (strict when Strict), Anthropic's through a forced tool
// whose input is the reply.
type ResponseFormat struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict,omitempty"`
}

// Request is one call to a target.
type Request struct {
	Model    string    `json:"model"`
	Messages []Message `json:"messages"`
	Params   Params    `json:"params"`
	// Tools the model may call, how it must choose among them ("" is the
	// provider's default: auto when there are tools), and the schema its
	// reply must fill. All three are part of the cache key when set.
	Tools          []Tool          `json:"tools,omitempty"`
	ToolChoice     string          `json:"tool_choice,omitempty"`
	ResponseFormat *ResponseFormat `json:"response_format,omitempty"`
	// CaseID and Vars identify the case; replay joins on Vars and exec passes
	// them to the user's program. They are not part of the cache key.
	CaseID string         `json:"case_id"`
	Vars   map[string]any `json:"vars,omitempty"`
	Epoch  int            `json:"epoch"`
}

// Usage counts tokens as the provider reported them.
type Usage struct {
	Input  int `json:"input"`
	Output int `json:"output"`
	Cached int `json:"cached"`
}

// Response is what a target returned.
type Response struct {
	Text         string `json:"text"`
	FinishReason string `json:"finish_reason"`
	// ToolCalls are the calls the model made, in the order it made them.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	Usage     Usage      `json:"usage"`
	// Model and SystemFingerprint are what the provider reported serving.
	Model             string `json:"model,omitempty"`
	SystemFingerprint string `json:"system_fingerprint,omitempty"`
	// Latency is the whole call; FirstToken is the time to the first content
	// token when streamed (0 otherwise).
	Latency    time.Duration `json:"latency"`
	FirstToken time.Duration `json:"first_token,omitempty"`
	// Attempts is the number of calls made (set by the retry wrapper; 1 otherwise).
	Attempts int `json:"attempts"`
	// Cached is true when the response came from the response cache.
	Cached bool `json:"cached,omitempty"`
	// Redactions is the number of secrets WithRedaction replaced in the reply.
	Redactions int `json:"redactions,omitempty"`
}

// Provider makes one call. Implementations are safe for concurrent use.
type Provider interface {
	Complete(ctx context.Context, req *Request) (*Response, error)
}

// Func adapts a function to a Provider.
type Func func(ctx context.Context, req *Request) (*Response, error)

func (f Func) Complete(ctx context.Context, req *Request) (*Response, error) { return f(ctx, req) }

// ErrorKind classifies a failed call. It is stored with the result.
type ErrorKind string

const (
	KindRateLimited ErrorKind = "rate_limited" // 429
	KindOverloaded  ErrorKind = "overloaded"   // 529 and similar
	KindServer      ErrorKind = "server_error" // 5xx
	KindTimeout     ErrorKind = "timeout"      // the per-request time-out or 408
	KindConflict    ErrorKind = "conflict"     // 409
	KindNetwork     ErrorKind = "network"      // connection reset, EOF mid-body
	KindUnavailable ErrorKind = "unavailable"  // unknown host (DNS) or connection refused: never retried
	KindMalformed   ErrorKind = "malformed_response"
	KindTruncated   ErrorKind = "truncated_stream"
	KindBadRequest  ErrorKind = "bad_request" // other 4xx: never retried
	KindAuth        ErrorKind = "auth"        // 401, 403: never retried
	KindNotFound    ErrorKind = "not_found"   // 404: never retried
	KindCanceled    ErrorKind = "canceled"
	KindExec        ErrorKind = "exec_error"    // the user's program failed
	KindNoRecord    ErrorKind = "no_record"     // replay has no output for the case
	KindOutputLimit ErrorKind = "output_limit"  // exec output or HTTP reply over max_output_bytes: never retried
	KindInvalid     ErrorKind = "invalid_reply" // a reply that does not follow the protocol
)

// Kinds lists every kind a stored result's failed call can carry, in the
// order above (KindCanceled is not one: a cancelled call is not stored).
func Kinds() []ErrorKind {
	return []ErrorKind{KindRateLimited, KindOverloaded, KindServer, KindTimeout, KindConflict, KindNetwork, KindUnavailable,
		KindMalformed, KindTruncated, KindBadRequest, KindAuth, KindNotFound, KindExec, KindNoRecord,
		KindOutputLimit, KindInvalid}
}

// Error is a classified provider failure. Message must never contain a secret.
type Error struct {
	Kind       ErrorKind
	Status     int           // HTTP status when there was one
	RetryAfter time.Duration // from Retry-After, when the server sent it
	Msg        string
	Err        error
	// redactions is the number of secrets WithRedaction replaced in the
	// message (see Redactions).
	redactions int
}

func (e *Error) Error() string {
	s := string(e.Kind)
	if e.Status != 0 {
		s = fmt.Sprintf("%s (HTTP %d)", s, e.Status)
	}
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether a failure of this kind may succeed if tried again.
func (e *Error) Retryable() bool {
	switch e.Kind {
	case KindRateLimited, KindOverloaded, KindServer, KindTimeout, KindConflict,
		KindNetwork, KindMalformed, KindTruncated:
		return true
	}
	return false
}

// KindOf returns the kind of err, or "" for nil; unclassified errors are
// reported as KindNetwork unless they are context errors.
func KindOf(err error) ErrorKind {
	if err == nil {
		return ""
	}
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Kind
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return KindTimeout
	}
	if errors.Is(err, context.Canceled) {
		return KindCanceled
	}
	return KindNetwork
}

// KindForStatus maps an HTTP status to an error kind.
func KindForStatus(status int) ErrorKind {
	switch {
	case status == 429:
		return KindRateLimited
	case status == 408:
		return KindTimeout
	case status == 409:
		return KindConflict
	case status == 529:
		return KindOverloaded
	case status == 401 || status == 403:
		return KindAuth
	case status == 404:
		return KindNotFound
	case status >= 500:
		return KindServer
	default:
		return KindBadRequest
	}
}
