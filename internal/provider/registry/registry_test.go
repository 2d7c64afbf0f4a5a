package registry

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/spec"
)

// The spec's params reach a request as provider.Params by conversion; the
// cache key hashes their JSON, so both must encode alike.
func TestParamsEncodeAsTheSpecs(t *testing.T) {
	temp, top, mt, seed := 0.5, 0.9, 64, int64(7)
	sp := spec.Params{Temperature: &temp, TopP: &top, MaxTokens: &mt, Seed: &seed, Stop: []string{"END"}}
	a, _ := json.Marshal(sp)
	b, _ := json.Marshal(provider.Params(sp))
	if string(a) != string(b) {
		t.Errorf("provider.Params encodes as %s, spec.Params as %s", b, a)
	}
	l := spec.Limits{Concurrency: 3, RPM: 60, TPM: 1000}
	a, _ = json.Marshal(l)
	b, _ = json.Marshal(provider.Limits(l))
	if string(a) != string(b) {
		t.Errorf("provider.Limits encodes as %s, spec.Limits as %s", b, a)
	}
}

// fakeCache counts what goes through it.
type fakeCache struct{ gets, puts int }

func (c *fakeCache) CacheGet(ctx context.Context, key string) ([]byte, bool, error) {
	c.gets++
	return nil, false, nil
}
func (c *fakeCache) CachePut(ctx context.Context, key, target string, response []byte) error {
	c.puts++
	return nil
}

// fake registers a provider that answers "ok" (or fails transiently n
// times first) and records the Env it was built with.
func fake(info spec.ProviderInfo, env *Env, fails int) Factory {
	return Factory{Info: info, New: func(t *spec.Target, e Env) (provider.Provider, error) {
		*env = e
		n := 0
		return provider.Func(func(ctx context.Context, req *provider.Request) (*provider.Response, error) {
			if n++; n <= fails {
				return nil, &provider.Error{Kind: provider.KindServer, Status: 500}
			}
			return &provider.Response{Text: "ok " + e.Key, Attempts: 1}, nil
		}), nil
	}}
}

