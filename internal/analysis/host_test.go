package analysis

import (
	"context"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/host"
	"github.com/assay-eval/assay/internal/record"
)

// The report warns when the run's recorded host load was above its cores,
// suggesting a sequential schedule (or, when the run already had one,
// saying so), and says nothing of the host when the load stayed within the
// cores or nothing was recorded.
func TestHostSaturationWarning(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, schedule string
		load           host.Load
		want, unwanted []string
	}{
		{"saturated", "", host.Load{Cores: 2, Samples: 10, Max: 5.3, Mean: 3.1, Over: 7},
			[]string{"host was saturated", "up to 5.3 on 2 cores", "7 of 10 samples", "latency figures measure the machine as much as the model", "run: {schedule: sequential}"}, nil},
		{"saturated, already sequential", "sequential", host.Load{Cores: 2, Samples: 4, Max: 2.5, Mean: 2.2, Over: 2},
			[]string{"host was saturated", "already ran one after another"}, []string{"run: {schedule: sequential}"}},
		{"busy within the cores", "", host.Load{Cores: 4, Samples: 10, Max: 4, Mean: 3}, nil, []string{"saturated"}},
		{"nothing recorded", "", host.Load{}, nil, []string{"saturated", "host record", "the machine"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, runs := ledgerStore(t, []ledgerRun{{id: lr1, dataset: "sha256:d", scorers: "sha256:s", status: "complete",
				targets: []string{"a", "b"}, pass: map[string]int{"a": 60, "b": 50}}})
			run := runs[lr1]
			run.Host = tc.load.Encode()
			if tc.schedule != "" {
				run.Config = []byte(`{"run": {"schedule": "` + tc.schedule + `"}}`)
			}
			if err := st.UpdateRun(ctx, run); err != nil {
				t.Fatal(err)
			}
			stored, err := st.GetRun(ctx, lr1)
			if err != nil {
				t.Fatal(err)
			}
			stored.Config = run.Config
			rep, err := Analyze(ctx, st, stored, Options{})
			if err != nil {
				t.Fatal(err)
			}
			ws := strings.Join(rep.Warnings, "\n")
			for _, w := range tc.want {
				if !strings.Contains(ws, w) {
					t.Errorf("warnings lack %q:\n%s", w, ws)
				}
			}
			for _, w := range tc.unwanted {
				if strings.Contains(ws, w) {
					t.Errorf("warnings wrongly say %q:\n%s", w, ws)
				}
			}
		})
	}
}

// A host record that is not a load record is said to be unreadable, not
// taken for an idle host.
func TestHostRecordUnreadable(t *testing.T) {
	ws := hostWarnings(&record.Run{Host: `{"cores": "two"}`})
	if len(ws) != 1 || !strings.Contains(ws[0], "cannot be read") {
		t.Errorf("warnings %q: want one saying the host record cannot be read", ws)
	}
}
