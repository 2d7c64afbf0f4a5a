package serve

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
)

// A server anyone on the network could reach refuses to start without a
// token; on loopback it needs none.
func TestNonLoopbackNeedsToken(t *testing.T) {
	t.Parallel()
	st, _ := runsStore(t)
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", "192.0.2.7:7777", "example.com:7777", ":7777"} {
		_, err := New(Options{Addr: addr, Store: st})
		if err == nil || !strings.Contains(err.Error(), "not a loopback address") || !strings.Contains(err.Error(), TokenEnv) {
			t.Errorf("New(%s) without a token: %v, want a refusal naming --token and %s", addr, err, TokenEnv)
		}
		if _, err := New(Options{Addr: addr, Token: "t0ken", Store: st}); err != nil {
			t.Errorf("New(%s) with a token: %v", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0", "[::1]:0", "127.0.0.2:7777"} {
		if _, err := New(Options{Addr: addr, Store: st}); err != nil {
			t.Errorf("New(%s) on loopback: %v", addr, err)
		}
	}
}

// do serves one request built by the caller.
func do(h http.Handler, req *http.Request) *http.Response {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func bodyOf(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// With a token every page needs it: a request without it, or with a
// wrong one, is a 401; the Bearer header or the cookie /login sets pass.
func TestTokenRequired(t *testing.T) {
	t.Parallel()
	const token = "correct-horse-battery-staple"
	st, _ := runsStore(t)
	run := putRun(t, st, fixtureRun{spec: "qa", started: t0, pass: map[string][]bool{"alpha": {true, false}}})
	s := newTestServer(t, st, token)
	pages := []string{"/", "/runs/" + run.ID, "/compare?a=" + run.ID + "&b=" + run.ID, "/labels"}
	for _, p := range pages {
		for name, set := range map[string]func(*http.Request){
			"no token":     func(*http.Request) {},
			"wrong bearer": func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token+"x") },
			"empty bearer": func(r *http.Request) { r.Header.Set("Authorization", "Bearer ") },
			"wrong cookie": func(r *http.Request) { r.AddCookie(&http.Cookie{Name: tokenCookie, Value: token[:10]}) },
			"token in the query": func(r *http.Request) {
				r.URL.RawQuery += "&token=" + token
			},
		} {
			req := httptest.NewRequest(http.MethodGet, p, nil)
			set(req)
			res := do(s, req)
			if res.StatusCode != http.StatusUnauthorized {
				t.Errorf("GET %s with %s: %d, want 401", p, name, res.StatusCode)
			}
			if b := bodyOf(t, res); strings.Contains(b, "alpha") {
				t.Errorf("GET %s with %s: the 401 shows the store's data", p, name)
			}
		}
		req := httptest.NewRequest(http.MethodGet, p, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		if res := do(s, req); res.StatusCode != http.StatusOK {
			t.Errorf("GET %s with the Bearer token: %d, want 200", p, res.StatusCode)
		}
	}
	// A browser asking for a page is shown the login form.
	req := httptest.NewRequest(http.MethodGet, "/runs/"+run.ID, nil)
	req.Header.Set("Accept", "text/html")
	res := do(s, req)
	if b := bodyOf(t, res); res.StatusCode != http.StatusUnauthorized || !strings.Contains(b, `name="token"`) ||
		!strings.Contains(b, `name="next" value="/runs/`+run.ID+`"`) {
		t.Errorf("a browser without the token: %d, want 401 and the login form coming back here\n%s", res.StatusCode, b)
	}

	// Logging in with the wrong token sets no cookie.
	res = do(s, form("/login", url.Values{"token": {"nope"}, "next": {"/labels"}}))
	if res.StatusCode != http.StatusUnauthorized || len(res.Cookies()) > 0 && cookie(res, tokenCookie) != nil {
		t.Errorf("login with a wrong token: %d, cookies %v", res.StatusCode, res.Cookies())
	}
	// The right one sets the cookie and goes where it was asked.
	res = do(s, form("/login", url.Values{"token": {token}, "next": {"/labels"}}))
	c := cookie(res, tokenCookie)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/labels" || c == nil || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode {
		t.Fatalf("login: %d to %q, cookie %v", res.StatusCode, res.Header.Get("Location"), c)
	}
	for _, p := range pages {
		req := httptest.NewRequest(http.MethodGet, p, nil)
		req.AddCookie(c)
		if res := do(s, req); res.StatusCode != http.StatusOK {
			t.Errorf("GET %s with the login cookie: %d, want 200", p, res.StatusCode)
		}
	}
}

// form is a POST of values as a form.
func form(target string, v url.Values) *http.Request {
	req := httptest.NewRequest(http.MethodPost, target, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req
}

func cookie(res *http.Response, name string) *http.Cookie {
	for _, c := range res.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Every answer carries the CSP and the other security headers: pages,
// errors, refusals, assets.
func TestSecurityHeadersOnEveryResponse(t *testing.T) {
	t.Parallel()
	st, _ := runsStore(t)
	run := putRun(t, st, fixtureRun{spec: "qa", started: t0, pass: map[string][]bool{"alpha": {true, false}}})
	open, locked := newTestServer(t, st, ""), newTestServer(t, st, "tok")
	big := httptest.NewRequest(http.MethodPost, "/runs/"+run.ID+"/queues", bytes.NewReader(make([]byte, MaxBody+1)))
	for _, c := range []struct {
		name string
		h    http.Handler
		req  *http.Request
		code int
	}{
		{"runs", open, httptest.NewRequest(http.MethodGet, "/", nil), 200},
		{"run", open, httptest.NewRequest(http.MethodGet, "/runs/"+run.ID, nil), 200},
		{"compare", open, httptest.NewRequest(http.MethodGet, "/compare?a="+run.ID+"&b="+run.ID, nil), 200},
		{"asset", open, httptest.NewRequest(http.MethodGet, "/assets/style.css", nil), 200},
		{"report css", open, httptest.NewRequest(http.MethodGet, "/assets/report.css", nil), 200},
		{"login", open, httptest.NewRequest(http.MethodGet, "/login", nil), 200},
		{"not found", open, httptest.NewRequest(http.MethodGet, "/runs/nope", nil), 404},
		{"no route", open, httptest.NewRequest(http.MethodGet, "/nope/nope", nil), 404},
		{"bad request", open, httptest.NewRequest(http.MethodGet, "/runs/"+run.ID+"?scoring=9", nil), 400},
		{"unauthorized", locked, httptest.NewRequest(http.MethodGet, "/", nil), 401},
		{"put", open, httptest.NewRequest(http.MethodPut, "/", nil), 405},
		{"no csrf", open, form("/runs/"+run.ID+"/queues", url.Values{"name": {"q"}}), 403},
		{"too large", open, big, 413},
	} {
		res := do(c.h, c.req)
		if res.StatusCode != c.code {
			t.Errorf("%s: %d, want %d", c.name, res.StatusCode, c.code)
		}
		h := res.Header
		for k, v := range map[string]string{
			"Content-Security-Policy": ContentSecurityPolicy, "X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY",
			"Referrer-Policy": "no-referrer", "Cross-Origin-Opener-Policy": "same-origin", "Cache-Control": "no-store",
		} {
			if h.Get(k) != v {
				t.Errorf("%s: %s is %q, want %q", c.name, k, h.Get(k), v)
			}
		}
	}
	for _, d := range []string{"script-src 'self'", "default-src 'none'", "frame-ancestors 'none'", "form-action 'self'"} {
		if !strings.Contains(ContentSecurityPolicy, d) {
			t.Errorf("the CSP lacks %s", d)
		}
	}
	if strings.Contains(ContentSecurityPolicy, "unsafe-inline") || strings.Contains(ContentSecurityPolicy, "unsafe-eval") {
		t.Error("the CSP allows inline script or style")
	}
}

// A POST needs the form's CSRF field equal to its cookie; PUT, DELETE and
// PATCH are refused; a body over MaxBody is a 413, whether its length is
// announced or not.
func TestWritesNeedCSRFAndBoundedBodies(t *testing.T) {
	t.Parallel()
	st, _ := runsStore(t)
	run := putRun(t, st, fixtureRun{spec: "qa", started: t0, pass: map[string][]bool{"alpha": {true, false}}})
	s := newTestServer(t, st, "")
	target := "/runs/" + run.ID + "/queues"
	const csrf = "0123456789abcdef0123456789abcdef"
	for name, c := range map[string]struct {
		cookie, field string
	}{
		"neither":           {},
		"cookie, no field":  {cookie: csrf},
		"field, no cookie":  {field: csrf},
		"wrong field":       {cookie: csrf, field: "f123456789abcdef0123456789abcdef"},
		"short pair":        {cookie: "abc", field: "abc"},
		"field of a prefix": {cookie: csrf, field: csrf[:31]},
	} {
		v := url.Values{"name": {"q1"}, "size": {"2"}}
		if c.field != "" {
			v.Set("csrf", c.field)
		}
		req := form(target, v)
		if c.cookie != "" {
			req.AddCookie(&http.Cookie{Name: csrfCookie, Value: c.cookie})
		}
		if res := do(s, req); res.StatusCode != http.StatusForbidden {
			t.Errorf("POST with %s: %d, want 403", name, res.StatusCode)
		}
	}
	// The CSRF field in the query string does not count.
	req := form(target+"?csrf="+csrf, url.Values{"name": {"q1"}})
	req.AddCookie(&http.Cookie{Name: csrfCookie, Value: csrf})
	if res := do(s, req); res.StatusCode != http.StatusForbidden {
		t.Errorf("POST with the CSRF token in the URL: %d, want 403", res.StatusCode)
	}
	// With both it passes the check (what the handler answers is its own).
	req = form(target, url.Values{"csrf": {csrf}, "name": {"q1"}, "size": {"2"}})
	req.AddCookie(&http.Cookie{Name: csrfCookie, Value: csrf})
	if res := do(s, req); res.StatusCode == http.StatusForbidden {
		t.Errorf("POST with a matching CSRF pair: 403 %s", bodyOf(t, res))
	}

	for _, m := range []string{http.MethodPut, http.MethodDelete, http.MethodPatch, "PROPFIND"} {
		res := do(s, httptest.NewRequest(m, target, strings.NewReader("x")))
		if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "GET, HEAD, POST" {
			t.Errorf("%s: %d (Allow %q), want 405", m, res.StatusCode, res.Header.Get("Allow"))
		}
	}

	over := url.Values{"csrf": {csrf}, "reason": {strings.Repeat("x", MaxBody)}}.Encode()
	for name, mk := range map[string]func() *http.Request{
		"announced": func() *http.Request {
			return form(target, url.Values{"csrf": {csrf}, "reason": {strings.Repeat("x", MaxBody)}})
		},
		"chunked": func() *http.Request {
			r := httptest.NewRequest(http.MethodPost, target, io.NopCloser(strings.NewReader(over)))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r.ContentLength = -1
			return r
		},
	} {
		req := mk()
		req.AddCookie(&http.Cookie{Name: csrfCookie, Value: csrf})
		res := do(s, req)
		if b := bodyOf(t, res); res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(b, "too large") {
			t.Errorf("a body over MaxBody (%s): %d %q, want 413", name, res.StatusCode, b)
		}
	}
	// Just under the bound is read.
	req = form(target, url.Values{"csrf": {csrf}, "reason": {strings.Repeat("x", MaxBody-100)}})
	req.AddCookie(&http.Cookie{Name: csrfCookie, Value: csrf})
	if res := do(s, req); res.StatusCode == http.StatusRequestEntityTooLarge || res.StatusCode == http.StatusForbidden {
		t.Errorf("a body under MaxBody: %d", res.StatusCode)
	}
}

// /login never sends the visitor off this server, however next is spelt.
func TestLoginNeverRedirectsOffSite(t *testing.T) {
	t.Parallel()
	st, _ := runsStore(t)
	const token = "tok"
	s := newTestServer(t, st, token)
	for _, next := range []string{"//evil.example", "//evil.example/path", "/\\evil.example", "\\\\evil.example", "https://evil.example/",
		"http:evil.example", "javascript:alert(1)", "/\t/evil.example", "/\n/evil.example", "/\r/evil.example", " //evil.example",
		"/ /evil.example", "evil.example", "", "/%2F/evil.example\x00", "\u3000//evil.example", "//\u3000evil.example"} {
		res := do(s, form("/login", url.Values{"token": {token}, "next": {next}}))
		loc := res.Header.Get("Location")
		u, err := url.Parse(loc)
		if res.StatusCode != http.StatusSeeOther || err != nil || u.Host != "" || u.Scheme != "" || !strings.HasPrefix(loc, "/") ||
			strings.HasPrefix(loc, "//") || strings.ContainsAny(loc, "\\\t\r\n ") {
			t.Errorf("login with next=%q: %d to %q", next, res.StatusCode, loc)
		}
		_, b := get(t, s, "/login?next="+url.QueryEscape(next))
		if v := between(b, `name="next" value="`, `"`); v != "/" {
			t.Errorf("the login form for next=%q carries next=%q, want /", next, v)
		}
	}
	// A path on this server is kept, query included.
	res := do(s, form("/login", url.Values{"token": {token}, "next": {"/runs/x/cases?q=a%20b&verdict=fail"}}))
	if loc := res.Header.Get("Location"); loc != "/runs/x/cases?q=a%20b&verdict=fail" {
		t.Errorf("login to a path here went to %q", loc)
	}
}

// getRoutes finds the GET routes the package registers, from its source,
// so a new page cannot escape the no-write test below.
func getRoutes(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`s\.mux\.Handle(?:Func)?\("GET ([^"]+)"`)
	var out []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			out = append(out, m[1])
		}
	}
	sort.Strings(out)
	return out
}

