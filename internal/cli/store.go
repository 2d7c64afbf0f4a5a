package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/record"

	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/postgres"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// openStore opens the store at g.DB (--db or ASSAY_DB), creating it when
// missing: an SQLite file, or a PostgreSQL database for a postgres:// URL.
func openStore(ctx context.Context, g *Globals) (store.Store, error) {
	return openStoreAt(ctx, g, g.DB)
}

// openStoreAt opens the store ref names, creating it when missing: a
// PostgreSQL database (its schema) for a postgres:// or postgresql:// URL,
// an SQLite file otherwise. Errors name the store without its password.
func openStoreAt(ctx context.Context, g *Globals, ref string) (store.Store, error) {
	if err := checkStoreRef(ref); err != nil {
		return nil, err
	}
	if postgres.IsURL(ref) {
		db, err := postgres.Open(ctx, ref, postgres.WithClock(g.Now))
		if err != nil {
			return nil, fmt.Errorf("opening store %s: %w", storeName(ref), err)
		}
		return db, nil
	}
	db, err := sqlite.Open(ctx, ref, sqlite.WithClock(g.Now))
	if err != nil {
		return nil, fmt.Errorf("opening store %s: %w", ref, err)
	}
	return db, nil
}

// openExistingStore opens the store at g.DB for a command that reads runs:
// it never creates one ("no store here" when there is none), and an SQLite
// store on a read-only mount or CI cache opens read-only.
func openExistingStore(ctx context.Context, g *Globals) (store.Store, error) {
	return openExistingStoreAt(ctx, g, g.DB)
}

// openExistingStoreAt is openExistingStore for the store ref names.
func openExistingStoreAt(ctx context.Context, g *Globals, ref string) (store.Store, error) {
	if err := checkStoreRef(ref); err != nil {
		return nil, err
	}
	if postgres.IsURL(ref) {
		return postgres.OpenExisting(ctx, ref, postgres.WithClock(g.Now))
	}
	db, err := sqlite.OpenExisting(ctx, ref, sqlite.WithClock(g.Now))
	if err != nil {
		return nil, err
	}
	return db, nil
}

// storeName is how messages name the store ref: an SQLite path as it is,
// a PostgreSQL URL without its password.
func storeName(ref string) string {
	if postgres.IsURL(ref) {
		return postgres.Redact(ref)
	}
	if keywordConnString(ref) {
		return "(a PostgreSQL keyword connection string, not shown: it may hold a password)"
	}
	return ref
}

// keywordConnString reports whether ref reads as libpq's keyword form
// ("host=db user=me password=…"), which assay does not take: taken for
// an SQLite path it would become a file named with the password.
func keywordConnString(ref string) bool {
	for _, f := range strings.Fields(ref) {
		k, _, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		switch strings.ToLower(k) {
		case "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "sslmode", "service", "connect_timeout", "application_name", "options":
			return true
		}
	}
	return false
}

// checkStoreRef refuses a store reference assay cannot take, before
// anything is opened or created.
func checkStoreRef(ref string) error {
	if !postgres.IsURL(ref) && keywordConnString(ref) {
		return usageError{fmt.Errorf("a PostgreSQL keyword connection string (host=… dbname=…) is not taken for a store; give a URL, postgres://USER@HOST:PORT/DB?sslmode=…, and the password in PGPASSWORD or ~/.pgpass")}
	}
	return nil
}

// refuseReadOnly refuses a store opened read-only (openExistingStore
// opens one so on a read-only mount) for a command that writes to it:
// "WHAT: the store … is read-only (…): NOTHING".
func refuseReadOnly(st store.Store, g *Globals, what, nothing string) error {
	if ro, ok := st.(readOnlyStore); ok && ro.ReadOnly() {
		return fmt.Errorf("%s: the store %s is read-only (a read-only mount, a CI cache, or a file this user may not write): %s", what, storeName(g.DB), nothing)
	}
	return nil
}

// openRun opens an existing store and resolves a run reference (an ID, an
// ID prefix or latest). An error resolving it is prefixed with what (the
// command, e.g. "report: …"). The caller closes the store.
func openRun(ctx context.Context, g *Globals, what, ref string) (store.Store, *record.Run, error) {
	st, err := openExistingStore(ctx, g)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	run, err := getRun(ctx, st, what, ref)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return st, run, nil
}

