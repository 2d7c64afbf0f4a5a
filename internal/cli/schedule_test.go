package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/mock"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// callWindows returns, per target, the earliest start and the latest end of
// its calls as stored (a call ends at or before its result's CreatedAt, and
// started no earlier than CreatedAt minus its latency).
func callWindows(t *testing.T, db, runID string) map[string][2]time.Time {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w := map[string][2]time.Time{}
	err = st.Results(ctx, runID, func(r record.Result) error {
		start := r.CreatedAt.Add(-time.Duration(r.LatencyMS * float64(time.Millisecond)))
		cur, ok := w[r.Target]
		if !ok || start.Before(cur[0]) {
			cur[0] = start
		}
		if !ok || r.CreatedAt.After(cur[1]) {
			cur[1] = r.CreatedAt
		}
		w[r.Target] = cur
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// run: {schedule: sequential} through assay run: the second target's first
// call starts after the first target's last call ended; without it the two
// targets' calls overlap.
func TestRunScheduleSequential(t *testing.T) {
	t.Parallel()
	_, url := startMock(t, mock.Options{Latency: 40 * time.Millisecond})
	for _, schedule := range []string{"sequential", "parallel"} {
		t.Run(schedule, func(t *testing.T) {
			dir := t.TempDir()
			targets := fmt.Sprintf(`  - {name: a, provider: openai, model: m-a, base_url: %q, api_key_env: K, limits: {concurrency: 3}}
  - {name: b, provider: openai, model: m-b, base_url: %q, api_key_env: K, limits: {concurrency: 3}}`, url+"/v1", url+"/v1")
			path := echoTask(t, dir, 12, targets)
			writeFile(t, path, strings.Replace(readFileT(t, path), "run: {timeout: 5s, retries: 8}", "run: {timeout: 5s, retries: 8, schedule: "+schedule+"}", 1))
			db := filepath.Join(dir, "a.db")
			s := runJSON(t, cliEnv{env: map[string]string{"K": "key-for-the-mock"}}, "run", path, "--db", db, "--no-cache")
			if s.Status != "complete" || s.Stored != 24 {
				t.Fatalf("summary %+v: want 24 results", s)
			}
			w := callWindows(t, db, s.RunID)
			a, b := w["a"], w["b"]
			apart := !b[0].Before(a[1]) || !a[0].Before(b[1])
			if schedule == "sequential" && !apart {
				t.Errorf("sequential: a's calls %v–%v and b's %v–%v overlap", a[0], a[1], b[0], b[1])
			}
			if schedule == "parallel" && apart {
				t.Errorf("parallel: a's calls %v–%v and b's %v–%v never overlap; the check cannot tell the schedules apart", a[0], a[1], b[0], b[1])
			}
		})
	}
}
