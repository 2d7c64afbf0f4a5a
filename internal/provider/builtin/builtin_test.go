package builtin

import (
	"reflect"
	"testing"

	"github.com/assay-eval/assay/internal/spec"
)

// A spec loaded without a registry (spec.DefaultProviders) is checked as
// the CLI checks it with assay's own providers.
func TestDefaultProvidersAreTheBuiltins(t *testing.T) {
	got, want := Registry().Infos(), spec.DefaultProviders()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("builtin providers describe themselves as\n%+v\nspec.DefaultProviders says\n%+v", got, want)
	}
}
