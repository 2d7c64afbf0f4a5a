package archtest

import (
	"strings"
	"testing"
)

// The checker itself, on a synthetic table and import graph: it must fail
// when a package reaches a forbidden one, and say which, how and by which row.

const synthTable = `# Architecture

| package | owns | must not import |
|---|---|---|
| ` + "`cmd/app`" + ` | main (a | in the owns cell) | everything of assay but ` + "`internal/cli`" + ` |
| ` + "`internal/cli`" + ` | commands | — |
| ` + "`internal/analysis`" + ` | findings | ` + "`internal/cli`" + `, ` + "`internal/store/...`" + ` (only ` + "`record`" + `, see above) |
| ` + "`internal/gate`" + ` | rules | |
| ` + "`internal/store/...`" + ` | storage | provider implementations |
| ` + "`internal/record`" + ` | records | everything of assay, I/O |
| ` + "`internal/provider/{openai,anthropic}`" + ` | SDK providers | other provider implementations |
| ` + "`internal/provider/httpcall`" + ` | classification | provider implementations, SDKs |
| ` + "`internal/celbound`" + ` | bound | everything but ` + "`cel.dev/cel-go/...`" + ` |

after the table
`

func synthGraph(edges map[string][]string, std ...string) map[string]*pkg {
	g := map[string]*pkg{}
	add := func(p string) {
		if g[p] == nil {
			g[p] = &pkg{Path: p, Standard: isStd(p) && !strings.HasPrefix(p, module)}
		}
	}
	for from, tos := range edges {
		add(fullPath(from))
		for _, to := range tos {
			add(fullPath(to))
			g[fullPath(from)].Imports = append(g[fullPath(from)].Imports, fullPath(to))
		}
	}
	for _, s := range std {
		add(s)
	}
	return g
}

// cleanEdges is a graph that keeps every rule of synthTable.
func cleanEdges() map[string][]string {
	return map[string][]string{
		"cmd/app":                        {"internal/cli", "os"},
		"internal/cli":                   {"internal/analysis", "internal/store/sqlite", "internal/provider/openai"},
		"internal/analysis":              {"internal/gate", "internal/record", "fmt"},
		"internal/gate":                  {"internal/record"},
		"internal/store":                 {"internal/record"},
		"internal/store/sqlite":          {"internal/store", "os"},
		"internal/record":                {"errors", "time"},
		"internal/provider/openai":       {"internal/provider/httpcall", "github.com/openai/openai-go/v3"},
		"internal/provider/anthropic":    {"internal/provider/httpcall", "github.com/anthropics/anthropic-sdk-go/v2"},
		"internal/provider/httpcall":     {"net/http"},
		"internal/celbound":              {"cel.dev/cel-go/cel", "strings"},
		"cel.dev/cel-go/cel":             {"github.com/antlr4-go/antlr/v4", "os"},
		"fmt":                            {"os"},
		"github.com/openai/openai-go/v3": {"net/http"},
	}
}

func checkSynth(t *testing.T, edges map[string][]string, o checkOptions) []string {
	t.Helper()
	rows, err := parseTable(synthTable)
	if err != nil {
		t.Fatal(err)
	}
	return check(rows, synthGraph(edges), o)
}

func TestCheckerPassesACleanGraph(t *testing.T) {
	if ps := checkSynth(t, cleanEdges(), checkOptions{RequireRows: true}); len(ps) > 0 {
		t.Fatalf("clean graph: %q", ps)
	}
}

