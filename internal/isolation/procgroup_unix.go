//go:build unix

package isolation

import (
	"errors"
	"io/fs"
	"os"
	osexec "os/exec"
	"syscall"
)

// killGroupOnCancel starts the program in a process group of its own and,
// when the run's context ends, kills the whole group, so that helpers the
// program started (a server, a shell pipeline) die with it and release its
// stdout.
func killGroupOnCancel(cmd *osexec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
}

// killGroup kills the process group of a started command.
func killGroup(cmd *osexec.Cmd) error {
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

func isExecutable(fi fs.FileInfo) bool { return fi.Mode().Perm()&0o111 != 0 }

// platformVars are copied from assay's environment besides PATH: none are
// needed on Unix.
func platformVars() []string { return nil }
