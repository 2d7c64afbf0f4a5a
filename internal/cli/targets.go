package cli

import (
	"github.com/assay-eval/assay/internal/provider/builtin"
	"github.com/assay-eval/assay/internal/provider/registry"
)

// providers is the registry targets are built from and spec checks them
// against: Globals.Providers, else assay's own (provider/builtin). The
// engine builds candidates and judges through it.
func (g *Globals) providers() *registry.Registry {
	if g.Providers == nil {
		return builtin.Registry()
	}
	return g.Providers
}
