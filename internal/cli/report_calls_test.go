package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/mock"
)

// TestReportShowsToolCalls: a tool-calling spec run against assay mock by
// two models that call differently; assay report's tool-call section (JSON)
// holds the tool choice, calls per case and cost per trajectory the test
// counts itself from the exported rows, every format shows the section,
// and a failure whose reply only called a tool shows its call.
func TestReportShowsToolCalls(t *testing.T) {
	questions := map[string]string{} // case → question
	want := map[string]string{}      // case → expected tool
	var lines []string
	var mockRules []mock.Rule
	tools := []string{"lookup_order", "refund", "escalate"}
	for i := range 12 {
		id := fmt.Sprintf("q%02d", i)
		tool := tools[i%3]
		q := fmt.Sprintf("question number %02d.", i)
		questions[id], want[id] = q, tool
		lines = append(lines, fmt.Sprintf(`{"id": %q, "q": %q, "want": {"name": %q}}`, id, q, tool))
		// good: the right tool, twice on every fourth case; weak: text on
		// every third, the wrong tool on every fourth, else the right one
		// after some text.
		good := []mock.ToolCall{{Name: tool, Arguments: `{"id": 1}`}}
		if i%4 == 0 {
			good = append(good, good[0])
		}
		mockRules = append(mockRules, mock.Rule{Match: q, Model: "good", ToolCalls: good})
		switch {
		case i%3 == 0:
			mockRules = append(mockRules, mock.Rule{Match: q, Model: "weak", Reply: "I cannot do that."})
		case i%4 == 1:
			mockRules = append(mockRules, mock.Rule{Match: q, Model: "weak", ToolCalls: []mock.ToolCall{{Name: tools[(i+1)%3], Arguments: `{"id": 2}`}}})
		default:
			mockRules = append(mockRules, mock.Rule{Match: q, Model: "weak", Reply: "Checking.", ToolCalls: []mock.ToolCall{{Name: tool, Arguments: `{"id": 1}`}}})
		}
	}
	_, url := startMock(t, mock.Options{Rules: mockRules})
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "cases.jsonl"), strings.Join(lines, "\n")+"\n")
	spec := filepath.Join(dir, "support.yaml")
	writeFile(t, spec, "name: support\ndataset: {path: cases.jsonl, id: id, expected: want}\nprompt: {user: '{{.q}}'}\n"+
		"tools:\n  - {name: lookup_order, parameters: {type: object, properties: {id: {type: integer}}}}\n"+
		"  - {name: refund, parameters: {type: object, properties: {id: {type: integer}}}}\n"+
		"  - {name: escalate, parameters: {type: object, properties: {id: {type: integer}}}}\n"+
		"targets:\n"+
		fmt.Sprintf("  - {name: good, provider: openai, model: good, base_url: %q, api_key_env: MOCK_KEY, price: {input_per_mtok: 1, output_per_mtok: 4}}\n", url+"/v1")+
		fmt.Sprintf("  - {name: weak, provider: openai, model: weak, base_url: %q, api_key_env: MOCK_KEY, price: {input_per_mtok: 1, output_per_mtok: 4}}\n", url+"/v1")+
		"scorers:\n  - {name: call, type: tool_call}\n")
	rows := runAndExport(t, dir, spec)
	e := cliEnv{env: map[string]string{"MOCK_KEY": "x"}}
	db := filepath.Join(dir, "support.yaml.db")
	inv := runCLI(t, e, "report", "latest", "--spec", spec, "--db", db, "--format", "json")
	if inv.code != ExitOK {
		t.Fatalf("report: exit %d\n%s", inv.code, inv.stderr)
	}
	var rep struct {
		Calls struct {
			Agent   bool `json:"agent"`
			Targets []struct {
				Target    string `json:"target"`
				Results   int    `json:"results"`
				WithCalls int    `json:"with_calls"`
				CallOnly  int    `json:"call_only"`
				Selection []struct {
					Field  string `json:"field"`
					Passed int    `json:"passed"`
					N      int    `json:"n"`
				} `json:"tool_selection"`
				Calls struct {
					Mean float64    `json:"mean"`
					N    int        `json:"n"`
					CI   [2]float64 `json:"ci"`
				} `json:"calls_per_case"`
				Turns *struct{} `json:"turns_per_case"`
				Cost  struct {
					Mean float64 `json:"mean"`
				} `json:"cost_per_trajectory"`
			} `json:"targets"`
			Measures []struct {
				Measure string  `json:"measure"`
				N       int     `json:"n"`
				Delta   float64 `json:"delta"`
			} `json:"measure_comparisons"`
		} `json:"calls"`
	}
	if err := json.Unmarshal([]byte(inv.stdout), &rep); err != nil {
		t.Fatalf("report JSON: %v\n%s", err, inv.stdout)
	}
	// The test's own counts, from the exported rows.
	type count struct {
		n, withCalls, callOnly, right int
		calls, cost                   float64
	}
	counts := map[string]*count{}
	for _, r := range rows {
		tg := fmt.Sprint(r["target"])
		c := counts[tg]
		if c == nil {
			c = &count{}
			counts[tg] = c
		}
		c.n++
		var calls []struct{ Name string }
		if v := r["tool_calls"]; v != nil {
			b, _ := json.Marshal(v)
			if err := json.Unmarshal(b, &calls); err != nil {
				t.Fatal(err)
			}
		}
		c.calls += float64(len(calls))
		cost, _ := r["cost_usd"].(float64)
		saved, _ := r["saved_usd"].(float64)
		c.cost += cost + saved
		if len(calls) > 0 {
			c.withCalls++
			if r["raw"] == "" || r["raw"] == nil {
				c.callOnly++
			}
		}
		ok := len(calls) > 0
		for _, k := range calls {
			ok = ok && k.Name == want[fmt.Sprint(r["case_id"])]
		}
		if ok {
			c.right++
		}
	}
	if rep.Calls.Agent || len(rep.Calls.Targets) != 2 {
		t.Fatalf("calls section: agent %v, %d targets; want single calls for 2 targets:\n%s", rep.Calls.Agent, len(rep.Calls.Targets), inv.stdout)
	}
	for _, got := range rep.Calls.Targets {
		c := counts[got.Target]
		if c == nil {
			t.Fatalf("target %q not exported", got.Target)
		}
		if got.Results != c.n || got.WithCalls != c.withCalls || got.CallOnly != c.callOnly {
			t.Errorf("%s: %d results, %d with calls, %d call-only; the rows have %d, %d, %d", got.Target, got.Results, got.WithCalls, got.CallOnly, c.n, c.withCalls, c.callOnly)
		}
		if len(got.Selection) != 1 || got.Selection[0].Field != "(tool)" || got.Selection[0].Passed != c.right || got.Selection[0].N != c.n {
			t.Errorf("%s: tool choice %+v; the rows have %d/%d right", got.Target, got.Selection, c.right, c.n)
		}
		if got.Calls.N != c.n || math.Abs(got.Calls.Mean-c.calls/float64(c.n)) > 1e-6 || !(got.Calls.CI[0] <= got.Calls.Mean && got.Calls.Mean <= got.Calls.CI[1]) {
			t.Errorf("%s: calls per case %+v; the rows have %v over %d cases", got.Target, got.Calls, c.calls/float64(c.n), c.n)
		}
		if math.Abs(got.Cost.Mean-c.cost/float64(c.n)) > 1e-6 {
			t.Errorf("%s: cost per trajectory %v; the rows have %v", got.Target, got.Cost.Mean, c.cost/float64(c.n))
		}
		if got.Turns != nil {
			t.Errorf("%s: turns per case without an agent loop", got.Target)
		}
	}
	if len(rep.Calls.Measures) != 2 {
		t.Errorf("measure comparisons %+v; want calls and cost (no turns without agent loops)", rep.Calls.Measures)
	} else if d := rep.Calls.Measures[0]; d.Measure != "calls_per_case" || d.N != 12 ||
		math.Abs(d.Delta-(counts["good"].calls-counts["weak"].calls)/12) > 1e-6 {
		t.Errorf("calls compared: %+v; the rows give good − weak = %v over 12 cases", d, (counts["good"].calls-counts["weak"].calls)/12)
	}
	// Every format shows the section; the text's worst failures show the
	// weak model's wrong call as a call.
	for format, marks := range map[string][]string{
		"text":     {"tool calls (per case", "tool choice: call", "calls/case", "calls: escalate({\"id\": 2})"},
		"markdown": {"### Tool calls", "#### Tool calls compared"},
		"html":     {`<section id="calls">`},
	} {
		inv := runCLI(t, e, "report", "latest", "--spec", spec, "--db", db, "--format", format)
		if inv.code != ExitOK {
			t.Fatalf("report --format %s: exit %d\n%s", format, inv.code, inv.stderr)
		}
		for _, m := range marks {
			if !strings.Contains(inv.stdout, m) {
				t.Errorf("report --format %s lacks %q:\n%s", format, m, inv.stdout)
			}
		}
	}
}
