package engine

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/assay-eval/assay/internal/mock"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/provider/registry"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/task"
)

// Where a selftest sends its judge scorers (--judge-via).
const (
	JudgeViaSkip   = "skip"   // no calls: judge scorers are skipped
	JudgeViaMock   = "mock"   // an in-process grader that passes everything
	JudgeViaTarget = "target" // the spec's configured judges (real calls)
)

// MockJudgeVerdict is the in-process mock grader's reply to every judge
// prompt: a strict, well-formed passing verdict, i.e. a grader that
// believes whatever the output claims.
const MockJudgeVerdict = `{"verdict": "pass", "reason": "The output says it satisfies the rubric, so it passes."}`

// JudgeLookup is how a judge scorer reaches its grader (scorer.Options).
type JudgeLookup = func(string) (provider.Provider, spec.Target, error)

// SelftestJudges returns how a selftest's judge scorers reach a grader
// (via is one of JudgeVia*): nil when skipped or the spec has no judge; an
// in-process mock that passes everything (started now, closed with
// closers); or the configured judge targets, each built now so that a
// missing key fails before any work (through the response cache when
// e.Store is set and not noCache).
func (e *Engine) SelftestJudges(t *task.Task, via string, noCache bool, closers *Closers) (JudgeLookup, error) {
	names := t.Scorers.JudgeTargets()
	if len(names) == 0 || via == JudgeViaSkip {
		return nil, nil
	}
	sp := t.Spec
	if via == JudgeViaMock {
		srv := mock.New(mock.Options{Default: MockJudgeVerdict})
		url, err := srv.Start()
		if err != nil {
			return nil, fmt.Errorf("starting the mock grader: %w", err)
		}
		*closers = append(*closers, closerFunc(srv.Close))
		built := map[string]provider.Provider{}
		return func(name string) (provider.Provider, spec.Target, error) {
			i := slices.IndexFunc(sp.Targets, func(tg spec.Target) bool { return tg.Name == name })
			if i < 0 {
				return nil, spec.Target{}, fmt.Errorf("judge target %q is not defined", name)
			}
			// The judge's model and parameters, the mock's address, no price.
			tg := spec.Target{Name: name, Provider: "openai", Model: sp.Targets[i].Model, BaseURL: url + "/v1",
				Params: sp.Targets[i].Params, Limits: spec.Limits{Concurrency: 32}}
			if tg.Model == "" {
				tg.Model = "mock-judge"
			}
			if p, ok := built[name]; ok {
				return p, tg, nil
			}
			// The registry's openai constructor, on the mock's address, with
			// wrappers of its own: no cache, no spec time-out or retries.
			f, ok := e.Providers.Lookup("openai")
			if !ok {
				return nil, tg, fmt.Errorf("the mock grader speaks the OpenAI API: provider openai must be registered (registered: %s)", strings.Join(e.Providers.Names(), ", "))
			}
			p, err := f.New(&tg, registry.Env{Key: "assay-no-key", HTTP: registry.HTTPClient(32), Getenv: e.getenv})
			if err != nil {
				return nil, tg, err
			}
			wo := provider.WrapOptions{Timeout: 30 * time.Second, Retry: provider.RetryOptions{Max: 2}}
			wo.Limits.Concurrency = tg.Limits.Concurrency // the mock's only limit
			wp := provider.Wrap(p, wo)
			built[name] = wp
			return wp, tg, nil
		}, nil
	}
	var perr error
	o := e.buildOptions(sp, noCache)
	if noCache {
		o.Cache = nil // the null outputs' verdicts are neither read nor stored
	}
	jp := e.Providers.Judges(sp, o, (*[]io.Closer)(closers), &perr)
	for _, name := range names {
		if _, _, err := jp(name); err != nil {
			return nil, err
		}
	}
	return jp, nil
}

type closerFunc func()

func (f closerFunc) Close() error { f(); return nil }
