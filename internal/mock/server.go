package mock

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// maxBody bounds a request body.
const maxBody = 16 << 20

// Server is the mock API server. Its handler is safe for concurrent use.
type Server struct {
	opts    Options
	log     *slog.Logger
	limiter *rate.Limiter // nil: no rate limit
	slots   *slots        // nil: no capacity limit

	retryAfterSec string // header values for 429s
	retryAfterMs  string

	// drawn is false when no fault or jitter is configured, so the request
	// path skips the lock.
	drawn bool
	mu    sync.Mutex // guards rng
	rng   *rand.Rand

	done      chan struct{} // closed by Close: hung and slow requests return
	closeOnce sync.Once

	seq atomic.Uint64 // request ids

	derivedBy sync.Map     // schema text → the JSON deriveJSON gives (see derived)
	nDerived  atomic.Int64 // entries in derivedBy
	n         counters
	buf       sync.Pool // *[]byte

	runMu  sync.Mutex
	srv    *http.Server
	served chan struct{}
}

type counters struct {
	requests, ok, rateLimit, fail, overload, hang, truncate, malformed, malformedArgs, rejected, inFlight atomic.Int64
}

// New returns a server configured by opts. Call Start to listen, or mount
// Handler in a server of your own (httptest.NewServer(s.Handler())).
func New(opts Options) *Server {
	s := &Server{
		opts: opts,
		log:  opts.Logger,
		rng:  rand.New(rand.NewPCG(uint64(opts.Seed), 0x9e3779b97f4a7c15)),
		done: make(chan struct{}),
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.opts.Now == nil {
		s.opts.Now = time.Now
	}
	if opts.Rate > 0 {
		burst := opts.Burst
		if burst <= 0 {
			burst = max(1, int(math.Ceil(opts.Rate)))
		}
		s.limiter = rate.NewLimiter(rate.Limit(opts.Rate), burst)
	}
	ra := opts.RetryAfter
	if ra <= 0 {
		ra = time.Second
	}
	if opts.Capacity > 0 {
		s.slots = newSlots(opts.Capacity, opts.QueueLimit)
	}
	s.retryAfterSec = strconv.FormatInt(int64(math.Ceil(ra.Seconds())), 10)
	s.retryAfterMs = strconv.FormatInt(ra.Milliseconds(), 10)
	s.drawn = opts.Jitter > 0 || opts.Fail > 0 || opts.Overload > 0 || opts.Hang > 0 ||
		opts.Truncate > 0 || opts.Malformed > 0
	s.buf.New = func() any { b := make([]byte, 0, 4096); return &b }
	return s
}

// Validate reports every option that is out of range.
func (o Options) Validate() error {
	var errs []error
	for _, f := range []struct {
		name string
		v    float64
	}{{"fail", o.Fail}, {"overload", o.Overload}, {"hang", o.Hang}, {"truncate", o.Truncate}, {"malformed", o.Malformed}} {
		if f.v < 0 || f.v > 1 || math.IsNaN(f.v) {
			errs = append(errs, fmt.Errorf("mock: %s is %v; a fault fraction must be in [0,1]", f.name, f.v))
		}
	}
	if o.MalformedArgs < 0 || o.MalformedArgs > 1 || math.IsNaN(o.MalformedArgs) {
		errs = append(errs, fmt.Errorf("mock: malformed-args is %v; a fraction of tool calls must be in [0,1]", o.MalformedArgs))
	}
	if o.ToolTurns < 0 {
		errs = append(errs, fmt.Errorf("mock: tool turns is %d; it must be >= 0 (0 = 1)", o.ToolTurns))
	}
	for i, r := range o.Rules {
		if r.Turn < 0 {
			errs = append(errs, fmt.Errorf("mock: rule %d: turn is %d; it must be >= 1 (or 0: any turn)", i+1, r.Turn))
		}
		for j, c := range r.ToolCalls {
			if c.Name == "" {
				errs = append(errs, fmt.Errorf("mock: rule %d: tool call %d has no name; a call needs the name of a tool", i+1, j+1))
			}
		}
	}
	if sum := o.Fail + o.Overload + o.Hang + o.Truncate + o.Malformed; sum > 1+1e-9 {
		errs = append(errs, fmt.Errorf("mock: the fault fractions add up to %v; their sum must be at most 1", sum))
	}
	if o.Rate < 0 || math.IsNaN(o.Rate) || math.IsInf(o.Rate, 0) {
		errs = append(errs, fmt.Errorf("mock: rate is %v; it must be a number of requests per second >= 0 (0 = unlimited)", o.Rate))
	}
	if o.Burst < 0 {
		errs = append(errs, fmt.Errorf("mock: burst is %d; it must be >= 0 (0 = the rate rounded up)", o.Burst))
	}
	if o.Capacity < 0 {
		errs = append(errs, fmt.Errorf("mock: capacity is %d; it must be a number of concurrent requests >= 0 (0 = unlimited)", o.Capacity))
	}
	if o.QueueLimit < -1 {
		errs = append(errs, fmt.Errorf("mock: queue limit is %d; it must be >= 1 (requests that may wait), 0 (no limit) or -1 (no queue)", o.QueueLimit))
	}
	if o.Slowdown < 0 || math.IsNaN(o.Slowdown) || math.IsInf(o.Slowdown, 0) {
		errs = append(errs, fmt.Errorf("mock: slowdown is %v; it must be a number >= 0 (0 = service time does not grow with load)", o.Slowdown))
	}
	if o.Capacity == 0 && o.QueueLimit != 0 {
		errs = append(errs, fmt.Errorf("mock: queue limit is %d but capacity is not set; a queue forms only for a capacity (set capacity > 0)", o.QueueLimit))
	}
	if o.Capacity == 0 && o.Slowdown > 0 {
		errs = append(errs, fmt.Errorf("mock: slowdown is %v but capacity is not set; it scales with busy slots of a capacity (set capacity > 0)", o.Slowdown))
	}
	for name, d := range map[string]time.Duration{"latency": o.Latency, "jitter": o.Jitter, "token delay": o.TokenDelay, "retry-after": o.RetryAfter} {
		if d < 0 {
			errs = append(errs, fmt.Errorf("mock: %s is %v; it must not be negative", name, d))
		}
	}
	return errors.Join(errs...)
}

// Start validates the options, listens on Options.Addr (default
// 127.0.0.1:0) and serves in the background. It returns the server's root
// URL, such as http://127.0.0.1:41234: Anthropic clients use it as their
// base URL, OpenAI clients append /v1.
func (s *Server) Start() (baseURL string, err error) {
	if err := s.opts.Validate(); err != nil {
		return "", err
	}
	s.runMu.Lock()
	defer s.runMu.Unlock()
	if s.srv != nil {
		return "", errors.New("mock: server already started")
	}
	select {
	case <-s.done:
		return "", errors.New("mock: server is closed")
	default:
	}
	addr := s.opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("mock: listening on %s: %w", addr, err)
	}
	s.srv = &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	s.served = make(chan struct{})
	go func() {
		defer close(s.served)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("mock server stopped", "err", err)
		}
	}()
	return "http://" + ln.Addr().String(), nil
}