func testSpec(t *testing.T, targets string) *spec.Spec {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cases.jsonl"), []byte(`{"id":"1","q":"x","a":"y"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	infos := []spec.ProviderInfo{
		{Name: "hosted", Hosted: true, KeyEnv: "HOSTED_KEY", Cacheable: true, CanJudge: true, Required: []string{"model"}},
		{Name: "local", NoRetry: true, Keys: []string{"env"}},
	}
	path := filepath.Join(dir, "assay.yaml")
	src := "dataset: {path: cases.jsonl, expected: a}\nprompt: {user: \"{{.q}}\"}\nrun: {retries: 3}\ntargets:\n" + targets + "scorers: [{type: equals}]\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	sp, err := spec.LoadWith(path, spec.Options{Getenv: func(string) string { return "" }, Providers: infos})
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// Build reads a hosted target's key from its provider's variable, caches
// only cacheable providers, retries only those that may fail transiently,
// withholds the expected field, and redacts the key from replies.
func TestBuildFollowsTheDescription(t *testing.T) {
	sp := testSpec(t, "  - {name: h, provider: hosted, model: m}\n  - {name: l, provider: local, env: [TOKEN]}\n")
	var henv, lenv Env
	r := New(
		fake(spec.ProviderInfo{Name: "hosted", Hosted: true, KeyEnv: "HOSTED_KEY", Cacheable: true, CanJudge: true, Required: []string{"model"}}, &henv, 2),
		fake(spec.ProviderInfo{Name: "local", NoRetry: true, Keys: []string{"env"}}, &lenv, 1),
	)
	env := map[string]string{"HOSTED_KEY": "sk-test-0123456789abcdef", "TOKEN": "tok"}
	c := &fakeCache{}
	o := BuildOptions{Getenv: func(k string) string { return env[k] }, Cache: c, Retries: sp.Run.Retries}
	var closers []io.Closer
	ctx := context.Background()

	h, err := r.Build(sp, "h", o, &closers)
	if err != nil {
		t.Fatal(err)
	}
	if henv.Key != env["HOSTED_KEY"] || henv.HTTP == nil || len(henv.Withhold) != 1 || henv.Withhold[0] != "a" {
		t.Errorf("hosted env: key %q, http %v, withhold %v", henv.Key, henv.HTTP != nil, henv.Withhold)
	}
	resp, err := h.Complete(ctx, &provider.Request{Messages: []provider.Message{{Role: "user", Content: "x"}}})
	if err != nil {
		t.Fatalf("two transient failures, three retries: %v", err)
	}
	if strings.Contains(resp.Text, env["HOSTED_KEY"]) {
		t.Errorf("the key was not redacted from the reply: %q", resp.Text)
	}
	if c.gets != 1 || c.puts != 1 {
		t.Errorf("cacheable provider: %d cache reads, %d writes; want 1, 1", c.gets, c.puts)
	}

	*c = fakeCache{}
	l, err := r.Build(sp, "l", o, &closers)
	if err != nil {
		t.Fatal(err)
	}
	if lenv.Key != "" || lenv.HTTP != nil {
		t.Errorf("a provider that is not hosted got a key or client: %+v", lenv)
	}
	if _, err := l.Complete(ctx, &provider.Request{}); provider.KindOf(err) != provider.KindServer {
		t.Errorf("NoRetry provider: err %v, want its first failure, not retried", err)
	}
	if c.gets != 0 || c.puts != 0 {
		t.Errorf("a provider that is not cacheable went through the cache (%d reads, %d writes)", c.gets, c.puts)
	}

	// Not set: the key and the env: variable are problems at their keys;
	// validate sees them as missing, not unusable.
	none := BuildOptions{Getenv: func(string) string { return "" }}
	if _, err := r.Build(sp, "h", none, &closers); !isProblem(err, "environment variable HOSTED_KEY is not set") {
		t.Errorf("hosted without a key: %v", err)
	}
	if _, err := r.Build(sp, "l", none, &closers); !isProblem(err, "environment variable TOKEN is not set") {
		t.Errorf("local without TOKEN: %v", err)
	}
	for i := range sp.Targets {
		missing, unusable := r.KeyProblems(sp, i, none.Getenv)
		if len(missing) != 1 || len(unusable) != 0 {
			t.Errorf("target %d: missing %v, unusable %v", i, missing, unusable)
		}
	}
	bad := func(k string) string { return map[string]string{"HOSTED_KEY": "sk-test-0123456789abcdef\n"}[k] }
	if missing, unusable := r.KeyProblems(sp, 0, bad); len(missing) != 0 || len(unusable) != 1 {
		t.Errorf("a key with a newline: missing %v, unusable %v", missing, unusable)
	}

	// A provider the registry does not have is an error naming those it has.
	if _, err := New(fake(spec.ProviderInfo{Name: "local"}, &lenv, 0)).Build(sp, "h", o, &closers); err == nil || !strings.Contains(err.Error(), `unknown provider "hosted" (registered providers are: local)`) {
		t.Errorf("unknown provider: %v", err)
	}
}

func isProblem(err error, msg string) bool {
	var ps spec.Problems
	return errors.As(err, &ps) && len(ps) == 1 && strings.Contains(ps[0].Msg, msg)
}

// Judges builds each judge once, and reports the first failure through perr.
func TestJudgesBuildOnce(t *testing.T) {
	sp := testSpec(t, "  - {name: h, provider: hosted, model: m}\n  - {name: l, provider: local, env: [TOKEN]}\n")
	var env Env
	built := 0
	f := fake(spec.ProviderInfo{Name: "hosted", Hosted: true, KeyEnv: "HOSTED_KEY", CanJudge: true}, &env, 0)
	inner := f.New
	f.New = func(t *spec.Target, e Env) (provider.Provider, error) { built++; return inner(t, e) }
	r := New(f, fake(spec.ProviderInfo{Name: "local", Keys: []string{"env"}}, &env, 0))
	var perr error
	var closers []io.Closer
	jp := r.Judges(sp, BuildOptions{Getenv: func(k string) string { return map[string]string{"HOSTED_KEY": "k"}[k] }}, &closers, &perr)
	for range 3 {
		if p, tg, err := jp("h"); err != nil || p == nil || tg.Name != "h" {
			t.Fatalf("judge h: %v", err)
		}
	}
	if built != 1 {
		t.Errorf("judge built %d times, want once", built)
	}
	if _, _, err := jp("l"); err == nil || perr == nil {
		t.Errorf("judge l without TOKEN: err %v, perr %v", err, perr)
	}
	if _, _, err := jp("nope"); err == nil || !strings.Contains(err.Error(), `judge target "nope" is not defined`) {
		t.Errorf("undefined judge: %v", err)
	}
}

func TestNewRefusesADuplicateName(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a name registered twice did not panic")
		}
	}()
	var env Env
	New(fake(spec.ProviderInfo{Name: "x"}, &env, 0), fake(spec.ProviderInfo{Name: "x"}, &env, 0))
}
