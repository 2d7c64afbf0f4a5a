package exec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/provider/providertest"
	"github.com/assay-eval/assay/internal/spec"
)

func TestConformance(t *testing.T) {
	t.Parallel() // waits on time-outs and processes: overlaps the others
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
		Calls: func(t *testing.T, calls []provider.ToolCall) provider.Provider {
			b, err := json.Marshal(calls)
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), "calls.json")
			if err := os.WriteFile(file, b, 0o644); err != nil {
				t.Fatal(err)
			}
			return newHelper(t, "calls", file)
		},
	})
}
