package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// diffDoc is the part of `assay diff --format json` these tests read.
type diffDoc struct {
	Cases struct{ Before, After, Shared, Added, Removed int }
	Flips []struct {
		Target     string
		Paired     int
		PassToFail int `json:"pass_to_fail"`
		FailToPass int `json:"fail_to_pass"`
		Unlisted   int
		Cases      []struct {
			CaseID                             string `json:"case_id"`
			Epoch                              int
			Direction, Expected, Before, After string
		}
	}
	Models []struct {
		Target  string
		Changed bool
	}
	Versions []struct {
		Name string
		Same bool
	}
	Warnings []string
}

func runDiffJSON(t *testing.T, args ...string) diffDoc {
	t.Helper()
	inv := runCLI(t, cliEnv{}, append([]string{"diff", "--format", "json"}, args...)...)
	if inv.code != ExitOK {
		t.Fatalf("diff %v: exit %d %s", args, inv.code, inv.stderr)
	}
	var d diffDoc
	if err := json.Unmarshal([]byte(inv.stdout), &d); err != nil {
		t.Fatalf("diff json: %v\n%s", err, inv.stdout)
	}
	return d
}

// An alert is triaged without the old database: diff takes a baseline
// file on either side (or both, with no store at all) and finds the same
// flips as from the runs — 3 pass→fail (c3, c7, c12) and 1 fail→pass
// (c4), of 20 paired — with the stored side's outputs and expected
// values, and for the file's side the output's hash, said to be all the
// file holds. A hostile output is shown escaped.
func TestDiffBaselineFileOnEitherSide(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var before, after []fakeResult
	for i := 1; i <= 20; i++ {
		id := fmt.Sprintf("c%d", i)
		before = append(before, fakeResult{caseID: id, raw: "answer " + id, pass: i != 4, model: "m", fp: "fp"})
		r := fakeResult{caseID: id, raw: "answer " + id, pass: true, model: "m", fp: "fp"}
		switch i {
		case 3, 7, 12:
			r.raw, r.pass = "bad\x1b[31m "+id, false
		}
		after = append(after, r)
	}
	putFakeRun(t, db, "before", t0, before)
	putFakeRun(t, db, "after", t0.Add(time.Hour), after)
	bfile := exportBaseline(t, db, "before", dir)
	afile := filepath.Join(dir, "after-baseline.json")
	if inv := runCLI(t, cliEnv{}, "baseline", "export", "after", "-o", afile, "--db", db); inv.code != ExitOK {
		t.Fatal(inv.stderr)
	}

	fromRuns := runDiffJSON(t, "before", "after", "--db", db)
	if len(fromRuns.Versions) < 6 {
		t.Fatalf("versions %+v", fromRuns.Versions)
	}
	wantIDs := []string{"c3 pass_to_fail", "c7 pass_to_fail", "c12 pass_to_fail", "c4 fail_to_pass"}
	check := func(name string, d diffDoc, beforeFile, afterFile bool) {
		t.Helper()
		if len(d.Flips) != 1 {
			t.Fatalf("%s: flips %+v", name, d.Flips)
		}
		f := d.Flips[0]
		var ids []string
		for _, c := range f.Cases {
			ids = append(ids, c.CaseID+" "+c.Direction)
		}
		if f.Paired != 20 || f.PassToFail != 3 || f.FailToPass != 1 || !reflect.DeepEqual(ids, wantIDs) || d.Cases.Shared != 20 {
			t.Errorf("%s: paired %d, %d pass→fail, %d fail→pass, flipped %v, %d shared; want 20, 3, 1, %v, 20", name, f.Paired, f.PassToFail, f.FailToPass, ids, d.Cases.Shared, wantIDs)
		}
		c := f.Cases[0] // c3: "answer c3" → "bad\x1b[31m c3"
		if beforeFile != strings.Contains(c.Before, "not in the baseline file; output hash") || (!beforeFile && c.Before != "answer c3") {
			t.Errorf("%s: before output %q", name, c.Before)
		}
		if afterFile != strings.Contains(c.After, "not in the baseline file; output hash") || (!afterFile && c.After != "bad\x1b[31m c3") {
			t.Errorf("%s: after output %q", name, c.After)
		}
		if wantExp := !(beforeFile && afterFile); (c.Expected != "") != wantExp {
			t.Errorf("%s: expected %q (want it from a stored side)", name, c.Expected)
		}
		if !reflect.DeepEqual(d.Versions, fromRuns.Versions) {
			t.Errorf("%s: versions %+v; from the runs %+v", name, d.Versions, fromRuns.Versions)
		}
		if (beforeFile || afterFile) != strings.Contains(strings.Join(d.Warnings, "\n"), "holds verdicts and output hashes, not outputs") {
			t.Errorf("%s: warnings %q", name, d.Warnings)
		}
	}
	check("runs", fromRuns, false, false)
	check("file before", runDiffJSON(t, bfile, "after", "--db", db), true, false)
	check("file after", runDiffJSON(t, "before", afile, "--db", db), false, true)
	// Both files: no database at all (the path does not exist).
	check("both files", runDiffJSON(t, bfile, afile, "--db", filepath.Join(t.TempDir(), "none.db")), true, true)

	text := runCLI(t, cliEnv{}, "diff", bfile, "after", "--db", db)
	if text.code != ExitOK || strings.Contains(text.stdout, "\x1b") || !strings.Contains(text.stdout, `\x1b[31m`) || !strings.Contains(text.stdout, "not in the baseline file") {
		t.Errorf("text: exit %d; the hostile output must show escaped:\n%q", text.code, text.stdout)
	}
	if inv := runCLI(t, cliEnv{}, "diff", bfile, "nope", "--db", db); inv.code != ExitErr || !strings.Contains(inv.stderr, "not found") {
		t.Errorf("unknown run beside a file: exit %d %q", inv.code, inv.stderr)
	}
	bad := filepath.Join(dir, "bad.json")
	writeFile(t, bad, "{not json")
	if inv := runCLI(t, cliEnv{}, "diff", bad, "after", "--db", db); inv.code != ExitErr || !strings.Contains(inv.stderr, "bad.json") {
		t.Errorf("bad baseline file: exit %d %q; want the file named", inv.code, inv.stderr)
	}
}
