// Package serve owns `assay serve`: the web pages over the store where people
// look at runs, label outputs blind in queues, and see a judge calibrated
// against those labels. Pages are rendered on the server with html/template
// from embedded templates; the only script is the embedded keyboard handler.
// The server binds to loopback unless given a token; every write is a POST
// that carries a CSRF token; bodies are bounded; nothing a page shows is
// ever executed or fetched.
package serve

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/assay-eval/assay/internal/httpguard"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

//go:embed templates/*.tmpl
var templateFS embed.FS

//go:embed assets/*
var assetFS embed.FS

// MaxBody bounds every request body (forms carry a label's reason and a
// corrected output at most).
const MaxBody = 1 << 20

// TokenEnv is the variable `assay serve` reads the access token from when
// --token is not given.
const TokenEnv = "ASSAY_SERVE_TOKEN"

// Options configure a Server.
type Options struct {
	// Addr is the address to listen on (host:port); 127.0.0.1:7777 when "".
	Addr string
	// Token, when set, is required of every request (the assay_token cookie
	// set by /login, or an Authorization: Bearer header). An address that is
	// not loopback refuses to start without one.
	Token string
	// Store is the store the pages read and the labels are written to.
	Store store.Store
	// Labeler is the name labels are stored under when the labeler has not
	// given one on the page (the user's login name, say).
	Labeler string
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Log receives one line per failed request (discarded when nil).
	Log *slog.Logger
}

// Server serves the pages. It is an http.Handler.
type Server struct {
	o     Options
	mux   *http.ServeMux
	pages map[string]*template.Template
	// cache keeps what is costly to compute per run (reports, dataset
	// indexes), dropped when the run changes.
	cache *runCache
}

