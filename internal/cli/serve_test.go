package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/store/sqlite"
)

// `assay serve` on an address that is not loopback, without a token,
// refuses to start: a usage error (exit 2) naming the way out.
func TestServeRefusesTheNetworkWithoutAToken(t *testing.T) {
	db := filepath.Join(t.TempDir(), "assay.db")
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", "192.0.2.7:7777", ":0"} {
		inv := runCLI(t, cliEnv{}, "serve", "--db", db, "--addr", addr)
		if inv.code != 2 || !strings.Contains(inv.stderr, "not a loopback address") || !strings.Contains(inv.stderr, "ASSAY_SERVE_TOKEN") {
			t.Errorf("serve --addr %s: exit %d\n%s", addr, inv.code, inv.stderr)
		}
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("a refused serve created the store: %v", err)
	}
}

// With a token (here from ASSAY_SERVE_TOKEN) every request must carry it:
// without it 401, with it 200; Ctrl-C stops the server with exit 0.
func TestServeWithATokenAnswers401Without(t *testing.T) {
	db := filepath.Join(t.TempDir(), "assay.db")
	st, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	pr, pw := io.Pipe()
	interrupts := make(chan os.Signal, 1)
	g := &Globals{Stdin: strings.NewReader(""), Stdout: pw, Stderr: io.Discard, Now: time.Now, Interrupts: interrupts,
		Getenv: func(k string) string { return map[string]string{"ASSAY_SERVE_TOKEN": "s3cret"}[k] }}
	done := make(chan int, 1)
	go func() {
		done <- Execute(context.Background(), []string{"serve", "--db", db, "--addr", "127.0.0.1:0"}, g)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed no address: %v (exit %d?)", err, <-done)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	_, rest, _ := strings.Cut(line, "http://")
	addr, _, _ := strings.Cut(rest, " ")
	defer func() {
		interrupts <- os.Interrupt
		if code := <-done; code != 0 {
			t.Errorf("serve after Ctrl-C: exit %d", code)
		}
	}()
	for _, c := range []struct {
		auth string
		want int
	}{{"", 401}, {"Bearer wrong", 401}, {"Bearer s3cret", 200}} {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != c.want {
			t.Errorf("GET / with %q: %d, want %d", c.auth, res.StatusCode, c.want)
		}
	}
}