// No GET writes: visiting every page (and asking for what is not there)
// leaves the store's files byte for byte as they were.
func TestGETNeverWrites(t *testing.T) {
	t.Parallel()
	st, path := runsStore(t)
	ctx := context.Background()
	a := putRun(t, st, fixtureRun{spec: "qa", started: t0, pass: map[string][]bool{
		"alpha": verdicts(12, func(i int) bool { return i%3 != 0 }), "beta": verdicts(12, func(i int) bool { return i%2 == 0 })}})
	b := putRun(t, st, fixtureRun{spec: "qa", started: t0.Add(time.Hour), pass: map[string][]bool{
		"alpha": verdicts(12, func(i int) bool { return i%4 != 0 }), "beta": verdicts(12, func(i int) bool { return i%2 == 1 })}})
	res, err := st.Result(ctx, a.ID, record.Key{CaseID: "1", Target: "alpha", Epoch: 1})
	if err != nil {
		t.Fatal(err)
	}
	q := &record.Queue{RunID: a.ID, Name: "q1", Judge: "correct", Size: 1, Seed: 1, Created: t0,
		Items: []record.QueueItem{{Position: 0, CaseID: "1", Target: "alpha", Epoch: 1, OutputHash: record.LabelOutputHash(res), Weight: 24}}}
	if err := st.CreateQueue(ctx, q); err != nil {
		t.Fatal(err)
	}
	s := newTestServer(t, st, "")
	// Each GET pattern with the URLs that exercise it.
	visits := map[string][]string{
		"/{$}":                     {"/", "/?spec=qa", "/?experiment=x", "/?after=" + b.ID},
		"/runs/{id}":               {"/runs/" + a.ID, "/runs/" + b.ID + "?scoring=1", "/runs/nope"},
		"/compare":                 {"/compare", "/compare?a=" + a.ID + "&b=" + b.ID, "/compare?a=" + b.ID + "&b=" + a.ID + "&limit=0"},
		"/assets/":                 {"/assets/style.css", "/assets/keys.js"},
		"/assets/report.css":       {"/assets/report.css"},
		"/login":                   {"/login", "/login?next=/labels"},
		"/labels":                  {"/labels"},
		"/runs/{id}/queues":        {"/runs/" + a.ID + "/queues"},
		"/runs/{id}/queues/{name}": {"/runs/" + a.ID + "/queues/q1", "/runs/" + a.ID + "/queues/nope"},
		"/runs/{id}/calibrate":     {"/runs/" + a.ID + "/calibrate?judge=correct", "/runs/" + a.ID + "/calibrate?judge=correct&queue=q1"},
		"/runs/{id}/cases":         {"/runs/" + a.ID + "/cases", "/runs/" + a.ID + "/cases?verdict=fail&q=script"},
		"/runs/{id}/cases/{case}":  {"/runs/" + a.ID + "/cases/1", "/runs/" + a.ID + "/cases/nope"},
		"/runs/{id}/difficulty":    {"/runs/" + a.ID + "/difficulty", "/runs/" + a.ID + "/difficulty?n=200&seed=3", "/runs/" + a.ID + "/difficulty?n=0", "/runs/nope/difficulty"},
	}
	before := storeFiles(t, path)
	for _, route := range getRoutes(t) {
		urls, ok := visits[route]
		if !ok {
			t.Errorf("GET %s is not visited by this test: add URLs for it to visits", route)
			continue
		}
		for _, u := range urls {
			code, _ := get(t, s, u)
			if code >= 500 {
				t.Errorf("GET %s: %d", u, code)
			}
		}
	}
	if after := storeFiles(t, path); !maps.Equal(before, after) {
		t.Errorf("GET requests changed the store's files:\nbefore %v\nafter  %v", before, after)
	}
}

// storeFiles hashes the store's database and write-ahead log (the shared
// memory index, which readers touch, is not data).
func storeFiles(t *testing.T, path string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	for _, p := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(p)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = sha256.Sum256(b)
	}
	return out
}