// Close stops the server: it closes the listener and every connection, and
// requests that hang, wait or stream return at once. It returns when the
// serving goroutine and the handlers have ended (waiting at most 5s for a
// handler stuck writing). Close is safe to call more than once, and on a
// server never started (it then releases requests held by Handler).
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.done) })
	s.runMu.Lock()
	if s.srv != nil {
		if err := s.srv.Close(); err != nil {
			s.log.Debug("mock server close", "err", err)
		}
		<-s.served
	}
	s.runMu.Unlock()
	deadline := time.Now().Add(5 * time.Second)
	for s.n.inFlight.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	st := Stats{
		Requests:      s.n.requests.Load(),
		OK:            s.n.ok.Load(),
		RateLimit:     s.n.rateLimit.Load(),
		Fail:          s.n.fail.Load(),
		Overload:      s.n.overload.Load(),
		Hang:          s.n.hang.Load(),
		Truncate:      s.n.truncate.Load(),
		Malformed:     s.n.malformed.Load(),
		MalformedArgs: s.n.malformedArgs.Load(),
		Rejected:      s.n.rejected.Load(),
		InFlight:      s.n.inFlight.Load(),
	}
	if s.slots != nil {
		s.slots.stats(&st)
	}
	return st
}

// Handler returns the HTTP handler serving both APIs. Routes match on the
// end of the path, so a client configured with or without /v1 in its base
// URL reaches them:
//
//	POST …/chat/completions   OpenAI chat completions (plain and stream: true)
//	POST …/messages           Anthropic messages (plain and stream: true)
//	GET  …/models             the model list (Anthropic's shape when the
//	                          request carries anthropic-version)
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serve) }

type endpoint int

const (
	epUnknown endpoint = iota
	epChat
	epMessages
	epModels
)

