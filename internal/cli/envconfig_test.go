package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/assay-eval/assay/internal/store/sqlite"
)

// One spec, two environments: the staging overlay (-f) points a target at
// a local server through OPENAI_BASE_URL, adds a tenant header whose value
// is a secret from the environment and reads the key from api_key_file.
// The server sees the header and the key; it echoes both in its replies,
// and neither reaches the database (results or the run's stored config),
// stdout or stderr. The stored config records the base URL, the header's
// name, the overlay and the interpolated variables' names.
func TestEnvironmentConfigEndToEnd(t *testing.T) {
	t.Parallel()
	const (
		tenant = "tenant-PLANTED-4c1d9e7b2a"
		key    = "sk-file-PLANTED-83b0c6d2e1f4"
	)
	var mu sync.Mutex
	var seenTenant, seenAuth, seenModel []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		_ = json.Unmarshal(body, &req)
		mu.Lock()
		seenTenant = append(seenTenant, r.Header.Get("X-Tenant"))
		seenAuth = append(seenAuth, r.Header.Get("Authorization"))
		seenModel = append(seenModel, req.Model)
		mu.Unlock()
		say := req.Messages[len(req.Messages)-1].Content
		// Echo the word, then what the server was sent.
		reply(w, req.Model, say+" (tenant "+r.Header.Get("X-Tenant")+", auth "+r.Header.Get("Authorization")+")")
	}))
	t.Cleanup(srv.Close)

	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	path := echoTask(t, dir, 6, `  - {name: gw, provider: openai, model: "${MODEL:-prod-model}"}`)
	writeFile(t, filepath.Join(dir, "key.txt"), key+"\n")
	staging := filepath.Join(dir, "staging.yaml")
	writeFile(t, staging, `targets:
  - name: gw
    api_key_file: key.txt
    headers:
      X-Tenant: ${TENANT_TOKEN}
scorers:
  - {name: correct, type: regex, pattern: "^word-"}
`)
	e := cliEnv{env: map[string]string{
		"OPENAI_BASE_URL": srv.URL + "/v1",
		"TENANT_TOKEN":    tenant,
		"MODEL":           "staging-model",
		"OPENAI_API_KEY":  "sk-env-UNUSED-0000000000000",
	}}

	inv := runCLI(t, e, "validate", path, "-f", staging)
	if inv.code != 0 {
		t.Fatalf("validate -f: exit %d: %s", inv.code, inv.stderr)
	}
	run := runCLI(t, e, "run", path, "--file", staging, "--db", db)
	if run.code != 0 {
		t.Fatalf("run exit %d: %s", run.code, run.stderr)
	}
	runID := strings.TrimSpace(run.stdout)

	mu.Lock()
	if len(seenTenant) != 6 {
		t.Fatalf("%d calls reached the server, want 6", len(seenTenant))
	}
	for i := range seenTenant {
		if seenTenant[i] != tenant || seenAuth[i] != "Bearer "+key || seenModel[i] != "staging-model" {
			t.Fatalf("call %d: tenant %q auth %q model %q", i, seenTenant[i], seenAuth[i], seenModel[i])
		}
	}
	mu.Unlock()

	// The outputs are stored with the echoed header and key redacted.
	res := readRun(t, db, runID)
	if len(res) != 6 {
		t.Fatalf("%d results stored", len(res))
	}
	for k, r := range res {
		if !strings.Contains(r.raw, "[REDACTED:") || strings.Contains(r.raw, tenant) || strings.Contains(r.raw, key) {
			t.Errorf("%v stored as %q", k, r.raw)
		}
	}

	// The run's stored config.
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := st.GetRun(ctx, runID)
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Overlays []string `json:"overlays"`
		EnvVars  []string `json:"env_vars"`
		Targets  []struct {
			BaseURL    string   `json:"base_url"`
			BaseURLEnv string   `json:"base_url_env"`
			Headers    []string `json:"headers"`
			HeaderVars []string `json:"header_vars"`
			KeyFile    string   `json:"api_key_file"`
			Model      string   `json:"model"`
		} `json:"targets"`
	}
	if err := json.Unmarshal(stored.Config, &cfg); err != nil {
		t.Fatal(err)
	}
	tg := cfg.Targets[0]
	if tg.BaseURL != srv.URL+"/v1" || tg.BaseURLEnv != "OPENAI_BASE_URL" || strings.Join(tg.Headers, ",") != "X-Tenant" ||
		strings.Join(tg.HeaderVars, ",") != "TENANT_TOKEN" || tg.KeyFile != "key.txt" || tg.Model != "staging-model" {
		t.Errorf("stored target %+v", tg)
	}
	if strings.Join(cfg.Overlays, ",") != staging || strings.Join(cfg.EnvVars, ",") != "MODEL,TENANT_TOKEN" {
		t.Errorf("stored overlays %v env_vars %v", cfg.Overlays, cfg.EnvVars)
	}
	for _, secret := range []string{tenant, key} {
		if bytes.Contains(stored.Config, []byte(secret)) {
			t.Errorf("the stored config holds a secret: %s", stored.Config)
		}
		for _, a := range []string{run.stdout, run.stderr, inv.stdout, inv.stderr} {
			if strings.Contains(a, secret) {
				t.Errorf("output holds a secret: %s", a)
			}
		}
		files, _ := filepath.Glob(filepath.Join(dir, "assay.db*"))
		for _, f := range files {
			if b, _ := os.ReadFile(f); bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s holds a secret", f)
			}
		}
	}

	// rescore without --spec reloads the run's spec with its overlays: the
	// overlay's scorers, so the new scoring's scorers hash is the run's.
	if inv := runCLI(t, e, "rescore", runID, "--db", db); inv.code != 0 {
		t.Fatalf("rescore: exit %d: %s", inv.code, inv.stderr)
	}
	st, err = sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	h2, err := st.ScoringScorersHash(ctx, runID, 2)
	st.Close()
	if err != nil || h2 != stored.ScorersHash {
		t.Errorf("rescore's scorers hash %s (%v), want the run's %s", h2, err, stored.ScorersHash)
	}

	// Resuming without the overlay is another spec: refused.
	if inv := runCLI(t, e, "run", path, "--db", db, "--resume", runID); inv.code == 0 || !strings.Contains(inv.stderr, "spec") {
		t.Errorf("resume without -f: exit %d: %s", inv.code, inv.stderr)
	}
}

