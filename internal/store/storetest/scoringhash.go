package storetest

import (
	"context"
	"testing"

	"github.com/assay-eval/assay/internal/store"
)

// testScoringScorersHash: a rescore records the scorers hash it was made
// with, and a report reads it back; scoring 1 answers with the run's own.
func testScoringScorersHash(t *testing.T, s store.Store) {
	ctx := context.Background()
	r := newRun("r", t0())
	r.ScorersHash = "sha256:run"
	mustCreate(t, s, r)
	rs, ss := batch("r", 0, 2, []string{"a"}, 1)
	mustPut(t, s, rs, ss)
	if h, err := s.ScoringScorersHash(ctx, "r", 1); err != nil || h != "sha256:run" {
		t.Errorf("ScoringScorersHash(1) = %q, %v; want the run's sha256:run", h, err)
	}
	n, err := s.ReserveScoring(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if h, err := s.ScoringScorersHash(ctx, "r", n); err != nil || h != "" {
		t.Errorf("ScoringScorersHash of a scoring with none recorded = %q, %v; want \"\"", h, err)
	}
	if err := s.SetScoringScorersHash(ctx, "r", n, "sha256:rescore"); err != nil {
		t.Fatalf("SetScoringScorersHash: %v", err)
	}
	if err := s.CompleteScoring(ctx, "r", n); err != nil {
		t.Fatal(err)
	}
	if h, err := s.ScoringScorersHash(ctx, "r", n); err != nil || h != "sha256:rescore" {
		t.Errorf("ScoringScorersHash(%d) = %q, %v; want sha256:rescore", n, h, err)
	}
	if err := s.SetScoringScorersHash(ctx, "r", n+5, "sha256:x"); err == nil {
		t.Errorf("SetScoringScorersHash of a scoring never reserved succeeded")
	}
	if h, err := s.ScoringScorersHash(ctx, "missing", 3); err != nil || h != "" {
		t.Errorf("ScoringScorersHash of an unknown run = %q, %v; want \"\"", h, err)
	}
}