// fault is what a request was drawn to suffer.
type fault int

const (
	faultNone fault = iota
	faultFail
	faultOverload
	faultHang
	faultTruncate
	faultMalformed
)

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.n.requests.Add(1)
	s.n.inFlight.Add(1)
	defer s.n.inFlight.Add(-1)
	id := s.seq.Add(1)

	ep := epUnknown
	switch p := r.URL.Path; {
	case strings.HasSuffix(p, "/chat/completions"):
		ep = epChat
	case strings.HasSuffix(p, "/messages"):
		ep = epMessages
	case strings.HasSuffix(p, "/models"):
		ep = epModels
	}
	wf := wireOpenAI
	if ep == epMessages || (ep != epChat && r.Header.Get("Anthropic-Version") != "") {
		wf = wireAnthropic
	}
	if ep == epUnknown {
		s.reject(w, wf, failNotFound, fmt.Sprintf("Unknown request URL: %s %s. The mock serves POST /v1/chat/completions, POST /v1/messages and GET /v1/models.", r.Method, r.URL.Path), "", id)
		return
	}
	want := http.MethodPost
	if ep == epModels {
		want = http.MethodGet
	}
	if r.Method != want {
		w.Header().Set("Allow", want)
		s.reject(w, wf, failMethod, fmt.Sprintf("%s %s is not allowed; use %s", r.Method, r.URL.Path, want), "", id)
		return
	}
	if !s.authorized(r) {
		s.reject(w, wf, failAuth, "", "", id)
		return
	}
	if s.limiter != nil && !s.limiter.Allow() {
		s.n.rateLimit.Add(1)
		h := w.Header()
		h.Set("Retry-After", s.retryAfterSec)
		h.Set("Retry-After-Ms", s.retryAfterMs)
		s.writeError(w, wf, failRate, "", "", id)
		return
	}
	if ep == epModels {
		s.models(w, wf)
		return
	}

	bp := s.buf.Get().(*[]byte)
	defer s.putBuf(bp)
	body, err := readBody(http.MaxBytesReader(w, r.Body, maxBody), (*bp)[:0])
	*bp = body[:0]
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			s.reject(w, wf, failTooLarge, fmt.Sprintf("the request body is over %d bytes", maxBody), "", id)
			return
		}
		s.reject(w, wf, failInvalid, "reading the request body: "+err.Error(), "", id)
		return
	}
	var c convo
	if ep == epChat {
		var req chatRequest
		if err = decodeJSON(body, &req); err == nil {
			c, err = req.convo(s.opts.CacheSystem)
		}
	} else {
		var req messagesRequest
		if err = decodeJSON(body, &req); err == nil {
			c, err = req.convo(s.opts.CacheSystem)
		}
	}
	if err != nil {
		var br *badRequest
		if !errors.As(err, &br) {
			br = &badRequest{msg: err.Error()}
		}
		s.log.Debug("mock: rejected request", "path", r.URL.Path, "reason", br.msg)
		s.reject(w, wf, failInvalid, br.msg, br.param, id)
		return
	}

	f, jitter := s.draw()
	ctx := r.Context()
	slow := 1.0
	if s.slots != nil {
		busy, adm := s.slots.take(ctx, s.done)
		switch adm {
		case refused:
			s.writeError(w, wf, failUnavailable, "", "", id)
			return
		case gone:
			return
		}
		defer s.slots.release()
		slow = s.slowdown(busy)
	}
	if f == faultHang {
		s.n.hang.Add(1)
		select {
		case <-ctx.Done():
		case <-s.done:
			panic(http.ErrAbortHandler) // drop the connection without an answer
		}
		return
	}
	if !s.wait(ctx, scale(s.opts.Latency+jitter, slow)) {
		return
	}
	switch f {
	case faultFail:
		s.n.fail.Add(1)
		s.writeError(w, wf, failServer, "", "", id)
		return
	case faultOverload:
		s.n.overload.Add(1)
		s.writeError(w, wf, failOverloaded, "", "", id)
		return
	case faultMalformed:
		s.n.malformed.Add(1)
		s.malformed(w, wf, c.stream)
		return
	case faultTruncate:
		s.n.truncate.Add(1)
	}

	reply, calls := s.respond(&c)
	out, why, stop := shape(reply, c.maxTokens, c.stops)
	if len(calls) > 0 {
		prefix := "call_mock_"
		if wf == wireAnthropic {
			prefix = "toolu_mock_"
		}
		s.finishCalls(calls, prefix, &c)
		why, stop = endTool, ""
	}
	a := answer{id: id, created: s.opts.Now().Unix(), c: &c, text: out, calls: calls, end: why, stop: stop, cut: f == faultTruncate, delay: scale(s.opts.TokenDelay, slow)}
	var whole bool
	if c.stream {
		whole = s.stream(ctx, w, wf, &a, bp)
	} else {
		whole = s.plain(w, wf, &a, bp)
	}
	if whole {
		s.n.ok.Add(1)
	}
}

