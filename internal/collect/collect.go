// Package collect owns `assay collect`: an OTLP/HTTP receiver (/v1/traces,
// protobuf or JSON, gzip) whose GenAI spans are mapped by package traces and
// stored whole or not at all. It binds and authenticates like `assay serve`.
package collect

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/assay-eval/assay/internal/httpguard"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/traces"
)

// TokenEnv is the variable `assay collect` reads the access token from
// when --token is not given.
const TokenEnv = "ASSAY_COLLECT_TOKEN"

// DefaultAddr is OTLP/HTTP's usual port, on loopback.
const DefaultAddr = "127.0.0.1:4318"

// DefaultMaxBody bounds a request's body, as sent and decompressed.
const DefaultMaxBody = 16 << 20

// DefaultMaxInFlight is how many requests are handled at once: the store
// takes one request's traces at a time, so more only hold more memory.
const DefaultMaxInFlight = 4

// Path is where OTLP/HTTP exporters send traces.
const Path = "/v1/traces"

const (
	typeProto = "application/x-protobuf"
	typeJSON  = "application/json"
)

// Options configure a Receiver.
type Options struct {
	// Addr is the address to listen on (DefaultAddr when "").
	Addr string
	// Token, when set, is required of every request (Authorization: Bearer
	// TOKEN). An address that is not loopback refuses to start without one.
	Token string
	// MaxBody bounds a request's body in bytes, both as sent and after
	// gzip (DefaultMaxBody when 0): a larger one is refused with 413.
	MaxBody int64
	// MaxInFlight bounds the requests read, mapped and stored at once
	// (DefaultMaxInFlight when 0); others wait their turn. With MaxBody it
	// bounds the memory the receiver holds.
	MaxInFlight int
	// Store is where the traces go.
	Store store.Traces
	// Redact is the redaction applied to every trace before it is stored
	// (nil: every named detector).
	Redact *traces.Redactor
	// Prices price the traces by model (none: unpriced).
	Prices map[string]spec.Price
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Log receives one line per refused request (discarded when nil).
	Log *slog.Logger
}

// Counts are what a receiver has done since it started.
type Counts struct {
	// Requests answered 200; Refused those answered otherwise.
	Requests, Refused int64
	// Stored are new traces; Duplicates traces already stored (a retried
	// request); Ignored spans that were not GenAI spans.
	Stored, Duplicates, Ignored int64
	Redactions                  int64
	// Unpriced are stored traces whose model has no price.
	Unpriced int64
}

// Receiver is the OTLP/HTTP trace receiver. It is an http.Handler.
type Receiver struct {
	o     Options
	guard httpguard.Guard
	n     struct {
		requests, refused, stored, duplicates, ignored, redactions, unpriced atomic.Int64
	}
	bufs sync.Pool
	// slots holds a token per request being handled.
	slots chan struct{}
}

