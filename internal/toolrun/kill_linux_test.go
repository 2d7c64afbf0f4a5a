package toolrun

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/spec"
)

// A handler that hangs — and a helper it started, holding its stdout — is
// killed at its time-out with its whole process group; the call fails
// loudly as tool_timeout within a bounded time and leaves nothing behind.
func TestExecTimeoutKillsTheGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	h, _, base := execTool(t, spec.ToolHandler{Timeout: spec.Duration(500 * time.Millisecond)}, nil, "hang", pidFile)
	start := time.Now()
	_, err := h.Call(context.Background(), simpleCall())
	elapsed := time.Since(start)
	te := toolError(t, err, KindTimeout)
	if elapsed > 2*time.Second {
		t.Errorf("returned after %v with a 500ms time-out", elapsed)
	}
	if !strings.Contains(te.Msg, "500ms") || !strings.Contains(te.Msg, "timeout") {
		t.Errorf("message %q does not name the time-out and the setting", te.Msg)
	}
	if !strings.Contains(te.Error(), "tool_timeout") {
		t.Errorf("Error() %q does not carry the kind", te.Error())
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the handler did not start its grandchild in time: %v", err)
	}
	pid, _ := strconv.Atoi(string(b))
	deadline := time.Now().Add(3 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d still running after the handler's time-out", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if left := entries(t, base); len(left) != 0 {
		t.Errorf("left behind after a time-out: %v", left)
	}
}

// alive reports whether pid is a running (not zombie) process.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X')
}