// New checks the options and builds the server: an address that is not
// loopback needs a token.
func New(o Options) (*Server, error) {
	if o.Addr == "" {
		o.Addr = "127.0.0.1:7777"
	}
	if o.Store == nil {
		return nil, errors.New("serve: no store")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if err := CheckAddr(o.Addr, o.Token); err != nil {
		return nil, err
	}
	s := &Server{o: o, mux: http.NewServeMux(), pages: map[string]*template.Template{}, cache: newRunCache()}
	if err := s.routes(); err != nil {
		return nil, err
	}
	return s, nil
}

// CheckAddr refuses an address that is not loopback when no token is set:
// anyone who can reach it could read every output and write labels.
func CheckAddr(addr, token string) error {
	return guard(token).CheckAddr(addr)
}

// guard is serve's bind, token and Host rules (shared with collect).
func guard(token string) httpguard.Guard {
	return httpguard.Guard{Token: token, TokenEnv: TokenEnv, Example: "127.0.0.1:7777", Refusing: "serve the store to the network",
		Before: func(h http.Header) { h.Set("Content-Security-Policy", ContentSecurityPolicy) }}
}

// ListenAndServe serves until ctx ends, then shuts down gracefully. ready,
// when not nil, is called with the address actually bound (port 0 picks
// one) once the listener is open.
func (s *Server) ListenAndServe(ctx context.Context, ready func(addr string)) error {
	return httpguard.Serve(ctx, "serve", s.o.Addr, s.hostGuard(s), 30*time.Second, 5*time.Second, ready)
}

// ContentSecurityPolicy is sent with every page: nothing but the server's
// own stylesheet and script, no inline script, no frames, forms post only
// back to the server.
const ContentSecurityPolicy = "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// ServeHTTP applies what every request gets — security headers, the body
// bound, the token, the CSRF check on writes — then routes it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPost:
	default:
		h.Set("Allow", "GET, HEAD, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if s.o.Token != "" && r.URL.Path != "/login" && !strings.HasPrefix(r.URL.Path, "/assets/") && !s.authorized(r) {
		h.Set("WWW-Authenticate", `Bearer realm="assay"`)
		if r.Method == http.MethodGet && acceptsHTML(r) {
			w.WriteHeader(http.StatusUnauthorized)
			s.renderStatus(w, r, "login", loginPage{Next: r.URL.RequestURI()})
			return
		}
		http.Error(w, "unauthorized: this server needs its token (log in at /login, or send Authorization: Bearer TOKEN)", http.StatusUnauthorized)
		return
	}
	if r.Method == http.MethodPost {
		// Read the form here, once, so a body over the bound is a clear
		// 413 whichever handler it was for.
		if r.ContentLength > MaxBody {
			http.Error(w, tooLarge, http.StatusRequestEntityTooLarge)
			return
		}
		if err := r.ParseForm(); err != nil {
			var mb *http.MaxBytesError
			if errors.As(err, &mb) {
				http.Error(w, tooLarge, http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "bad request: reading the form: "+err.Error(), http.StatusBadRequest)
			return
		}
		if r.URL.Path != "/login" && !s.csrfOK(r) {
			http.Error(w, "forbidden: the form's CSRF token is missing or stale; reload the page and try again", http.StatusForbidden)
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

var tooLarge = fmt.Sprintf("request body too large: forms are limited to %d bytes", MaxBody)

func acceptsHTML(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}

const tokenCookie = "assay_token"

// authorized compares the request's token with the server's in constant
// time.
func (s *Server) authorized(r *http.Request) bool {
	got := ""
	if a := r.Header.Get("Authorization"); strings.HasPrefix(a, "Bearer ") {
		got = strings.TrimPrefix(a, "Bearer ")
	} else if c, err := r.Cookie(tokenCookie); err == nil {
		got = c.Value
	}
	return httpguard.TokenMatches(got, s.o.Token)
}

const csrfCookie = "assay_csrf"

// csrfToken returns the request's CSRF token, setting a new random one as
// a cookie when it has none. Every form carries it in a hidden "csrf"
// field (double submit: a page on another origin can neither read the
// cookie nor set it).
func csrfToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(csrfCookie); err == nil && len(c.Value) == 32 {
		return c.Value
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	t := hex.EncodeToString(b[:])
	http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: t, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	return t
}

// csrfOK checks a POST's "csrf" form field against its cookie in constant
// time.
func (s *Server) csrfOK(r *http.Request) bool {
	c, err := r.Cookie(csrfCookie)
	if err != nil || len(c.Value) != 32 {
		return false
	}
	if err := r.ParseForm(); err != nil {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(c.Value)) == 1
}

// page is what every template gets: the layout's parts and the page's own
// data as Body.
type page struct {
	Title string
	CSRF  string
	// Nav marks the current section for the layout ("runs", "labels").
	Nav  string
	Body any
	// Styles are stylesheets the page links besides the layout's own
	// (paths on this server).
	Styles []string
}

// parsePages parses the layout with each page template. A page template
// defines "content" (and may define "title"); the layout renders it.
func (s *Server) parsePages() error {
	names, err := fs.Glob(templateFS, "templates/*.tmpl")
	if err != nil {
		return err
	}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".tmpl")
		if base == "layout" || strings.HasPrefix(base, "_") {
			continue
		}
		t, err := template.New("layout.tmpl").Funcs(funcs).ParseFS(templateFS, "templates/layout.tmpl", "templates/_*.tmpl", n)
		if err != nil {
			return fmt.Errorf("serve: parsing %s: %w", n, err)
		}
		s.pages[base] = t
	}
	return nil
}

// render writes a page with status 200; see renderStatus.
func (s *Server) render(w http.ResponseWriter, r *http.Request, name, title string, body any) {
	s.renderPage(w, r, name, page{Title: title, Body: body})
}

// renderStatus renders a page whose status the caller already wrote.
func (s *Server) renderStatus(w http.ResponseWriter, r *http.Request, name string, body any) {
	t, ok := s.pages[name]
	if !ok {
		return
	}
	_ = t.Execute(w, page{Title: name, CSRF: csrfToken(w, r), Body: body})
}

// renderPage executes a page template into a buffer first, so a failure
// mid-page is a clean 500, never half a page.
func (s *Server) renderPage(w http.ResponseWriter, r *http.Request, name string, p page) {
	t, ok := s.pages[name]
	if !ok {
		s.fail(w, r, fmt.Errorf("no page template %q", name))
		return
	}
	p.CSRF = csrfToken(w, r)
	var buf strings.Builder
	if err := t.Execute(&buf, p); err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write([]byte(buf.String()))
}

// step is one part of a streamed page (Server.stream): the page
// template's block Block, rendered with Compute's value as Body once it
// returns, and while it computes the notice Notice ("" for none: the value
// is cached and comes at once).
type step struct {
	Block, Notice string
	Compute       func() (any, error)
}

// stream writes a page whose content takes long to compute: the layout's
// head and the page template's "lead" block (with p.Body) at once,
// flushed, so the first byte leaves before the work starts; then, when
// notice is not "" (the value is not cached), a notice that the page is
// computing; then the "content" block with compute's value as Body, and
// the layout's foot. The status is sent with the head, so an error of
// compute is shown inside the page.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, name string, p page, notice string, compute func() (any, error)) {
	s.streamSteps(w, r, name, p, step{Block: "content", Notice: notice, Compute: compute})
}

// streamSteps is stream in several steps, each shown as soon as it is
// computed — its notice, flushed, then its block — and the layout's foot.
// An error of a step is shown inside the page, and the steps after it are
// skipped.
func (s *Server) streamSteps(w http.ResponseWriter, r *http.Request, name string, p page, steps ...step) {
	t, ok := s.pages[name]
	if !ok {
		s.fail(w, r, fmt.Errorf("no page template %q", name))
		return
	}
	p.CSRF = csrfToken(w, r)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	rc := http.NewResponseController(w)
	logErr := func(err error) {
		if !errors.Is(err, context.Canceled) {
			s.o.Log.Error("serve", "method", r.Method, "path", r.URL.Path, "err", err)
		}
	}
	if err := t.ExecuteTemplate(w, "head", p); err != nil {
		logErr(err)
		return
	}
	if err := t.ExecuteTemplate(w, "lead", p); err != nil {
		logErr(err)
		return
	}
	if r.Method == http.MethodHead {
		return // no body is sent: nothing to compute
	}
	for _, st := range steps {
		if st.Notice != "" {
			_ = t.ExecuteTemplate(w, "computing", st.Notice)
		}
		_ = rc.Flush()
		body, err := st.Compute()
		if err != nil {
			logErr(err)
			_ = t.ExecuteTemplate(w, "failed", err.Error())
			break
		}
		p.Body = body
		var buf bytes.Buffer
		if err := t.ExecuteTemplate(&buf, st.Block, p); err != nil {
			logErr(err)
			_ = t.ExecuteTemplate(w, "failed", "rendering the page: "+err.Error())
			break
		}
		_, _ = w.Write(buf.Bytes())
	}
	_ = t.ExecuteTemplate(w, "foot", p)
}

// fail answers a request that could not be served: 404 for what does not
// exist, 500 otherwise (logged; the message shown is escaped text).
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	code := http.StatusInternalServerError
	if errors.Is(err, store.ErrNotFound) {
		code = http.StatusNotFound
	}
	var he *httpError
	if errors.As(err, &he) {
		code = he.code
	}
	if code >= 500 {
		s.o.Log.Error("serve", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	http.Error(w, err.Error(), code)
}

// httpError is an error with the status it answers.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

// badRequest is a 400 with a reason.
func badRequest(format string, a ...any) error {
	return &httpError{code: http.StatusBadRequest, msg: fmt.Sprintf(format, a...)}
}

// runCache keeps per-run values that are costly to build, keyed by run ID
// and a stamp of the run's state (status, scoring) so a changed run is
// rebuilt. It holds at most cacheSize values, dropping the oldest built.
type runCache struct {
	mu    sync.Mutex
	m     map[string]*cacheEntry
	order []string // keys, oldest first
}

// cacheSize bounds the cache: a report of a million results renders to a
// few hundred kilobytes, so this is tens of megabytes at worst.
const cacheSize = 64

type cacheEntry struct {
	stamp string
	val   any
	err   error
	done  chan struct{} // closed once val and err are set
}

func newRunCache() *runCache { return &runCache{m: map[string]*cacheEntry{}} }

// get returns the value stored under key with this stamp, or builds it
// (outside the lock). Requests for a key being built wait for that build
// instead of starting another: a run's report of a million results is
// computed once however many tabs ask for it. A failed build is not kept.
func (c *runCache) get(key, stamp string, build func() (any, error)) (any, error) {
	c.mu.Lock()
	e, ok := c.m[key]
	if ok && e.stamp == stamp {
		c.mu.Unlock()
		<-e.done
		return e.val, e.err
	}
	e = &cacheEntry{stamp: stamp, done: make(chan struct{}), err: errors.New("building " + key + " panicked")}
	if !ok {
		c.order = append(c.order, key)
	}
	c.m[key] = e
	for len(c.order) > cacheSize {
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
	c.mu.Unlock()
	defer func() {
		close(e.done)
		if e.err != nil {
			c.mu.Lock()
			if c.m[key] == e {
				delete(c.m, key)
				c.order = slices.DeleteFunc(c.order, func(k string) bool { return k == key })
			}
			c.mu.Unlock()
		}
	}()
	e.val, e.err = build()
	return e.val, e.err
}

// has reports whether the value under key with this stamp is built (not
// being built).
func (c *runCache) has(key, stamp string) bool {
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if !ok || e.stamp != stamp {
		return false
	}
	select {
	case <-e.done:
		return e.err == nil
	default:
		return false
	}
}

// hostGuard refuses, when the server has no token, a request whose Host is
// not a loopback name or address (DNS rebinding; see httpguard.Guard.Host).
func (s *Server) hostGuard(next http.Handler) http.Handler {
	return guard(s.o.Token).Host(next)
}

// pathRun is the run the request's path names ({id}: an ID, a unique
// prefix or "latest"). When there is none (404) or the store fails, it has
// answered the request and ok is false.
func (s *Server) pathRun(w http.ResponseWriter, r *http.Request) (run *record.Run, ok bool) {
	run, err := s.o.Store.GetRun(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return nil, false
	}
	return run, true
}
