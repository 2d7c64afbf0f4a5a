package sqlite

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

// killChildEnv, when set, makes TestKillDurability act as the child: it
// names the database the child writes to.
const killChildEnv = "ASSAY_STORE_KILL_CHILD_DB"

const (
	killRun        = "killed-run"
	killBatch      = 200 // results per commit
	killMaxBatches = 5000
)

// killBatchResults is batch number b of the child: results for cases
// [b*killBatch, (b+1)*killBatch) with a few KB of output each (so a commit
// takes long enough to be killed in the middle), and one score each.
func killBatchResults(b int) ([]record.Result, []record.Score) {
	rs := make([]record.Result, killBatch)
	ss := make([]record.Score, killBatch)
	for i := range rs {
		id := fmt.Sprintf("case-%07d", b*killBatch+i)
		rs[i] = record.Result{
			RunID: killRun, CaseID: id, Target: "t", Epoch: 1,
			Raw:       strings.Repeat(id+" says hello; ", 150),
			Attempts:  1,
			CreatedAt: time.Now(),
		}
		ss[i] = record.Score{RunID: killRun, Scoring: 1, CaseID: id, Target: "t", Epoch: 1, Scorer: "exact", Pass: true, Value: 1, Shape: "pass"}
	}
	return rs, ss
}

// killChild opens the store, resumes after the batches already stored and
// commits batches until killed, printing "committed N" after each commit.
func killChild(path string) error {
	ctx := context.Background()
	d, err := Open(ctx, path)
	if err != nil {
		return err
	}
	if _, err := d.GetRun(ctx, killRun); errors.Is(err, store.ErrNotFound) {
		if err := d.CreateRun(ctx, &record.Run{ID: killRun, Status: record.StatusRunning, Started: time.Now()}); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	done, err := d.DoneKeys(ctx, killRun)
	if err != nil {
		return err
	}
	if len(done)%killBatch != 0 {
		return fmt.Errorf("the store holds %d results, not whole batches of %d", len(done), killBatch)
	}
	for b := len(done) / killBatch; b < killMaxBatches; b++ {
		rs, ss := killBatchResults(b)
		if err := d.PutResults(ctx, rs, ss); err != nil {
			return err
		}
		// Unbuffered: the parent sees the line as soon as the commit returned.
		if _, err := fmt.Fprintf(os.Stdout, "committed %d\n", b); err != nil {
			return err
		}
	}
	return d.Close()
}

// TestKillDurability runs a child process that commits batches of results
// and kills it with SIGKILL (cmd.Process.Kill) at a random point, three
// times over, each child resuming where the last one stopped. Every batch a
// child reported committed must be in the store, no batch may be partly
// stored, no result may be duplicated, and the file must pass
// integrity_check.
func TestKillDurability(t *testing.T) {
	if path := os.Getenv(killChildEnv); path != "" {
		if err := killChild(path); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	if testing.Short() {
		t.Skip("spawns processes")
	}
	path := filepath.Join(t.TempDir(), "assay.db")
	reported := -1 // highest batch any child reported committed
	for round := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillDurability$", "-test.count=1")
		cmd.Env = append(os.Environ(), killChildEnv+"="+path)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill after a random number of commits this round, a random
		// moment after the last report: usually mid-transaction.
		killAfter := 3 + rand.IntN(10)
		seen := 0
		killed := false
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			n, ok := strings.CutPrefix(sc.Text(), "committed ")
			if !ok {
				continue
			}
			b, err := strconv.Atoi(n)
			if err != nil {
				t.Fatalf("child printed %q", sc.Text())
			}
			// The first batch of a child follows the last one reported, or
			// one the last child committed but was killed before reporting.
			if b <= reported {
				t.Fatalf("round %d: batch %d was reported committed, yet the next child found it missing and committed it again", round, b)
			}
			if b != reported+1 && (seen > 0 || b != reported+2) {
				t.Fatalf("round %d: child committed batch %d after batch %d: it skipped batches", round, b, reported)
			}
			reported = b
			seen++
			if seen == killAfter && !killed {
				time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
				if err := cmd.Process.Kill(); err != nil {
					t.Fatal(err)
				}
				killed = true
			}
		}
		err = cmd.Wait()
		if !killed {
			t.Fatalf("round %d: the child exited before it was killed (%v); stderr:\n%s", round, err, stderr.String())
		}
		if err == nil {
			t.Fatalf("round %d: the child was killed but exited cleanly", round)
		}
		t.Logf("round %d: killed after batch %d was reported committed", round, reported)
	}

	d, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("re-opening after kill -9: %v", err)
	}
	defer d.Close()
	var integrity string
	if err := d.w.QueryRow("PRAGMA integrity_check").Scan(&integrity); err != nil || integrity != "ok" {
		t.Fatalf("integrity_check = %q, %v; want ok", integrity, err)
	}
	rows, err := d.w.Query("PRAGMA foreign_key_check")
	if err != nil {
		t.Fatal(err)
	}
	if rows.Next() {
		t.Errorf("foreign_key_check reports violations")
	}
	rows.Close()

	keys, err := d.DoneKeys(context.Background(), killRun)
	if err != nil {
		t.Fatal(err)
	}
	for b := 0; b <= reported; b++ {
		for i := range killBatch {
			k := record.Key{CaseID: fmt.Sprintf("case-%07d", b*killBatch+i), Target: "t", Epoch: 1}
			if _, ok := keys[k]; !ok {
				t.Fatalf("result %s of batch %d is missing, though the child reported the batch committed", k.CaseID, b)
			}
		}
	}
	// At most one batch past the last reported: committed, then killed
	// before it could print.
	if n := len(keys); n%killBatch != 0 || n/killBatch-1 > reported+1 {
		t.Errorf("%d results stored: want whole batches of %d, at most one past batch %d", n, killBatch, reported)
	}
	var results, distinct, scores int
	if err := d.r.QueryRow(`SELECT count(*), (SELECT count(*) FROM (SELECT DISTINCT run_id, case_id, target, epoch FROM results)),
		(SELECT count(*) FROM scores) FROM results`).Scan(&results, &distinct, &scores); err != nil {
		t.Fatal(err)
	}
	if results != distinct || results != len(keys) {
		t.Errorf("results: %d rows, %d distinct keys, %d done keys: duplicates", results, distinct, len(keys))
	}
	if scores != results {
		t.Errorf("%d scores for %d results: a commit kept results without their scores", scores, results)
	}
}
