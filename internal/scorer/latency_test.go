package scorer

import (
	"testing"

	"github.com/assay-eval/assay/internal/spec"
)

func TestLatency(t *testing.T) {
	runCases(t, spec.Output{}, spec.Scorer{Type: "latency", Max: "1.5s"}, []scoreCase{
		{"fast", call{raw: "ok", latency: 200}, passes, ""},
		{"at the budget", call{raw: "ok", latency: 1500}, passes, ""},
		{"over is loud too_slow", call{raw: "ok", latency: 1501}, loudKind(KindTooSlow), "over the budget of 1.5s"},
		{"a time-out is the provider's kind", call{errKind: "timeout", latency: 60000}, loudKind("timeout"), ""},
	})
	runCases(t, spec.Output{}, spec.Scorer{Type: "latency", Max: "1s", AllowEmpty: true}, []scoreCase{
		{"allow_empty: an empty fast reply passes", call{raw: "", latency: 5}, passes, ""},
	})
}
