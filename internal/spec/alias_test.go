package spec

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// The attack: one long anchored value aliased many times is a small file
// that decodes to gigabytes. It must be refused at the alias that crosses
// MaxExpandedBytes, quickly, without building the expansion.
func TestAliasBombIsRefusedWithBoundedMemory(t *testing.T) {
	anchor := strings.Repeat("x", 100<<10) // 100 KiB
	const aliases = 120                    // ≈ 12 MiB expanded, above the 8 MiB bound
	src := base + "scorers:\n  - {name: a, type: contains, value: &big \"" + anchor + "\"}\n"
	for i := 0; i < aliases; i++ {
		src += "  - {name: s" + strings.Repeat("i", i%5) + ", type: contains, value: *big}\n"
	}
	if len(src) > MaxSpecBytes {
		t.Fatalf("the bomb is %d bytes, over MaxSpecBytes", len(src))
	}

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, ps := parse(t, src)
	took := time.Since(start)
	runtime.ReadMemStats(&after)

	if len(ps) != 1 {
		t.Fatalf("want one problem, got %v", ps)
	}
	// The anchor and 81 aliases make 8.4 MB: the 81st (line 91) crosses the bound.
	want := "s.yaml:91:38: aliases expand the spec past 8 MiB; at most 8 MiB is allowed after expansion (an alias repeats its anchor's whole value; move long text to a file:// reference or repeat fewer times)"
	if got := ps[0].String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	t.Logf("allocated %d KiB in %v", (after.TotalAlloc-before.TotalAlloc)>>10, took)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("refusing the bomb allocated %d MiB; the expansion must not be built", alloc>>20)
	}
	if took > 2*time.Second {
		t.Errorf("refusing the bomb took %v", took)
	}
}

// Aliases that stay under the bound still load, each counted once per use.
func TestAliasesUnderTheBoundLoad(t *testing.T) {
	src := base + "scorers:\n  - {name: a, type: contains, value: &v \"" + strings.Repeat("y", 1<<10) + "\"}\n  - {name: b, type: contains, value: *v}\n"
	sp, ps := parse(t, src)
	if ps != nil {
		t.Fatalf("unexpected problems: %v", ps)
	}
	if len(sp.Scorers) != 2 || sp.Scorers[1].Value != sp.Scorers[0].Value {
		t.Fatalf("the alias did not decode to its anchor's value: %+v", sp.Scorers)
	}
}
