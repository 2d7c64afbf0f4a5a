//go:build linux

package engine

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// A writer killed but not yet reaped (a zombie) is gone: its lease is
// taken over at once rather than refused until something reaps it.
func TestZombieHolderIsGone(t *testing.T) {
	if !processAlive(os.Getpid()) {
		t.Fatal("the test's own process is not alive")
	}
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	defer cmd.Wait() // reap it at the end
	// Not waited for: once it exits it stays a zombie of this process.
	deadline := time.Now().Add(5 * time.Second)
	for !zombie(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d never became a zombie", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if processAlive(pid) {
		t.Errorf("processAlive(%d) = true for a zombie: a killed writer's lease would be refused", pid)
	}
}
