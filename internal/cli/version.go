package cli

import (
	"runtime/debug"
)

// Version is assay's version as the Go toolchain stamped it into the binary:
// the module version of a release, or the VCS revision (with "+dirty" when
// the tree had changes) of a build from a checkout; "devel" when neither is
// known (e.g. under go test).
func Version() string {
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
