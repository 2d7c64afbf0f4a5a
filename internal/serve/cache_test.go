package serve

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// Requests for a value being built wait for that build: a run's report is
// computed once however many visits ask for it at the same time.
func TestRunCacheBuildsOnceForConcurrentRequests(t *testing.T) {
	t.Parallel()
	c := newRunCache()
	var builds atomic.Int32
	started, release := make(chan struct{}), make(chan struct{})
	build := func() (any, error) {
		if builds.Add(1) == 1 {
			close(started)
		}
		<-release
		return "report", nil
	}
	var wg sync.WaitGroup
	got := make([]any, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], _ = c.get("k", "s1", build)
		}()
	}
	<-started
	if c.has("k", "s1") {
		t.Error("has reports a value still being built")
	}
	close(release)
	wg.Wait()
	if n := builds.Load(); n != 1 {
		t.Errorf("%d builds for one key, want 1", n)
	}
	for i, v := range got {
		if v != "report" {
			t.Errorf("request %d got %v", i, v)
		}
	}
	if !c.has("k", "s1") || c.has("k", "s2") {
		t.Error("has does not follow the stamp")
	}
	// A new stamp (the run changed) builds again.
	if v, _ := c.get("k", "s2", func() (any, error) { return "new", nil }); v != "new" {
		t.Errorf("a changed run got the old value %v", v)
	}
}

// A failed build is not kept: the next request builds again.
func TestRunCacheForgetsFailures(t *testing.T) {
	t.Parallel()
	c := newRunCache()
	if _, err := c.get("k", "s", func() (any, error) { return nil, errors.New("store gone") }); err == nil {
		t.Fatal("the build's error was lost")
	}
	if c.has("k", "s") {
		t.Error("a failed build is kept")
	}
	if v, err := c.get("k", "s", func() (any, error) { return 7, nil }); err != nil || v != 7 {
		t.Errorf("after a failure: %v, %v", v, err)
	}
}

// The cache holds at most cacheSize values, dropping the oldest.
func TestRunCacheIsBounded(t *testing.T) {
	t.Parallel()
	c := newRunCache()
	for i := range cacheSize + 5 {
		_, _ = c.get(strconv.Itoa(i), "s", func() (any, error) { return i, nil })
	}
	if len(c.m) != cacheSize {
		t.Errorf("%d values held, want %d", len(c.m), cacheSize)
	}
	if c.has("0", "s") || !c.has(strconv.Itoa(cacheSize+4), "s") {
		t.Error("not the oldest values dropped")
	}
}
