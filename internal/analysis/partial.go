package analysis

import (
	"fmt"

	"github.com/assay-eval/assay/internal/record"
)

// partialWarnings name the targets of a complete run that have results on
// fewer of its cases than it measured — a vendor's answers to a blinded
// sample of the cases, added with assay import --into: their rates are of
// those cases only, and each comparison with them pairs the cases both
// sides have (its n says how many).
func partialWarnings(run *record.Run, ts []Target) []string {
	if run.Status != record.StatusComplete || run.Cases == 0 {
		return nil
	}
	epochs := max(1, run.Epochs)
	var ws []string
	for _, t := range ts {
		if t.N == 0 || t.N >= run.Cases*epochs {
			continue
		}
		if epochs == 1 {
			ws = append(ws, fmt.Sprintf("target %s has results on %d of the run's %d cases: its rates are of those cases, and each comparison with it pairs only the cases both targets have (its n)", t.Name, t.N, run.Cases))
		} else {
			ws = append(ws, fmt.Sprintf("target %s has %d of the run's %d results (%d cases × %d epochs): its rates are of those, and each comparison with it pairs only the cases both targets have (its n)", t.Name, t.N, run.Cases*epochs, run.Cases, epochs))
		}
	}
	return ws
}

// unfinishedWarnings says when the run did not complete: interrupted,
// failed, or still "running" because its process is running or was killed
// (nothing marked it ended). Its rates are over the results it stored,
// which may leave out whole targets' or cases' worth.
func unfinishedWarnings(run *record.Run) []string {
	switch run.Status {
	case record.StatusComplete, "":
		return nil
	case record.StatusRunning:
		return []string{fmt.Sprintf("run %s is still running, or its process was killed: its rates are over the results stored so far (assay run SPEC --resume %s completes it)", run.ID, run.ID)}
	}
	return []string{fmt.Sprintf("run %s is %s, not complete: its rates are over the results it stored (assay run SPEC --resume %s completes it)", run.ID, run.Status, run.ID)}
}
