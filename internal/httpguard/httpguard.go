// Package httpguard owns how assay's servers (serve, collect) bind and
// authenticate: an address off loopback needs a token, a token is compared
// in constant time, and a server without a token answers only requests
// whose Host names the loopback (so a page that rebinds its own name to
// 127.0.0.1 cannot reach it through a browser). It knows nothing of what
// the servers serve.
package httpguard

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Guard is one server's rules.
type Guard struct {
	// Token, when set, is what every request must carry; "" means the
	// server is loopback only.
	Token string
	// TokenEnv is the variable the token may be given in, named in the
	// messages.
	TokenEnv string
	// Example is an address shown when one given cannot be parsed
	// ("127.0.0.1:7777").
	Example string
	// Refusing says what an unguarded address would do, completing
	// "refusing to … without a token" ("serve the store to the network").
	Refusing string
	// Before, when set, is called on a refusal's header before it is
	// written (serve sets its security headers there).
	Before func(http.Header)
}

// CheckAddr refuses an address that is not loopback when the guard has no
// token: anyone who could reach it could use the server.
func (g Guard) CheckAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %v (want host:port, e.g. %s)", addr, err, g.Example)
	}
	if g.Token != "" || LoopbackAddr(host) {
		return nil
	}
	return fmt.Errorf("--addr %s is not a loopback address: refusing to %s without a token (set --token or %s; every request must then carry it)", addr, g.Refusing, g.TokenEnv)
}

// LoopbackAddr reports whether a host to listen on is loopback: localhost or
// a loopback IP address.
func LoopbackAddr(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// BearerToken is the token of a request's "Authorization: Bearer" header
// (ok false when it has none).
func BearerToken(r *http.Request) (token string, ok bool) {
	token, ok = strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return "", false
	}
	return token, true
}

// TokenMatches compares a token a request gave with the server's in
// constant time; an empty server token matches nothing.
func TokenMatches(got, want string) bool {
	if want == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// Authorized reports whether a request carries the guard's token in an
// Authorization: Bearer header (always true when the guard has none).
func (g Guard) Authorized(r *http.Request) bool {
	if g.Token == "" {
		return true
	}
	got, _ := BearerToken(r)
	return TokenMatches(got, g.Token)
}

// Host wraps next so that, when the guard has no token, a request whose
// Host is not a loopback name or address is refused (421): a page on
// another site that rebinds its own name to 127.0.0.1 (DNS rebinding)
// could otherwise use the server through the victim's browser, its origin
// being its own. With a token the Host is free: such a page never has the
// token.
func (g Guard) Host(next http.Handler) http.Handler {
	if g.Token != "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !LoopbackHost(r.Host) {
			if g.Before != nil {
				g.Before(w.Header())
			}
			http.Error(w, "misdirected request: this server answers only to a loopback host name (127.0.0.1, [::1], localhost); the Host header named "+strconv.Quote(cutHost(r.Host))+". To serve other names, start it with a token (--token or "+g.TokenEnv+")", http.StatusMisdirectedRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// LoopbackHost reports whether a request's Host (with or without a port)
// names this machine's loopback: localhost or a name under .localhost, or a
// loopback address.
func LoopbackHost(hostport string) bool {
	h := cutHost(hostport)
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	switch {
	case h == "":
		return false
	case h == "localhost" || strings.HasSuffix(h, ".localhost"):
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback()
}

// cutHost is a Host header without its port.
func cutHost(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// Serve listens on addr and serves h — with the timeouts and header bound
// every assay server uses; readTimeout bounds a request's whole read —
// until ctx ends, then shuts down, letting requests in flight finish for up
// to drain. ready, when not nil, is called with the address actually
// bound (port 0 picks one) once the listener is open. name prefixes a
// listen error ("serve: …").
func Serve(ctx context.Context, name, addr string, h http.Handler, readTimeout, drain time.Duration, ready func(addr string)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if ready != nil {
		ready(ln.Addr().String())
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       readTimeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), drain)
		defer cancel()
		return srv.Shutdown(sctx)
	}
}