// New checks the options and builds the receiver: an address that is not
// loopback needs a token.
func New(o Options) (*Receiver, error) {
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
	if o.Store == nil {
		return nil, errors.New("collect: no store")
	}
	if o.Redact == nil {
		r, err := traces.NewRedactor(nil)
		if err != nil {
			return nil, err
		}
		o.Redact = r
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	g := Guard(o.Token)
	if err := g.CheckAddr(o.Addr); err != nil {
		return nil, err
	}
	return &Receiver{o: o, guard: g, bufs: sync.Pool{New: func() any { return new(bytes.Buffer) }},
		slots: make(chan struct{}, o.MaxInFlight)}, nil
}

// Guard is collect's bind, token and Host rules (serve's, with collect's
// variable and words).
func Guard(token string) httpguard.Guard {
	return httpguard.Guard{Token: token, TokenEnv: TokenEnv, Example: DefaultAddr, Refusing: "receive traces from the network"}
}

// Counts returns what the receiver has done so far.
func (rc *Receiver) Counts() Counts {
	return Counts{
		Requests: rc.n.requests.Load(), Refused: rc.n.refused.Load(),
		Stored: rc.n.stored.Load(), Duplicates: rc.n.duplicates.Load(), Ignored: rc.n.ignored.Load(),
		Redactions: rc.n.redactions.Load(), Unpriced: rc.n.unpriced.Load(),
	}
}

// Handler is the receiver behind its Host guard: what ListenAndServe
// serves.
func (rc *Receiver) Handler() http.Handler { return rc.guard.Host(rc) }

// ListenAndServe serves until ctx ends, then shuts down gracefully
// (requests in flight are finished and stored). ready, when not nil, is
// called with the address actually bound (port 0 picks one).
func (rc *Receiver) ListenAndServe(ctx context.Context, ready func(addr string)) error {
	return httpguard.Serve(ctx, "collect", rc.o.Addr, rc.Handler(), 60*time.Second, 10*time.Second, ready)
}

// ServeHTTP answers one export request: POST /v1/traces, protobuf or JSON,
// maybe gzip. Every GenAI span of the request is stored in one transaction,
// or none is.
func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	if r.URL.Path != Path {
		rc.plain(w, http.StatusNotFound, "not found: OTLP/HTTP traces are received at "+Path)
		return
	}
	if r.Method != http.MethodPost {
		h.Set("Allow", http.MethodPost)
		rc.plain(w, http.StatusMethodNotAllowed, "method not allowed: send traces with POST "+Path)
		return
	}
	if !rc.guard.Authorized(r) {
		h.Set("WWW-Authenticate", `Bearer realm="assay"`)
		rc.plain(w, http.StatusUnauthorized, "unauthorized: this receiver needs its token (send Authorization: Bearer TOKEN; with the OpenTelemetry SDK set OTEL_EXPORTER_OTLP_HEADERS=\"Authorization=Bearer TOKEN\")")
		return
	}
	ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || (ct != typeProto && ct != typeJSON) {
		rc.plain(w, http.StatusUnsupportedMediaType, fmt.Sprintf("unsupported media type %q: send %s or %s", r.Header.Get("Content-Type"), typeProto, typeJSON))
		return
	}
	enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding")))
	if enc != "" && enc != "identity" && enc != "gzip" {
		rc.plain(w, http.StatusUnsupportedMediaType, fmt.Sprintf("unsupported content encoding %q: send the body as is or gzip", enc))
		return
	}

	select {
	case rc.slots <- struct{}{}:
		defer func() { <-rc.slots }()
	case <-r.Context().Done():
		return // the client gave up waiting
	}
	buf := rc.bufs.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= 4<<20 { // keep small buffers only
			rc.bufs.Put(buf)
		}
	}()
	if status, msg := rc.readBody(w, r, enc, buf); status != 0 {
		rc.status(w, ct, status, msg)
		return
	}

	req := ptraceotlp.NewExportRequest()
	if ct == typeProto {
		err = req.UnmarshalProto(buf.Bytes())
	} else {
		err = req.UnmarshalJSON(buf.Bytes())
	}
	if err != nil {
		kind := "protobuf"
		if ct == typeJSON {
			kind = "JSON"
		}
		rc.status(w, ct, http.StatusBadRequest, fmt.Sprintf("malformed OTLP %s body: %v; nothing was stored", kind, err))
		return
	}
	now := rc.o.Now()
	ts, n, err := traces.FromOTLP(req.Traces(), now)
	if err != nil {
		rc.status(w, ct, http.StatusBadRequest, fmt.Sprintf("%v; nothing of the request was stored", err))
		return
	}
	redactions, unpriced := 0, 0
	for i := range ts {
		rc.o.Redact.Trace(&ts[i])
		redactions += ts[i].Redactions
		traces.Price(&ts[i], rc.o.Prices)
		if !ts[i].Priced {
			unpriced++
		}
	}
	stored := 0
	if len(ts) > 0 {
		stored, err = rc.o.Store.PutTraces(r.Context(), ts)
		if err != nil {
			rc.o.Log.Error("collect: storing traces", "err", err)
			// Retryable: the exporter sends the request again, and
			// PutTraces stores nothing twice.
			h.Set("Retry-After", "1")
			rc.status(w, ct, http.StatusServiceUnavailable, fmt.Sprintf("storing the request's %d traces failed: %v; nothing was stored, send it again", len(ts), err))
			return
		}
	}
	rc.n.requests.Add(1)
	rc.n.stored.Add(int64(stored))
	rc.n.duplicates.Add(int64(len(ts) - stored))
	rc.n.ignored.Add(int64(n.Ignored))
	rc.n.redactions.Add(int64(redactions))
	if stored > 0 {
		// Unpriced counts the new traces only (roughly: a retried request's
		// duplicates are rare).
		rc.n.unpriced.Add(int64(min(unpriced, stored)))
	}

	resp := ptraceotlp.NewExportResponse()
	var body []byte
	if ct == typeProto {
		body, err = resp.MarshalProto()
	} else {
		body, err = resp.MarshalJSON()
	}
	if err != nil { // an empty response always marshals
		rc.status(w, ct, http.StatusInternalServerError, err.Error())
		return
	}
	h.Set("Content-Type", ct)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// readBody reads the request's body into buf, bounded as sent and after