// readBody reads r into buf, growing it as needed.
func readBody(r io.Reader, buf []byte) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

func (s *Server) authorized(r *http.Request) bool {
	if s.opts.APIKey == "" {
		return true
	}
	key := r.Header.Get("X-Api-Key")
	if key == "" {
		if auth := r.Header.Get("Authorization"); len(auth) > 7 && strings.EqualFold(auth[:7], "bearer ") {
			key = auth[7:]
		}
	}
	return subtle.ConstantTimeCompare([]byte(key), []byte(s.opts.APIKey)) == 1
}

// draw picks the request's fault and jitter from the seeded generator.
func (s *Server) draw() (fault, time.Duration) {
	if !s.drawn {
		return faultNone, 0
	}
	s.mu.Lock()
	u := s.rng.Float64()
	var j int64
	if s.opts.Jitter > 0 {
		j = s.rng.Int64N(int64(s.opts.Jitter))
	}
	s.mu.Unlock()
	o := &s.opts
	f := faultNone
	switch {
	case u < o.Fail:
		f = faultFail
	case u < o.Fail+o.Overload:
		f = faultOverload
	case u < o.Fail+o.Overload+o.Hang:
		f = faultHang
	case u < o.Fail+o.Overload+o.Hang+o.Truncate:
		f = faultTruncate
	case u < o.Fail+o.Overload+o.Hang+o.Truncate+o.Malformed:
		f = faultMalformed
	}
	return f, time.Duration(j)
}

// wait sleeps for d unless the request ends first; it reports whether the
// full time passed. When the server closes meanwhile, it drops the
// connection without an answer.
func (s *Server) wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.done:
		panic(http.ErrAbortHandler)
	}
}

// reject answers a request the mock refuses (4xx other than 429).
func (s *Server) reject(w http.ResponseWriter, wf wire, f failure, msg, param string, id uint64) {
	s.n.rejected.Add(1)
	s.writeError(w, wf, f, msg, param, id)
}

func (s *Server) writeError(w http.ResponseWriter, wf wire, f failure, msg, param string, id uint64) {
	bp := s.buf.Get().(*[]byte)
	b := appendError((*bp)[:0], wf, f, msg, param, id)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	setRequestID(h, wf, id)
	w.WriteHeader(f.status())
	_, _ = w.Write(b)
	*bp = b[:0]
	s.putBuf(bp)
}

// putBuf returns a buffer to the pool unless a huge body grew it.
func (s *Server) putBuf(bp *[]byte) {
	if cap(*bp) <= 1<<20 {
		s.buf.Put(bp)
	}
}

func setRequestID(h http.Header, wf wire, id uint64) {
	v := "req_mock_" + strconv.FormatUint(id, 10)
	if wf == wireAnthropic {
		h.Set("Request-Id", v)
	} else {
		h.Set("X-Request-Id", v)
	}
}

// malformed answers 200 with a body that is not JSON (plain) or an event
// whose data is not JSON (stream).
func (s *Server) malformed(w http.ResponseWriter, wf wire, stream bool) {
	h := w.Header()
	var body string
	switch {
	case !stream:
		h.Set("Content-Type", "application/json")
		body = "<html><body>mock: this 200 answer is deliberately not JSON</body></html>\n"
	case wf == wireAnthropic:
		h.Set("Content-Type", "text/event-stream")
		body = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{<not json>\n\n"
	default:
		h.Set("Content-Type", "text/event-stream")
		body = "data: {\"id\":\"chatcmpl-mock\",\"choices\":[<not json>\n\n"
	}
	_, _ = io.WriteString(w, body)
}

func (s *Server) models(w http.ResponseWriter, wf wire) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if wf == wireAnthropic {
		_, _ = io.WriteString(w, `{"data":[{"type":"model","id":"mock","display_name":"assay mock","created_at":"2025-01-01T00:00:00Z"}],"has_more":false,"first_id":"mock","last_id":"mock"}`)
		return
	}
	_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"mock","object":"model","created":1735689600,"owned_by":"assay"}]}`)
}
