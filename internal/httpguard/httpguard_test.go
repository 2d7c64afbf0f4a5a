package httpguard

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

var g = Guard{TokenEnv: "ASSAY_X_TOKEN", Example: "127.0.0.1:9", Refusing: "do things on the network"}

// An address anyone on the network could reach is refused without a
// token, with a message naming the flag and the variable; loopback needs
// none, and any address is fine with one.
func TestCheckAddr(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", "192.0.2.7:7777", "example.com:7777", ":7777"} {
		err := g.CheckAddr(addr)
		if err == nil || !strings.Contains(err.Error(), "not a loopback address") || !strings.Contains(err.Error(), "ASSAY_X_TOKEN") || !strings.Contains(err.Error(), "refusing to do things on the network without a token") {
			t.Errorf("CheckAddr(%s) without a token: %v", addr, err)
		}
		withToken := g
		withToken.Token = "t0ken"
		if err := withToken.CheckAddr(addr); err != nil {
			t.Errorf("CheckAddr(%s) with a token: %v", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0", "[::1]:0", "127.0.0.2:7777"} {
		if err := g.CheckAddr(addr); err != nil {
			t.Errorf("CheckAddr(%s) on loopback: %v", addr, err)
		}
	}
	if err := g.CheckAddr("no-port"); err == nil || !strings.Contains(err.Error(), "e.g. 127.0.0.1:9") {
		t.Errorf("CheckAddr(no-port): %v, want the example address", err)
	}
}

func TestAuthorized(t *testing.T) {
	locked := g
	locked.Token = "s3cret"
	for _, c := range []struct {
		header string
		guard  Guard
		want   bool
	}{
		{"", g, true},
		{"Bearer s3cret", locked, true},
		{"", locked, false},
		{"Bearer s3cre", locked, false},
		{"Bearer s3cret ", locked, false},
		{"s3cret", locked, false},
		{"Basic s3cret", locked, false},
	} {
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		if c.header != "" {
			r.Header.Set("Authorization", c.header)
		}
		if got := c.guard.Authorized(r); got != c.want {
			t.Errorf("token %q, header %q: %v, want %v", c.guard.Token, c.header, got, c.want)
		}
	}
	if TokenMatches("", "") {
		t.Error("an empty server token matched an empty request token")
	}
}

// Without a token only loopback Host names are answered (421 otherwise,
// with the guard's headers); with one, any name reaches the handler.
func TestHost(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	before := g
	before.Before = func(h http.Header) { h.Set("X-Before", "1") }
	for host, want := range map[string]int{
		"evil.example:4318":      http.StatusMisdirectedRequest,
		"127.0.0.1.nip.io:4318":  http.StatusMisdirectedRequest,
		"localhost.evil.example": http.StatusMisdirectedRequest,
		"":                       http.StatusMisdirectedRequest,
		"127.0.0.1:4318":         http.StatusNoContent,
		"LocalHost.:4318":        http.StatusNoContent,
		"app.localhost":          http.StatusNoContent,
		"[::1]:4318":             http.StatusNoContent,
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Host = host
		rec := httptest.NewRecorder()
		before.Host(ok).ServeHTTP(rec, r)
		if rec.Code != want {
			t.Errorf("Host %q: %d, want %d", host, rec.Code, want)
		}
		if want == http.StatusMisdirectedRequest && (rec.Header().Get("X-Before") != "1" || !strings.Contains(rec.Body.String(), "loopback host name")) {
			t.Errorf("Host %q: refusal without the guard's header or reason: %v %s", host, rec.Header(), rec.Body)
		}
		locked := before
		locked.Token = "s3cret"
		rec = httptest.NewRecorder()
		locked.Host(ok).ServeHTTP(rec, r)
		if rec.Code != http.StatusNoContent {
			t.Errorf("with a token, Host %q: %d, want it passed on", host, rec.Code)
		}
	}
}
