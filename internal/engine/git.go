package engine

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"time"
)

// GitCommit is the commit of the git work tree holding dir ("" outside
// one), with "-dirty" when files beside the spec are uncommitted.
func GitCommit(ctx context.Context, dir string) string {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	commit := strings.TrimSpace(string(out))
	// Uncommitted changes beside the spec mean the commit alone does not
	// say what was measured (the content hashes still do).
	status, err := exec.CommandContext(ctx, "git", "-C", dir, "status", "--porcelain", "--", ".").Output()
	if err == nil && len(bytes.TrimSpace(status)) > 0 {
		commit += "-dirty"
	}
	return commit
}
