// Package echotest is a provider that exists to prove a new provider is one
// package and one registration line: its Factory, registered beside
// provider/builtin's in a test, is checked by spec like any other (its own
// description and extra check) and runs through the real CLI. It answers
// each call with the request's last message, as written (model same) or
// upper-cased (model upper). Only tests import it.
package echotest

import (
	"context"
	"strings"
	"time"

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/provider/registry"
	"github.com/assay-eval/assay/internal/spec"
)

// Info describes provider echo: it needs a model, same or upper, reads no
// key and cannot judge.
func Info() spec.ProviderInfo {
	return spec.ProviderInfo{
		Name:     "echo",
		NoJudge:  "repeats its prompt, it gives no verdicts",
		Required: []string{"model"},
		Check: func(t *spec.Target, path string, report func(at, hint, format string, args ...any)) {
			if t.Model != "" && t.Model != "same" && t.Model != "upper" {
				report(path+".model", "echo models are: same, upper", "%s.model: provider echo has no model %q", path, t.Model)
			}
		},
	}
}

// Factory registers provider echo.
func Factory() registry.Factory {
	return registry.Factory{Info: Info(), New: func(t *spec.Target, _ registry.Env) (provider.Provider, error) {
		upper := t.Model == "upper"
		return provider.Func(func(ctx context.Context, req *provider.Request) (*provider.Response, error) {
			if err := ctx.Err(); err != nil {
				return nil, &provider.Error{Kind: provider.KindCanceled, Err: err}
			}
			text := ""
			if n := len(req.Messages); n > 0 {
				text = req.Messages[n-1].Content
			}
			if upper {
				text = strings.ToUpper(text)
			}
			return &provider.Response{Text: text, FinishReason: "stop", Model: t.Model, Latency: time.Millisecond, Attempts: 1}, nil
		}), nil
	}}
}
