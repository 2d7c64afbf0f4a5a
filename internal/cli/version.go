package cli

import (
	"runtime/debug"
)

// buildVersion is set at link time by a release build:
//
//	go build -ldflags "-X github.com/assay-eval/assay/internal/cli.buildVersion=v1.2.3" ./cmd/assay
//
// It is the one variable written outside the code, the way gh and restic
// stamp theirs.
var buildVersion string

// Version is assay's version: the one stamped at link time, else as the Go
// toolchain stamped it into the binary:
// the module version of a release, or the VCS revision (with "+dirty" when
// the tree had changes) of a build from a checkout; "devel" when neither is
// known (e.g. under go test).
func Version() string {
	if buildVersion != "" {
		return buildVersion
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified == "true" {
		rev += "+dirty"
	}
	return "devel-" + rev
}
