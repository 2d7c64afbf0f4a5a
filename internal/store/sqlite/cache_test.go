package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/assay-eval/assay/internal/record"
)

// A store from before the cache was honest kept a cached reply's price in
// cost_usd (from_cache said it was not paid): the upgrade moves it to
// saved_usd, so old and new results follow one rule (a cached reply costs
// 0, its price is saved), and its cache entries, which named no target,
// count under "".
func TestUpgradeMovesCachedCostToSaved(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	b, err := migrationFiles.ReadFile("migrations/0001_initial.sql")
	if err != nil {
		t.Fatal(err)
	}
	execSQL(t, path, string(b), fmt.Sprintf("PRAGMA application_id = %d", applicationID), "PRAGMA user_version = 1",
		`INSERT INTO runs (id, spec, spec_path, spec_hash, dataset_hash, prompt_hash, git_commit, targets, cases, epochs, status, started, ended, config)
		 VALUES ('old', 'triage', 'a.yaml', 'sha256:s', 'sha256:d', 'sha256:p', '', '["m"]', 2, 1, 'complete', 1, 2, NULL)`,
		`INSERT INTO results (run_id, case_id, target, epoch, raw, parsed, parse_error, finish_reason, input_tokens, output_tokens,
			cached_tokens, cost_usd, latency_ms, first_token_ms, attempts, error_kind, error, model, fingerprint, from_cache, created_at)
		 VALUES ('old', 'paid', 'm', 1, 'x', 'x', '', 'stop', 0, 0, 0, 0.25, 0, 0, 1, '', '', 'm', '', 0, 1),
		        ('old', 'hit',  'm', 1, 'x', 'x', '', 'stop', 0, 0, 0, 0.5,  0, 0, 0, '', '', 'm', '', 1, 1)`,
		`INSERT INTO cache (key, response, created_at) VALUES ('k', x'7b7d', 1)`)
	d, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open of a first-schema store: %v", err)
	}
	defer d.Close()
	got := map[string]record.Result{}
	if err := d.Results(ctx, "old", func(r record.Result) error { got[r.CaseID] = r; return nil }); err != nil {
		t.Fatal(err)
	}
	if r := got["paid"]; r.CostUSD != 0.25 || r.SavedUSD != 0 {
		t.Errorf("paid result after upgrade: cost %v saved %v; want 0.25 and 0", r.CostUSD, r.SavedUSD)
	}
	if r := got["hit"]; r.CostUSD != 0 || r.SavedUSD != 0.5 || !r.FromCache {
		t.Errorf("cached result after upgrade: cost %v saved %v; want 0 and 0.5", r.CostUSD, r.SavedUSD)
	}
	st, err := d.CacheStats(ctx, "", false)
	if err != nil || len(st) != 1 || st[0].Target != "" || st[0].Entries != 1 || st[0].Bytes != 2 {
		t.Errorf("CacheStats of the upgraded store = %+v, %v; want 1 entry of 2 bytes with no target", st, err)
	}
}
