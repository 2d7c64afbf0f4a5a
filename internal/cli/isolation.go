package cli

import (
	"fmt"

	"github.com/assay-eval/assay/internal/provider/exec"
	"github.com/assay-eval/assay/internal/spec"
)

// execEnvProblems reports each variable exec target i names in env: that is
// unset (or empty) in assay's environment, located at the entry. It names
// the variable, never a value. run stops on these before any call; validate
// warns.
func execEnvProblems(sp *spec.Spec, i int, getenv func(string) string) spec.Problems {
	t := &sp.Targets[i]
	var ps spec.Problems
	for j, name := range t.Env {
		if getenv(name) == "" {
			ps = append(ps, sp.Problemf(fmt.Sprintf("targets[%d].env[%d]", i, j),
				"export it before running assay, or remove it from env",
				"target %s: environment variable %s is not set", t.Name, showEnvName(name)))
		}
	}
	return ps
}

// execOptions isolates an exec target's calls: each runs in its own
// directory under assay's TMPDIR, with the named variables from assay's
// environment, and never sees the dataset's expected field.
func execOptions(sp *spec.Spec, getenv func(string) string) exec.Options {
	o := exec.Options{Getenv: getenv, TempDir: getenv("TMPDIR")}
	if sp.Dataset.Expected != "" {
		o.Withhold = []string{sp.Dataset.Expected}
	}
	return o
}