// gzip. It returns a status and message when the body cannot be read.
func (rc *Receiver) readBody(w http.ResponseWriter, r *http.Request, enc string, buf *bytes.Buffer) (int, string) {
	limit := rc.o.MaxBody
	if r.ContentLength > limit {
		return http.StatusRequestEntityTooLarge, fmt.Sprintf("request body of %d bytes is over the limit of %d bytes (--max-body); send smaller batches", r.ContentLength, limit)
	}
	var body io.Reader = http.MaxBytesReader(w, r.Body, limit)
	if enc == "gzip" {
		zr, err := gzip.NewReader(body)
		if err != nil {
			return readFailure(err, limit, "malformed gzip body: ")
		}
		defer zr.Close()
		body = zr
	}
	if r.ContentLength > 0 && enc != "gzip" {
		buf.Grow(int(r.ContentLength))
	}
	// One byte over the limit tells a body at the limit from one over it
	// (a gzip bomb stops here, having inflated limit+1 bytes at most).
	n, err := buf.ReadFrom(io.LimitReader(body, limit+1))
	if err != nil {
		msg := "reading the body: "
		if enc == "gzip" {
			msg = "malformed gzip body: "
		}
		return readFailure(err, limit, msg)
	}
	if n > limit {
		return http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is over the limit of %d bytes once decompressed (--max-body); send smaller batches", limit)
	}
	return 0, ""
}

func readFailure(err error, limit int64, prefix string) (int, string) {
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is over the limit of %d bytes (--max-body); send smaller batches", limit)
	}
	return http.StatusBadRequest, prefix + err.Error() + "; nothing was stored"
}

// plain answers with a text message (the request's encoding is unknown or
// beside the point).
func (rc *Receiver) plain(w http.ResponseWriter, code int, msg string) {
	rc.n.refused.Add(1)
	rc.o.Log.Info("collect: refused", "status", code, "reason", msg)
	http.Error(w, msg, code)
}

// status answers a failed export with a google.rpc.Status in the request's
// encoding, as OTLP/HTTP asks: its message is the reason.
func (rc *Receiver) status(w http.ResponseWriter, ct string, code int, msg string) {
	rc.n.refused.Add(1)
	rc.o.Log.Info("collect: refused", "status", code, "reason", msg)
	rpc := rpcCode(code)
	var body []byte
	if ct == typeJSON {
		body = statusJSON(rpc, msg)
	} else {
		body = statusProto(rpc, msg)
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// rpcCode is the gRPC status code for an HTTP one.
func rpcCode(code int) int {
	switch code {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		return 3 // INVALID_ARGUMENT
	case http.StatusUnauthorized:
		return 16 // UNAUTHENTICATED
	case http.StatusServiceUnavailable:
		return 14 // UNAVAILABLE
	default:
		return 13 // INTERNAL
	}
}
