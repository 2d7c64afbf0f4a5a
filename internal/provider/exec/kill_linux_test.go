package exec

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/provider"
)

// On a time-out the whole process group dies: a helper the program started
// (here a grandchild sharing its stdout) is killed too, and the call does not
// wait for it.
func TestTimeoutKillsProcessGroup(t *testing.T) {
	t.Parallel() // waits on time-outs and processes: overlaps the others
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	p := newHelper(t, "spawn", pidFile)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := p.Complete(ctx, simpleRequest())
	if elapsed := time.Since(start); elapsed > 1500*time.Millisecond {
		t.Errorf("returned after %v; the grandchild holding stdout was not killed with the group", elapsed)
	}
	providerError(t, err, provider.KindTimeout)

	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the program did not start its grandchild in time: %v", err)
	}
	pid, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d still running after the program's time-out", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A program that exits 0 but leaves a process holding its stdout still
// gets its reply through, after a bounded wait, and the straggler is killed.
func TestStragglerHoldingStdout(t *testing.T) {
	t.Parallel() // waits on time-outs and processes: overlaps the others
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	p := newHelper(t, "spawnexit", pidFile)
	start := time.Now()
	resp, err := call(t, p, simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed > waitDelay+2*time.Second {
		t.Errorf("returned after %v; want about %v", elapsed, waitDelay)
	}
	if resp.Text != "replied before exit" {
		t.Errorf("reply %q", resp.Text)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(b))
	deadline := time.Now().Add(3 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("straggler %d still running", pid)
		}
		time.Sleep(20 * time.Millisecond)
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
