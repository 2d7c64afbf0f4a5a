// Package builtin owns the list of providers assay ships: one registration
// line each. The CLI builds its registry here; a test adds its own provider
// by registering one more Factory beside these.
package builtin

import (
	"github.com/assay-eval/assay/internal/provider/anthropic"
	"github.com/assay-eval/assay/internal/provider/exec"
	"github.com/assay-eval/assay/internal/provider/openai"
	"github.com/assay-eval/assay/internal/provider/registry"
	"github.com/assay-eval/assay/internal/provider/replay"
)

// Factories are assay's own providers, in the order messages list them.
func Factories() []registry.Factory {
	return []registry.Factory{
		openai.Factory(),
		anthropic.Factory(),
		exec.Factory(),
		replay.Factory(),
	}
}

// Registry is a registry of assay's own providers.
func Registry() *registry.Registry { return registry.New(Factories()...) }