func TestCheckerFindsForbiddenImports(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(map[string][]string)
		wants []string // every problem, in order, each a set of substrings
	}{
		{
			name:  "transitive",
			edit:  func(e map[string][]string) { e["internal/gate"] = append(e["internal/gate"], "internal/store") },
			wants: []string{"internal/analysis imports internal/store (through internal/analysis → internal/gate → internal/store), which its row `internal/analysis` (ARCHITECTURE.md:7) forbids (must not import: `internal/store/...`)"},
		},
		{
			name: "direct, below a /... pattern",
			edit: func(e map[string][]string) {
				e["internal/analysis"] = append(e["internal/analysis"], "internal/store/sqlite")
			},
			wants: []string{"internal/analysis imports internal/store/sqlite (directly), which its row `internal/analysis` (ARCHITECTURE.md:7) forbids (must not import: `internal/store/...`)"},
		},
		{
			name: "a group",
			edit: func(e map[string][]string) {
				e["internal/store/sqlite"] = append(e["internal/store/sqlite"], "internal/provider/anthropic")
			},
			wants: []string{"internal/store/sqlite imports internal/provider/anthropic (directly), which its row `internal/store/...` (ARCHITECTURE.md:9) forbids (must not import: provider implementations)"},
		},
		{
			name: "a new provider package is an implementation",
			edit: func(e map[string][]string) {
				e["internal/store"] = append(e["internal/store"], "internal/provider/gemini")
			},
			wants: []string{"internal/store imports internal/provider/gemini (directly)", "internal/store/sqlite imports internal/provider/gemini (through internal/store/sqlite → internal/store → internal/provider/gemini)"},
		},
		{
			name: "other provider implementations",
			edit: func(e map[string][]string) {
				e["internal/provider/openai"] = append(e["internal/provider/openai"], "internal/provider/anthropic")
			},
			wants: []string{"internal/provider/openai imports internal/provider/anthropic (directly), which its row `internal/provider/{openai,anthropic}` (ARCHITECTURE.md:11) forbids (must not import: other provider implementations)"},
		},
		{
			name: "SDKs",
			edit: func(e map[string][]string) {
				e["internal/provider/httpcall"] = append(e["internal/provider/httpcall"], "github.com/openai/openai-go/v3/option")
			},
			wants: []string{"internal/provider/httpcall imports github.com/openai/openai-go/v3/option (directly), which its row `internal/provider/httpcall` (ARCHITECTURE.md:12) forbids (must not import: SDKs)"},
		},
		{
			name:  "standard library I/O, directly only",
			edit:  func(e map[string][]string) { e["internal/record"] = append(e["internal/record"], "os") },
			wants: []string{"internal/record imports os (directly), which its row `internal/record` (ARCHITECTURE.md:10) forbids (must not import: I/O)"},
		},
		{
			name:  "everything of assay but an exception: a second assay import",
			edit:  func(e map[string][]string) { e["cmd/app"] = append(e["cmd/app"], "internal/record") },
			wants: []string{"cmd/app imports internal/record (directly), which its row `cmd/app` (ARCHITECTURE.md:5) forbids (must not import: everything of assay but `internal/cli`)"},
		},
		{
			name: "everything but an exception",
			edit: func(e map[string][]string) {
				e["internal/celbound"] = append(e["internal/celbound"], "golang.org/x/text/language")
			},
			wants: []string{"internal/celbound imports golang.org/x/text/language (directly), which its row `internal/celbound` (ARCHITECTURE.md:13) forbids (must not import: everything but `cel.dev/cel-go/...`)"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := cleanEdges()
			tc.edit(e)
			got := checkSynth(t, e, checkOptions{})
			if len(got) != len(tc.wants) {
				t.Fatalf("got %d problems, want %d:\n%s", len(got), len(tc.wants), strings.Join(got, "\n"))
			}
			for i, w := range tc.wants {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d:\n got %q\nwant it to contain %q", i, got[i], w)
				}
			}
		})
	}
}

func TestCheckerAsksForMissingRows(t *testing.T) {
	e := cleanEdges()
	e["internal/engine"] = []string{"internal/record"}
	if ps := checkSynth(t, e, checkOptions{}); len(ps) > 0 {
		t.Fatalf("without RequireRows a package without a row is not a problem: %q", ps)
	}
	ps := checkSynth(t, e, checkOptions{RequireRows: true})
	want := "internal/engine has no row in ARCHITECTURE.md's package table: add a row for `internal/engine`"
	if len(ps) != 1 || !strings.Contains(ps[0], want) {
		t.Fatalf("got %q, want one problem containing %q", ps, want)
	}
}

func TestCheckerRefusesStaleRows(t *testing.T) {
	e := cleanEdges()
	delete(e, "internal/gate")
	e["internal/analysis"] = []string{"internal/record"}
	ps := checkSynth(t, e, checkOptions{})
	want := "row `internal/gate` (ARCHITECTURE.md:8) names internal/gate, which is no package of the module: fix the path or remove the row"
	if len(ps) != 1 || ps[0] != want {
		t.Fatalf("got %q, want [%q]", ps, want)
	}
}

func TestParseTableProblems(t *testing.T) {
	for _, tc := range []struct{ cell, want string }{
		{"`internal/store`, providers", `"providers" is neither a backticked package path nor a group; the groups are "everything", "everything of assay"`},
		{"`internal/store` `internal/runner`", "write one backticked path per entry, separated by commas"},
		{"everything but cel-go", `"but" must be followed by backticked package paths`},
	} {
		md := "| package | owns | must not import |\n|---|---|---|\n| `internal/x` | x | " + tc.cell + " |\n"
		_, err := parseTable(md)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "ARCHITECTURE.md:3 (`internal/x`)") {
			t.Errorf("cell %q: got %v, want an error at ARCHITECTURE.md:3 containing %q", tc.cell, err, tc.want)
		}
	}
	if _, err := parseTable("# no table\n"); err == nil {
		t.Error("a file without the table parsed")
	}
}
