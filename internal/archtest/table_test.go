package archtest

import (
	"bufio"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// module is the module whose packages the table describes. A backticked
// path in the table that starts with one of moduleRoots is relative to it
// (`internal/store` is github.com/assay-eval/assay/internal/store); one whose
// first element has a dot is another module's (`cel.dev/cel-go/...`);
// anything else is the standard library's (`os`).
const module = "github.com/assay-eval/assay"

var moduleRoots = []string{"internal", "cmd", "examples", "docs", "bench"}

// How the "must not import" column reads, one cell per package row:
//
//   - "—" (or nothing): no rule.
//   - a comma-separated list of entries; text in parentheses is a remark and
//     is ignored.
//   - an entry is a backticked package path (`internal/store`), or a path
//     with "/..." for it and every package below it (`internal/store/...`),
//     or one of the groups below by name.
//   - an entry may end with "but" and backticked paths: the exceptions, which
//     the package may import, together with whatever they import
//     ("everything of assay but `internal/cli`").
//
// "Must not import" means "must not depend on": a package is checked
// against everything it imports, directly or through other packages of any
// module, except that nothing reached through an exception counts. A
// standard-library entry (a path such as `os`, or the "I/O" group) is
// checked against the package's own imports only, since the standard library
// itself imports os and net. Test files are not checked: a test may open a
// store its package must not depend on.
//
// The groups:
//
//   - "everything": every package outside the standard library (assay's
//     and other modules').
//   - "everything of assay": every package of this module.
//   - "provider implementations": the packages below internal/provider that
//     implement provider.Provider against a model or program — every
//     package under internal/provider/ except those in providerSupport
//     (the HTTP classification and its tests, the conformance suite, the
//     registry and the list of built-in providers). A new provider package
//     is an implementation unless it is added to providerSupport.
//   - "other provider implementations": provider implementations other than
//     the package checked.
//   - "SDKs": the model vendors' Go SDKs (openai-go, anthropic-sdk-go).
//   - "I/O": the standard-library packages that reach outside the process:
//     os and below it, net and below it, io/fs, io/ioutil, syscall,
//     database/sql and below it, plugin.
var providerSupport = []string{
	"internal/provider/httpcall/...",
	"internal/provider/providertest/...",
	"internal/provider/registry/...",
	"internal/provider/builtin/...",
}

var sdks = []string{
	"github.com/openai/openai-go/...",
	"github.com/anthropics/anthropic-sdk-go/...",
}

var ioPackages = []string{
	"os/...", "net/...", "io/fs", "io/ioutil", "syscall", "database/sql/...", "plugin",
}

// A pattern is a full import path, or one ending in "/..." for the path
// and every path below it.
type pattern string

func (p pattern) match(path string) bool {
	if base, ok := strings.CutSuffix(string(p), "/..."); ok {
		return path == base || strings.HasPrefix(path, base+"/")
	}
	return path == string(p)
}

// exact reports whether p names path itself (not through "/...").
func (p pattern) exact(path string) bool { return string(p) == path }

// fullPath turns a path as the table writes it into a full import path.
func fullPath(p string) string {
	first, _, _ := strings.Cut(p, "/")
	if slices.Contains(moduleRoots, first) {
		return module + "/" + p
	}
	return p
}

// isStd reports whether a table path (full) is the standard library's.
func isStd(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	return !strings.Contains(first, ".")
}

// entry is one "must not import" entry of a row.
type entry struct {
	text   string                       // as written, for messages
	forbid func(self, path string) bool // the packages it names, for package self
	except []pattern                    // may be imported, with what they import
	// std is set for standard-library entries: checked against the
	// package's own imports only.
	std bool
	// module lists the module-relative patterns it names (checked to name
	// a package).
	module []pattern
}

// row is one package row of the table.
type row struct {
	line    int    // 1-based line in ARCHITECTURE.md
	name    string // the package cell as written
	pkgs    []pattern
	entries []entry
}

func (r *row) String() string { return fmt.Sprintf("row %s (ARCHITECTURE.md:%d)", r.name, r.line) }

// parseTable reads the package table of ARCHITECTURE.md: the table whose
// header is "| package | owns | must not import |". The package is the
// first cell, the rule the last (the owns cell may hold a "|" in code).
func parseTable(md string) ([]*row, error) {
	var rows []*row
	var errs []string
	in := false
	sc := bufio.NewScanner(strings.NewReader(md))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if !in {
			if h := strings.ReplaceAll(line, " ", ""); h == "|package|owns|mustnotimport|" {
				in = true
			}
			continue
		}
		if !strings.HasPrefix(line, "|") {
			break
		}
		if strings.HasPrefix(line, "|---") || strings.HasPrefix(line, "| ---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) < 3 {
			errs = append(errs, fmt.Sprintf("ARCHITECTURE.md:%d: a package row needs three cells (package | owns | must not import)", n))
			continue
		}
		r := &row{line: n, name: strings.TrimSpace(cells[0])}
		names := backticked(r.name)
		if len(names) != 1 {
			errs = append(errs, fmt.Sprintf("ARCHITECTURE.md:%d: the package cell %q must be one backticked path", n, r.name))
			continue
		}
		for _, p := range expandBraces(names[0]) {
			r.pkgs = append(r.pkgs, pattern(fullPath(p)))
		}
		es, err := parseRule(strings.TrimSpace(cells[len(cells)-1]), r)
		if err != nil {
			errs = append(errs, fmt.Sprintf("ARCHITECTURE.md:%d (%s): %v", n, r.name, err))
			continue
		}
		r.entries = es
		rows = append(rows, r)
	}
	if !in {
		return nil, fmt.Errorf("ARCHITECTURE.md has no package table (a header | package | owns | must not import |)")
	}
	if len(errs) > 0 {
		return rows, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return rows, nil
}

var groupNames = []string{"everything", "everything of assay", "provider implementations", "other provider implementations", "SDKs", "I/O"}

// parseRule reads a "must not import" cell.
func parseRule(cell string, r *row) ([]entry, error) {
	cell = stripRemarks(cell)
	var out []entry
	for item := range strings.SplitSeq(cell, ",") {
		item = strings.TrimSpace(item)
		if item == "" || item == "—" || item == "-" {
			continue
		}
		head, tail, hasBut := strings.Cut(item, " but ")
		head = strings.TrimSpace(head)
		e := entry{text: item}
		if hasBut {
			ex := backticked(tail)
			if len(ex) == 0 {
				return nil, fmt.Errorf("%q: \"but\" must be followed by backticked package paths", item)
			}
			for _, x := range ex {
				e.except = append(e.except, pattern(fullPath(x)))
			}
		}
		if ps := backticked(head); len(ps) > 0 {
			if len(ps) != 1 || strings.Trim(head, "`") != ps[0] {
				return nil, fmt.Errorf("%q: write one backticked path per entry, separated by commas", item)
			}
			var pats []pattern
			for _, p := range expandBraces(ps[0]) {
				pats = append(pats, pattern(fullPath(p)))
				if first, _, _ := strings.Cut(p, "/"); slices.Contains(moduleRoots, first) {
					e.module = append(e.module, pattern(fullPath(p)))
				}
			}
			e.std = isStd(string(pats[0]))
			e.forbid = func(_, path string) bool {
				return slices.ContainsFunc(pats, func(p pattern) bool { return p.match(path) })
			}
			out = append(out, e)
			continue
		}
		switch head {
		case "everything":
			e.forbid = func(_, _ string) bool { return true } // the std is left out by the checker
		case "everything of assay":
			e.forbid = ignoreSelf(isModule)
		case "provider implementations":
			e.forbid = ignoreSelf(isProviderImpl)
		case "other provider implementations":
			e.forbid = func(self, path string) bool { return isProviderImpl(path) && path != self }
		case "SDKs":
			e.forbid = ignoreSelf(matchAny(sdks))
		case "I/O":
			e.std = true
			e.forbid = ignoreSelf(matchAny(ioPackages))
		default:
			return nil, fmt.Errorf("%q is neither a backticked package path nor a group; the groups are %s (defined in internal/archtest)", head, quoteAll(groupNames))
		}
		out = append(out, e)
	}
	return out, nil
}

func ignoreSelf(f func(string) bool) func(string, string) bool {
	return func(_, path string) bool { return f(path) }
}

func isModule(path string) bool { return path == module || strings.HasPrefix(path, module+"/") }

func isProviderImpl(path string) bool {
	base := module + "/internal/provider/"
	if !strings.HasPrefix(path, base) {
		return false
	}
	for _, s := range providerSupport {
		if pattern(fullPath(s)).match(path) {
			return false
		}
	}
	return true
}

func matchAny(ps []string) func(string) bool {
	return func(path string) bool {
		return slices.ContainsFunc(ps, func(p string) bool { return pattern(fullPath(p)).match(path) })
	}
}

// stripRemarks drops text in (possibly nested) parentheses.
func stripRemarks(s string) string {
	var b strings.Builder
	depth := 0
	for _, c := range s {
		switch {
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// backticked returns the `quoted` parts of s.
func backticked(s string) []string {
	var out []string
	for {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(s[i+1:], '`')
		if j < 0 {
			return out
		}
		out = append(out, s[i+1:i+1+j])
		s = s[i+2+j:]
	}
}

// expandBraces expands one {a,b} group: internal/provider/{openai,anthropic}.
func expandBraces(p string) []string {
	i := strings.IndexByte(p, '{')
	j := strings.IndexByte(p, '}')
	if i < 0 || j < i {
		return []string{p}
	}
	var out []string
	for alt := range strings.SplitSeq(p[i+1:j], ",") {
		out = append(out, p[:i]+strings.TrimSpace(alt)+p[j+1:])
	}
	return out
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// pkg is one package of the import graph: its own (non-test) imports.
type pkg struct {
	Path     string
	Standard bool
	Imports  []string
}

// checkOptions say what check asks beyond the rules.
type checkOptions struct {
	// RequireRows makes a package of the module without a row a problem.
	RequireRows bool
}

// check holds the module's packages (those of graph with the module's
// path) to the rows. Each problem names the package, the forbidden import
// with the chain that reaches it, and the row.
func check(rows []*row, graph map[string]*pkg, o checkOptions) []string {
	var problems []string
	var modPkgs []string
	for path := range graph {
		if isModule(path) {
			modPkgs = append(modPkgs, path)
		}
	}
	sort.Strings(modPkgs)

	// Every row and every module path an entry names must exist: a table
	// that names a package which moved keeps nobody honest.
	for _, r := range rows {
		for _, p := range r.pkgs {
			if !slices.ContainsFunc(modPkgs, p.match) {
				problems = append(problems, fmt.Sprintf("%s names %s, which is no package of the module: fix the path or remove the row", r, rel(string(p))))
			}
		}
		for _, e := range r.entries {
			for _, p := range e.module {
				if !slices.ContainsFunc(modPkgs, p.match) {
					problems = append(problems, fmt.Sprintf("%s: entry %q names %s, which is no package of the module", r, e.text, rel(string(p))))
				}
			}
		}
	}

	for _, path := range modPkgs {
		r, err := rowFor(rows, path)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if r == nil {
			if o.RequireRows {
				problems = append(problems, fmt.Sprintf("%s has no row in ARCHITECTURE.md's package table: add a row for `%s` (what it owns, what it must not import)", rel(path), rel(path)))
			}
			continue
		}
		p := graph[path]
		for _, e := range r.entries {
			if e.std {
				for _, imp := range p.Imports {
					if q := graph[imp]; q != nil && q.Standard && e.forbid(path, imp) {
						problems = append(problems, violation(path, imp, []string{path, imp}, r, e))
					}
				}
				continue
			}
			for _, chain := range reach(graph, path, e) {
				problems = append(problems, violation(path, chain[len(chain)-1], chain, r, e))
			}
		}
	}
	return problems
}

// reach walks what path imports outside the standard library, not through
// e's exceptions, and returns the shortest import chain to each package e
// forbids.
func reach(graph map[string]*pkg, from string, e entry) [][]string {
	parent := map[string]string{from: ""}
	queue := []string{from}
	var found [][]string
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		p := graph[cur]
		if p == nil {
			continue
		}
		for _, imp := range p.Imports {
			if _, seen := parent[imp]; seen {
				continue
			}
			q := graph[imp]
			if q != nil && q.Standard {
				continue
			}
			if slices.ContainsFunc(e.except, func(x pattern) bool { return x.match(imp) }) {
				continue
			}
			parent[imp] = cur
			if e.forbid(from, imp) {
				var chain []string
				for c := imp; c != ""; c = parent[c] {
					chain = append(chain, c)
				}
				slices.Reverse(chain)
				found = append(found, chain)
				continue // one chain per forbidden package; what it imports is named by its own row
			}
			queue = append(queue, imp)
		}
	}
	sort.Slice(found, func(i, j int) bool { return found[i][len(found[i])-1] < found[j][len(found[j])-1] })
	return found
}

func violation(path, forbidden string, chain []string, r *row, e entry) string {
	how := "directly"
	if len(chain) > 2 {
		rc := make([]string, len(chain))
		for i, c := range chain {
			rc[i] = rel(c)
		}
		how = "through " + strings.Join(rc, " → ")
	}
	return fmt.Sprintf("%s imports %s (%s), which its %s forbids (must not import: %s)", rel(path), rel(forbidden), how, r, e.text)
}

// rowFor finds the row of a package: the row naming it exactly, else the
// row whose "/..." pattern is the longest that matches.
func rowFor(rows []*row, path string) (*row, error) {
	var best *row
	bestLen := -1
	for _, r := range rows {
		for _, p := range r.pkgs {
			if !p.match(path) {
				continue
			}
			l := len(p)
			if p.exact(path) {
				l = 1 << 30
			}
			if l == bestLen && best != r {
				return nil, fmt.Errorf("%s is named by two rows, %s and %s: keep one", rel(path), best, r)
			}
			if l > bestLen {
				best, bestLen = r, l
			}
		}
	}
	return best, nil
}

// rel shortens a module path for messages.
func rel(path string) string {
	if s, ok := strings.CutPrefix(path, module+"/"); ok {
		return s
	}
	return path
}
