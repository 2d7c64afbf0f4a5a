package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

// FuzzGetRun resolves arbitrary user input as a run ID against a fixed set
// of runs and checks the answer against a plain Go model of the rules:
// exact ID, else unique byte prefix, else ambiguous or not found.
func FuzzGetRun(f *testing.F) {
	ids := []string{
		"20261202-113512-3fa9c1", "20261202-113512-3fa9c2", "20261203-000000-000000",
		"abc", "abcd", "run_1", "run%2", `back\slash`, "ünï", "Q'uote", "latest-but-not",
	}
	d := openTemp(f)
	ctx := context.Background()
	for i, id := range ids {
		if err := d.CreateRun(ctx, &record.Run{ID: id, Status: record.StatusRunning, Started: time.Unix(int64(1000+i), 0)}); err != nil {
			f.Fatal(err)
		}
	}
	for _, seed := range []string{"", "latest", "2026", "20261202-113512-3fa9c", "abc", "ab", "run_", "run%", "_", "%", `back\`, "ü", "\xc3", "Q'", "' OR 1=1 --", "latest-", "\x00"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		got, err := d.GetRun(ctx, arg)
		switch {
		case arg == "":
			if err == nil {
				t.Fatalf(`GetRun("") = %s, want an error`, got.ID)
			}
			return
		case arg == "latest":
			if err != nil || got.ID != ids[len(ids)-1] {
				t.Fatalf(`GetRun("latest") = %v, %v; want %s`, got, err, ids[len(ids)-1])
			}
			return
		}
		var want []string
		for _, id := range ids {
			if id == arg {
				want = []string{id}
				break
			}
			if strings.HasPrefix(id, arg) {
				want = append(want, id)
			}
		}
		switch len(want) {
		case 0:
			if !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("GetRun(%q) = %v, %v; want ErrNotFound", arg, got, err)
			}
		case 1:
			if err != nil || got.ID != want[0] {
				t.Fatalf("GetRun(%q) = %v, %v; want %s", arg, got, err, want[0])
			}
		default:
			if !errors.Is(err, store.ErrAmbiguousID) {
				t.Fatalf("GetRun(%q) = %v, %v; want ErrAmbiguousID (matches %q)", arg, got, err, want)
			}
		}
	})
}

// FuzzResultRoundTrip stores arbitrary text in a result's string fields and
// checks it comes back byte for byte.
func FuzzResultRoundTrip(f *testing.F) {
	d := openTemp(f)
	ctx := context.Background()
	if err := d.CreateRun(ctx, &record.Run{ID: "fuzz", Status: record.StatusRunning}); err != nil {
		f.Fatal(err)
	}
	for _, seed := range [][3]string{
		{"A: 42", `{"a":1}`, "case-1"},
		{"\xff\xfe\xc3\x28", "", "\x80"},
		{"😀\u202e\u200b", "\"\\u0000\"", "ü"},
		{"", "", ""},
		{"line\r\nline", "'; DROP TABLE results; --", "x"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	n := 0
	f.Fuzz(func(t *testing.T, raw, parsed, caseID string) {
		n++
		want := record.Result{
			RunID: "fuzz", CaseID: fmt.Sprintf("%08d-%s", n, caseID), Target: parsed, Epoch: n,
			Raw: raw, Parsed: parsed, Error: raw + parsed, Model: caseID,
		}
		if err := d.PutResults(ctx, []record.Result{want}, []record.Score{{
			RunID: "fuzz", Scoring: 1, CaseID: want.CaseID, Target: want.Target, Epoch: n, Scorer: raw, Reason: parsed,
		}}); err != nil {
			t.Fatalf("PutResults: %v", err)
		}
		var got *record.Result
		err := d.read(ctx, func(tx *sql.Tx) error {
			row := tx.QueryRowContext(ctx, `SELECT raw, parsed, error, model, case_id, target FROM results WHERE run_id = 'fuzz' AND epoch = ?`, n)
			var r record.Result
			if err := row.Scan(&r.Raw, &r.Parsed, &r.Error, &r.Model, &r.CaseID, &r.Target); err != nil {
				return err
			}
			got = &r
			return nil
		})
		if err != nil {
			t.Fatalf("reading back: %v", err)
		}
		if got.Raw != want.Raw || got.Parsed != want.Parsed || got.Error != want.Error || got.Model != want.Model || got.CaseID != want.CaseID || got.Target != want.Target {
			t.Fatalf("round trip changed the text:\n got %+q\nwant %+q", []string{got.Raw, got.Parsed, got.Error, got.Model, got.CaseID, got.Target},
				[]string{want.Raw, want.Parsed, want.Error, want.Model, want.CaseID, want.Target})
		}
		var reason, scorer string
		if err := d.r.QueryRowContext(ctx, `SELECT scorer, reason FROM scores WHERE run_id = 'fuzz' AND epoch = ?`, n).Scan(&scorer, &reason); err != nil {
			t.Fatalf("reading the score back: %v", err)
		}
		if scorer != raw || reason != parsed {
			t.Fatalf("score round trip changed the text: got %+q, want %+q", []string{scorer, reason}, []string{raw, parsed})
		}
	})
}
