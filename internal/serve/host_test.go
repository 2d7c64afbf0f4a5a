package serve

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Without a token the server answers only requests naming a loopback host:
// a page that rebinds its own name to 127.0.0.1 (DNS rebinding) is refused
// (421) before any page is read. With a token any name is served (and
// still needs the token).
func TestLoopbackServerRefusesOtherHostNames(t *testing.T) {
	for _, token := range []string{"", "s3cret-token"} {
		fx := newCasesFixture(t)
		srv, err := New(Options{Addr: "127.0.0.1:0", Store: fx.st, Token: token})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		addrc := make(chan string, 1)
		done := make(chan error, 1)
		go func() { done <- srv.ListenAndServe(ctx, func(a string) { addrc <- a }) }()
		var addr string
		select {
		case addr = <-addrc:
		case err := <-done:
			t.Fatal(err)
		case <-time.After(10 * time.Second):
			t.Fatal("the server did not start")
		}
		_, port, _ := net.SplitHostPort(addr)
		for host, want := range map[string]int{
			"evil.example:" + port:     http.StatusMisdirectedRequest,
			"evil.example":             http.StatusMisdirectedRequest,
			"127.0.0.1.nip.io:" + port: http.StatusMisdirectedRequest,
			"localhost.evil.example":   http.StatusMisdirectedRequest,
			"127.0.0.1:" + port:        http.StatusOK,
			"localhost:" + port:        http.StatusOK,
			"LocalHost.:" + port:       http.StatusOK,
			"app.localhost:" + port:    http.StatusOK,
			"[::1]:" + port:            http.StatusOK,
		} {
			if token != "" && want == http.StatusMisdirectedRequest {
				want = http.StatusUnauthorized // any name, but the token is still needed
			}
			if token != "" && want == http.StatusOK {
				want = http.StatusUnauthorized
			}
			req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
			req.Host = host
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("token %q, Host %s: %d, want %d\n%s", token, host, resp.StatusCode, want, body)
			}
			if want == http.StatusMisdirectedRequest && !strings.Contains(string(body), "loopback host name") {
				t.Errorf("Host %s: the refusal does not say why: %s", host, body)
			}
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}
}
