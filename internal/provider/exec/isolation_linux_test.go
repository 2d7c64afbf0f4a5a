package exec

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// A process the program leaves running (one that does not hold its stdout,
// so the call does not wait for it) is killed when the call ends, so
// nothing keeps writing into a directory being removed.
func TestLeftoverProcessKilled(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "leftover.pid")
	p, _, base := isolated(t, nil, nil, "background", pidFile)
	resp, err := call(t, p, simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "left a process behind" {
		t.Errorf("reply %q", resp.Text)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d the program left behind still runs after its call", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if left := entries(t, base); len(left) != 0 {
		t.Errorf("left in the temporary base: %v", left)
	}
}