// Spec problems that come from the environment or an overlay stop run and
// validate with exit 4, located FILE:LINE:COL in the file that holds them.
func TestEnvironmentConfigProblems(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	line := `  - {name: gw, provider: openai, model: m, base_url: "http://127.0.0.1:1/${API_PATH}"}`
	path := echoTask(t, dir, 2, line)
	inv := runCLI(t, cliEnv{}, "validate", path)
	want := fmt.Sprintf("%s:5:%d: targets[0].base_url: environment variable API_PATH is not set", path, strings.Index(line, "${")+1)
	if inv.code != 4 || !strings.Contains(inv.stdout+inv.stderr, want) {
		t.Errorf("unset variable: exit %d, want 4 and %q in:\n%s%s", inv.code, want, inv.stdout, inv.stderr)
	}

	overlay := filepath.Join(dir, "bad.yaml")
	writeFile(t, overlay, "run:\n  retries: lots\n")
	e := cliEnv{env: map[string]string{"API_PATH": "v1", "OPENAI_API_KEY": "k"}}
	inv = runCLI(t, e, "run", path, "-f", overlay, "--db", filepath.Join(dir, "a.db"))
	want = overlay + ":2:12: run.retries must be a whole number"
	if inv.code != 4 || !strings.Contains(inv.stderr, want) {
		t.Errorf("bad overlay: exit %d, want 4 and %q in:\n%s", inv.code, want, inv.stderr)
	}

	// A key file with whitespace besides one trailing newline stops the
	// run before any call (validate warns, as for an unset key variable),
	// without showing the file's content.
	keyed := filepath.Join(dir, "keyed.yaml")
	writeFile(t, keyed, "targets:\n  - name: gw\n    api_key_file: key.txt\n")
	writeFile(t, filepath.Join(dir, "key.txt"), " sk-SHOWN-NOWHERE-123456\n")
	want = keyed + ":3:19: target gw: the key in api_key_file starts with whitespace"
	if inv := runCLI(t, e, "validate", path, "-f", keyed); inv.code != 0 || !strings.Contains(inv.stderr, "warning: "+want) {
		t.Errorf("validate, bad key file: exit %d: %s", inv.code, inv.stderr)
	}
	inv = runCLI(t, e, "run", path, "-f", keyed, "--db", filepath.Join(dir, "a.db"))
	if inv.code != 4 || !strings.Contains(inv.stdout+inv.stderr, want) || strings.Contains(inv.stdout+inv.stderr, "SHOWN-NOWHERE") {
		t.Errorf("bad key file: exit %d, want 4 and %q in:\n%s%s", inv.code, want, inv.stdout, inv.stderr)
	}
	// Every command that loads a spec takes -f.
	missing := filepath.Join(dir, "missing.yaml")
	for _, args := range [][]string{
		{"validate", path, "-f", missing},
		{"run", path, "-f", missing, "--db", filepath.Join(dir, "a.db")},
		{"selftest", path, "-f", missing},
		{"probe", "contamination", path, "--twins", "t.jsonl", "-f", missing, "--db", filepath.Join(dir, "a.db")},
	} {
		if inv := runCLI(t, e, args...); inv.code != 1 || !strings.Contains(inv.stderr, "reading overlay: open "+missing) {
			t.Errorf("%s with a missing overlay: exit %d: %s", args[0], inv.code, inv.stderr)
		}
	}
}
