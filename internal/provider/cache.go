package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
)

// Cache stores replies by key. The SQLite store implements it. CachePut
// records the target whose reply it stores (CacheScope.Target), so a user
// can count or clear one target's entries; the target is not part of the
// key.
type Cache interface {
	CacheGet(ctx context.Context, key string) ([]byte, bool, error)
	CachePut(ctx context.Context, key, target string, response []byte) error
}

// CacheScope names the target whose replies are cached: with the request's
// model, params and messages it makes the cache key. It holds no secret.
type CacheScope struct {
	Provider string // openai | anthropic | ...
	BaseURL  string // the endpoint, so a local server's replies are not served as the vendor's
	Model    string // used when the request names no model
	// Target is the spec's name for the target, recorded beside each
	// stored reply; it is not in the key (two targets that send the same
	// request to the same model share the reply).
	Target string
	// Headers are the target's extra HTTP headers: one can select the
	// backend or the deployment that answers, so they are in the key (only
	// inside its SHA-256, never stored as written). None keeps the key it
	// had before targets had headers.
	Headers map[string]string
}

// cacheKeyDoc is the canonical form hashed into a cache key. Field order and
// JSON names are part of the key: changing them invalidates every cache.
type cacheKeyDoc struct {
	Provider string    `json:"provider"`
	BaseURL  string    `json:"base_url"`
	Model    string    `json:"model"`
	Params   Params    `json:"params"`
	Messages []Message `json:"messages"`
	Epoch    int       `json:"epoch,omitempty"`
	// Headers is last and omitted when empty, so a target without headers
	// keeps its earlier keys; encoding/json writes map keys sorted.
	Headers map[string]string `json:"headers,omitempty"`
	// The tools, the tool choice and the response format come after, each
	// omitted when unset, for the same reason.
	Tools          []Tool          `json:"tools,omitempty"`
	ToolChoice     string          `json:"tool_choice,omitempty"`
	ResponseFormat *ResponseFormat `json:"response_format,omitempty"`
}

// CacheKey is "sha256:<hex>" of the canonical JSON of everything that decides
// the reply: provider, base URL, model (the request's, else the scope's),
// params, messages and the target's extra headers. Case ID and vars are not in it: two cases that send the
// same messages to the same model get the same reply. Params left unset and
// params set to their default differ (nil temperature is the provider's
// default, 0 is greedy), as they do on the wire.
//
// The epoch is in the key when it is above 1. Epochs exist to sample the model
// again; were epoch 2 served epoch 1's reply, every epoch would be identical
// and the run would report zero variance that the model does not have. Epoch
// 0 (unset) and 1 share a key, so a single-epoch run and the first epoch of a
// multi-epoch run share their replies, and each later epoch is cached on its
// own so that a re-run does not pay for it twice.
//
// CacheKey returns "" for a request that cannot be encoded (a NaN or infinite
// float param); WithCache does not cache such a request.
func CacheKey(scope CacheScope, req *Request) string {
	d := cacheKeyDoc{
		Provider: scope.Provider,
		BaseURL:  scope.BaseURL,
		Model:    req.Model,
		Params:   req.Params,
		Messages: req.Messages,
		Headers:  scope.Headers,

		Tools:          req.Tools,
		ToolChoice:     req.ToolChoice,
		ResponseFormat: req.ResponseFormat,
	}
	if d.Model == "" {
		d.Model = scope.Model
	}
	if d.Messages == nil {
		d.Messages = []Message{}
	}
	if req.Epoch > 1 {
		d.Epoch = req.Epoch
	}
	// encoding/json writes struct fields in declaration order, so the bytes
	// are canonical. It fails only on a NaN or infinite float param, which
	// no provider would accept either.
	b, err := json.Marshal(d)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// WithCache serves a request from c when the same request (by CacheKey) has
// succeeded before, and stores every successful reply; failures are never
// cached. A hit has Cached set and Attempts 0 (no call was made, nothing was
// paid in this run), and keeps the original reply's text, tokens and
// latencies, so that reports still show what the call cost when it was made;
// pricing a hit as free is the runner's decision, on the Cached flag.
//
// The cache never fails a call: a read error is logged and the target is
// called; a write error is logged and the reply returned. The reply is stored
// even when ctx ends just after it arrived, since it was paid for. Only the
// Response is stored; requests, and so secrets, never are.
//
// Cache a target only when its reply depends on nothing but the key: not exec
// targets (the program and the case's vars decide the reply) and not replay.
func WithCache(p Provider, c Cache, scope CacheScope) Provider {
	return withCache(p, c, scope, false, slog.Default())
}

// WithCacheRefresh is WithCache that never reads the cache: every request
// calls the target, and every successful reply replaces what the cache held
// under its key (--no-cache). A later cached call then gets the fresh reply,
// not the one the refresh bypassed.
func WithCacheRefresh(p Provider, c Cache, scope CacheScope) Provider {
	return withCache(p, c, scope, true, slog.Default())
}

func withCache(p Provider, c Cache, scope CacheScope, refresh bool, log *slog.Logger) Provider {
	if c == nil {
		return p
	}
	return &cacher{p: p, c: c, scope: scope, refresh: refresh, log: log}
}

type cacher struct {
	p       Provider
	c       Cache
	scope   CacheScope
	refresh bool // write only: never serve a stored reply
	log     *slog.Logger
}

func (w *cacher) Complete(ctx context.Context, req *Request) (*Response, error) {
	key := CacheKey(w.scope, req)
	if key == "" {
		return w.p.Complete(ctx, req)
	}
	var b []byte
	var ok bool
	var err error
	if !w.refresh {
		b, ok, err = w.c.CacheGet(ctx, key)
	}
	switch {
	case err != nil:
		if ctx.Err() != nil {
			return nil, canceled(ctx, err)
		}
		w.log.Warn("response cache: read failed; calling the target", "key", key, "err", err)
	case ok:
		var resp Response
		if err := json.Unmarshal(b, &resp); err != nil {
			w.log.Warn("response cache: stored reply unreadable; calling the target", "key", key, "err", err)
			break
		}
		resp.Cached = true
		resp.Attempts = 0
		return &resp, nil
	}

	resp, err := w.p.Complete(ctx, req)
	if err != nil || resp == nil {
		return resp, err
	}
	stored := *resp
	stored.Cached = false
	b, err = json.Marshal(&stored)
	if err == nil {
		err = w.c.CachePut(context.WithoutCancel(ctx), key, w.scope.Target, b)
	}
	if err != nil {
		w.log.Warn("response cache: write failed; the reply is kept in the run but not cached", "key", key, "err", err)
	}
	return resp, nil
}
