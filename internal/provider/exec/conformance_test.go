package exec

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/provider/providertest"
	"github.com/assay-eval/assay/internal/spec"
)

func TestConformance(t *testing.T) {
	providertest.Run(t, providertest.Harness{
		Name: "exec",
		New: func(t *testing.T, reply string) provider.Provider {
			file := filepath.Join(t.TempDir(), "reply.txt")
			if err := os.WriteFile(file, []byte(reply), 0o644); err != nil {
				t.Fatal(err)
			}
			return newHelper(t, "reply", file)
		},
		Slow: func(t *testing.T, d time.Duration) provider.Provider {
			return newHelperTarget(t, &spec.Target{Name: "slow"}, "slow", d.String())
		},
	})
}
