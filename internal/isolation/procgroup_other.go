//go:build !unix

package isolation

import (
	"io/fs"
	osexec "os/exec"
)

// killGroupOnCancel keeps os/exec's default on systems without process
// groups: when the run's context ends, the program itself is killed (not
// processes it started).
func killGroupOnCancel(cmd *osexec.Cmd) {}

// killGroup kills the command's process, which has no group here.
func killGroup(cmd *osexec.Cmd) error { return cmd.Process.Kill() }

func isExecutable(fi fs.FileInfo) bool { return true }

// platformVars are copied from assay's environment besides PATH: Windows
// programs fail to start without SYSTEMROOT.
func platformVars() []string { return []string{"SYSTEMROOT"} }