// getRun resolves a run reference for a command that reads the run, and
// refuses a run some of whose results reference a case the store has no
// row for (a run killed while recording its cases): slices, expected values
// and weights come from the case rows, so anything read from it would cover
// only part of the cases without saying so. `assay run --resume` records
// the missing cases. Errors are prefixed with what.
func getRun(ctx context.Context, st store.Store, what, ref string) (*record.Run, error) {
	run, err := st.GetRun(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	n, err := st.ResultsWithoutCase(ctx, run.ID)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if n > 0 {
		return nil, fmt.Errorf("%s: run %s has %d results whose cases were never recorded (the run was stopped while storing its cases); record them with: assay run %s --resume %s",
			what, run.ID, n, run.SpecPath, run.ID)
	}
	// A load test has no results to analyse: report and gate read it
	// (load.go), nothing else.
	if run.Kind == record.KindLoad && what != "report" && !strings.HasPrefix(what, "gate: ") {
		return nil, usageError{fmt.Errorf("%s: run %s is a load test (assay load), not an evaluation: assay report %s renders it, assay gate holds it against another load test", what, run.ID, run.ID)}
	}
	return run, nil
}

// openRunPair is openRun for the commands that take two runs, before and
// after.
func openRunPair(ctx context.Context, g *Globals, what, before, after string) (store.Store, *record.Run, *record.Run, error) {
	st, a, err := openRun(ctx, g, what, before)
	if err != nil {
		return nil, nil, nil, err
	}
	b, err := getRun(ctx, st, what, after)
	if err != nil {
		st.Close()
		return nil, nil, nil, err
	}
	return st, a, b, nil
}

// requireComplete refuses a run that did not finish (interrupted or failed)
// unless allowed: it measured only some cases, so a verdict or a baseline
// made of it would stand for cases it never saw.
func requireComplete(what string, run *record.Run, allow bool) error {
	if run.Status == record.StatusComplete || allow {
		return nil
	}
	return fmt.Errorf("%s %s is %s, not complete: it did not measure every case; finish it (assay run SPEC --resume %s) or pass --allow-partial to use the results it stored", what, run.ID, run.Status, run.ID)
}

// requireScoring refuses an explicitly chosen scoring that is pending: a
// rescore that is still writing it, or was stopped before it finished.
// (Scoring 0, the latest, never picks a pending scoring.)
func requireScoring(ctx context.Context, st store.Store, what string, run *record.Run, scoring int) error {
	if scoring == 0 {
		return nil
	}
	pending, err := st.ScoringPending(ctx, run.ID, scoring)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if pending {
		return fmt.Errorf("%s: scoring %d of run %s is incomplete (its rescore is running or was stopped); rescore again (assay rescore %s) or pick a complete scoring", what, scoring, run.ID, run.ID)
	}
	return nil
}

// addAllowPartialFlag adds --allow-partial, the one name gate, drift and
// compare use for going ahead on partial evidence, and --allow-incomplete,
// its older name, hidden.
func addAllowPartialFlag(cmd *cobra.Command, p *bool, usage string) {
	f := cmd.Flags()
	f.BoolVar(p, "allow-partial", false, usage)
	f.BoolVar(p, "allow-incomplete", false, "the older name of --allow-partial")
	_ = f.MarkHidden("allow-incomplete")
}

// evidence is one side of a comparison (gate, drift, compare), for
// requireWholeEvidence.
type evidence struct {
	// Name is the side as the command calls it: "the candidate", "run A".
	Name string
	// Run is the stored run (nil for a baseline file, which holds only
	// complete runs unless exported with --allow-partial).
	Run *record.Run
	// Source is "run ID" or the baseline file's path.
	Source      string
	DatasetHash string
	// Cases are the IDs of the cases the side measured.
	Cases []string
}

// runEvidence is a stored run as a side of a comparison.
func runEvidence(ctx context.Context, st store.Store, name string, run *record.Run) (evidence, error) {
	ids, err := runCaseIDs(ctx, st, run.ID)
	if err != nil {
		return evidence{}, err
	}
	return evidence{Name: name, Run: run, Source: "run " + run.ID, DatasetHash: run.DatasetHash, Cases: ids}, nil
}

// runCaseIDs lists the IDs of the cases a run recorded, once each.
func runCaseIDs(ctx context.Context, st store.Store, runID string) ([]string, error) {
	seen := map[string]bool{}
	var ids []string
	err := st.Cases(ctx, runID, func(c record.Case) error {
		if !seen[c.ID] {
			seen[c.ID] = true
			ids = append(ids, c.ID)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", runID, err)
	}
	return ids, nil
}

// requireWholeEvidence fails closed on partial evidence: it refuses a side
// that did not finish (interrupted, failed or still running) or that
// covers fewer cases than the other (a --limit run against a full one), so
// that a verdict never stands for cases one side never measured. It names
// what is missing: the count and the first few case IDs. allowPartial
// (--allow-partial) lets both through; sharedCases (--shared-cases, which
// asks for the cases both sides have) lets a difference in cases through.
// Sides on different datasets are left to the dataset check, which says
// more.
func requireWholeEvidence(what string, a, b evidence, allowPartial, sharedCases bool) error {
	if allowPartial {
		return nil
	}
	if err := requireFinished(what, false, a, b); err != nil {
		return err
	}
	if sharedCases || (a.DatasetHash != "" && b.DatasetHash != "" && a.DatasetHash != b.DatasetHash) {
		return nil
	}
	for _, p := range [][2]evidence{{a, b}, {b, a}} {
		s, other := p[0], p[1]
		missing := missingCases(s.Cases, other.Cases)
		if len(missing) == 0 {
			continue
		}
		return fmt.Errorf("%s: %s (%s) covers %d of the %d cases of %s (%s): %d missing (%s); a verdict on part of the cases would stand for cases it never measured: run every case, or pass --shared-cases to compare only the %d cases both have (or --allow-partial)",
			what, s.Name, s.Source, len(other.Cases)-len(missing), len(other.Cases), other.Name, other.Source,
			len(missing), firstIDs(missing, 5), len(other.Cases)-len(missing))
	}
	return nil
}

// requireFinished is the first half of requireWholeEvidence: it refuses a
// side whose run did not finish, unless allowPartial. Only Name and Run of
// the sides are read, so a command can call it before loading a run's
// results.
func requireFinished(what string, allowPartial bool, sides ...evidence) error {
	if allowPartial {
		return nil
	}
	for _, s := range sides {
		if s.Run != nil && s.Run.Status != record.StatusComplete {
			spec := s.Run.SpecPath
			if spec == "" {
				spec = "SPEC"
			}
			how := "finish it (assay run " + spec + " --resume " + s.Run.ID + ")"
			if s.Run.Status == record.StatusRunning {
				how = "wait for it to finish"
			}
			return fmt.Errorf("%s: %s (run %s) is %s, not complete: it did not measure every case, and a verdict on part of them would stand for cases it never saw; %s, or pass --allow-partial to use the results it stored",
				what, s.Name, s.Run.ID, s.Run.Status, how)
		}
	}
	return nil
}

// missingCases is the IDs of want that have lacks, in want's order.
func missingCases(have, want []string) []string {
	in := make(map[string]bool, len(have))
	for _, id := range have {
		in[id] = true
	}
	var out []string
	for _, id := range want {
		if !in[id] {
			out = append(out, id)
		}
	}
	return out
}

// firstIDs lists the first n case IDs, quoted, and how many more.
func firstIDs(ids []string, n int) string {
	var parts []string
	for _, id := range ids[:min(n, len(ids))] {
		parts = append(parts, strconv.Quote(id))
	}
	s := strings.Join(parts, ", ")
	if len(ids) > n {
		s += fmt.Sprintf(" and %d more", len(ids)-n)
	}
	return s
}

// driftEvidence is a side of a drift check as a side of a comparison.
func driftEvidence(name string, s *analysis.DriftSide) evidence {
	e := evidence{Name: name, Run: s.Run, Source: s.Snap.Source, DatasetHash: s.Snap.Run.DatasetHash, Cases: caseIDs(s.Snap)}
	return e
}

// requireRunPairWhole is requireWholeEvidence for two stored runs, the
// run before and the run after.
func requireRunPairWhole(ctx context.Context, st store.Store, what string, before, after *record.Run, allowPartial, sharedCases bool) error {
	if err := requireFinished(what, allowPartial, evidence{Name: "the run before", Run: before}, evidence{Name: "the run after", Run: after}); err != nil {
		return err
	}
	if allowPartial || sharedCases {
		return nil
	}
	a, err := runEvidence(ctx, st, "the run before", before)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	b, err := runEvidence(ctx, st, "the run after", after)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return requireWholeEvidence(what, a, b, allowPartial, sharedCases)
}
