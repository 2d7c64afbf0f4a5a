package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// realClock lists the files (module-relative) whose code may read the wall
// clock itself — time.Now(), time.Since, time.Until — and why. Everything
// else reads the clock it is given: cli's Globals.Now, passed on through
// options and constructors (engine.Engine.Now, runner.Options.Now,
// sqlite.WithClock, mock.Options.Now, registry.BuildOptions.Now). What is
// listed here waits on real time (a timer must fire then), or is a default
// used when no clock was given, or measures real time in a test suite.
// Test files are never checked.
var realClock = map[string]string{
	"internal/engine/engine.go":                               "the default when Engine.Now is nil",
	"internal/cli/progress.go":                                "throttles the progress line's redraws (terminal time, nothing recorded)",
	"internal/mock/server.go":                                 "Close waits up to 5 s of real time for requests in flight",
	"internal/mock/capacity.go":                               "the time requests wait for a slot is real time the server spends (Stats.QueueWait), never recorded",
	"internal/provider/limit.go":                              "token-bucket reservations (rate.Limiter) set real timers",
	"internal/provider/retry.go":                              "a back-off is compared with the context's deadline, which is real time",
	"internal/provider/httpcall/httpcall.go":                  "a Retry-After date becomes a real wait",
	"internal/provider/providertest/providertest.go":          "the conformance suite times real calls",
	"internal/provider/httpcall/httpcalltest/httpcalltest.go": "the HTTP providers' suite times real calls",
	"internal/provider/httpcall/httpcalltest/bounded.go":      "the HTTP providers' suite times real calls",
	"internal/load/harness/clock.go":                          "a load test keeps its schedule with real timers and measures real latencies",
	"internal/store/storetest/lease.go":                       "the lease race's holders are callers stamping their own leases",
}

// realClockDirs are subtrees whose code may read the wall clock: programs
// beside the product.
var realClockDirs = []string{"bench/"}

// TestOneClock finds every read of the wall clock outside tests and the
// files in realClock: a recorded or compared time must come from the one
// clock the process passes in, so tests can fix it and nothing disagrees.
func TestOneClock(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	reads, err := clockReads(root)
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, r := range reads {
		file := r.file
		if realClock[file] != "" || hasAnyPrefix(file, realClockDirs) {
			used[file] = true
			continue
		}
		t.Errorf("%s:%d: %s reads the wall clock; take the clock passed in (Globals.Now, through the package's options or constructor), or, if this waits on real time, add the file to realClock in internal/archtest/clock_test.go with why", file, r.line, r.call)
	}
	for file := range realClock {
		if !used[file] {
			t.Logf("%s is in realClock but reads no clock: remove it from the list", file)
		}
	}
}

func hasAnyPrefix(s string, ps []string) bool {
	for _, p := range ps {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

type clockRead struct {
	file string // module-relative, slash-separated
	line int
	call string
}

// clockReads parses every non-test Go file under root (testdata and
// hidden directories skipped) and returns its calls of time.Now, time.Since
// and time.Until.
func clockReads(root string) ([]clockRead, error) {
	var out []clockRead
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		out = append(out, fileClockReads(fset, f, filepath.ToSlash(rel))...)
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].file != out[j].file {
			return out[i].file < out[j].file
		}
		return out[i].line < out[j].line
	})
	return out, err
}

func fileClockReads(fset *token.FileSet, f *ast.File, rel string) []clockRead {
	names := map[string]bool{} // what the file calls package time
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "time" {
			if imp.Name == nil {
				names["time"] = true
			} else if imp.Name.Name != "_" {
				names[imp.Name.Name] = true
			}
		}
	}
	if len(names) == 0 {
		return nil
	}
	var out []clockRead
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && names[x.Name] {
			switch sel.Sel.Name {
			case "Now", "Since", "Until":
				out = append(out, clockRead{file: rel, line: fset.Position(call.Pos()).Line, call: "time." + sel.Sel.Name})
			}
		}
		return true
	})
	return out
}

// The finder itself: it sees calls through an aliased import, and neither a
// method of the same name on something else nor the clock passed as a
// value (a default such as now: time.Now).
func TestClockReadsFinder(t *testing.T) {
	src := `package p

import clock "time"

type fake struct{}

func (fake) Now() int { return 0 }

func f(deadline clock.Time) {
	_ = clock.Now()
	_ = clock.Until(deadline)
	var other fake
	_ = other.Now()
	now := clock.Now
	_ = now
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := fileClockReads(fset, f, "p.go")
	want := []clockRead{{"p.go", 10, "time.Now"}, {"p.go", 11, "time.Until"}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("found %v; want %v", got, want)
	}
}
