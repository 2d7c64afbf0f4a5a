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

// TestReportShowsAgentTurns: an agent loop against assay mock where one
// model takes three turns (look the order up, refund it, answer) and the
// other two (refund, answer); the report's turns, calls and cost per case
// are the stored trajectories' own, and the two are compared on turns.
func TestReportShowsAgentTurns(t *testing.T) {
	_, url := startMock(t, mock.Options{ToolTurns: 2, Rules: []mock.Rule{
		{Match: "Refund order", Model: "careful", Turn: 1, ToolCalls: []mock.ToolCall{{Name: "lookup_order", Arguments: `{"id": 7}`}}},
		{Match: "Refund order", Model: "careful", Turn: 2, ToolCalls: []mock.ToolCall{{Name: "refund", Arguments: `{"id": 7}`}}},
		{Match: "Refund order", Model: "hasty", Turn: 1, ToolCalls: []mock.ToolCall{{Name: "refund", Arguments: `{"id": 7}`}}},
		{Match: "Refund order", Model: "hasty", Turn: 2, Reply: "Done."},
	}})
	dir := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&b, `{"id":"c%d","ask":"Refund order %d","want":["lookup_order","refund"]}`+"\n", i, i)
	}
	writeFile(t, filepath.Join(dir, "cases.jsonl"), b.String())
	spec := filepath.Join(dir, "agent.yaml")
	target := func(name string) string {
		return fmt.Sprintf("  - {name: %s, provider: openai, model: %s, base_url: %q, api_key_env: MOCK_KEY, price: {input_per_mtok: 1, output_per_mtok: 4}}\n", name, name, url+"/v1")
	}
	writeFile(t, spec, `name: agent
dataset: {path: cases.jsonl, id: id, expected: want}
prompt: {user: "{{.ask}}"}
tools:
  - {name: lookup_order, parameters: {type: object, properties: {id: {type: integer}}}}
  - {name: refund, parameters: {type: object, properties: {id: {type: integer}}}}
agent:
  max_turns: 5
  tools:
    lookup_order: {mock: {result: found}}
    refund: {mock: {result: refunded}}
targets:
`+target("careful")+target("hasty")+`scorers:
  - {name: plan, type: tool_calls, match: in_order}
`)
	e := cliEnv{env: map[string]string{"MOCK_KEY": "x"}}
	db := filepath.Join(dir, "agent.db")
	if inv := runCLI(t, e, "run", spec, "--db", db); inv.code != ExitOK {
		t.Fatalf("run: exit %d\n%s\n%s", inv.code, inv.stdout, inv.stderr)
	}
	inv := runCLI(t, e, "report", "latest", "--spec", spec, "--db", db, "--format", "json")
	if inv.code != ExitOK {
		t.Fatalf("report: exit %d\n%s", inv.code, inv.stderr)
	}
	var rep struct {
		Run   struct{ ID string } `json:"run"`
		Calls struct {
			Agent   bool `json:"agent"`
			Targets []struct {
				Target    string `json:"target"`
				Selection []struct {
					Field  string `json:"field"`
					Passed int    `json:"passed"`
				} `json:"tool_selection"`
				Calls struct{ Mean float64 } `json:"calls_per_case"`
				Turns *struct {
					Mean float64 `json:"mean"`
					N    int     `json:"n"`
				} `json:"turns_per_case"`
				Cost struct{ Mean float64 } `json:"cost_per_trajectory"`
			} `json:"targets"`
			Measures []struct {
				Measure, A, B, Verdict string
				N                      int
				Delta                  float64
			} `json:"measure_comparisons"`
		} `json:"calls"`
	}
	if err := json.Unmarshal([]byte(inv.stdout), &rep); err != nil {
		t.Fatalf("report JSON: %v\n%s", err, inv.stdout)
	}
	// The test's own means, from the stored trajectories.
	type sums struct{ n, turns, calls, price float64 }
	own := map[string]*sums{}
	for _, r := range storedResults(t, db, rep.Run.ID) {
		s := own[r.Target]
		if s == nil {
			s = &sums{}
			own[r.Target] = s
		}
		s.n++
		s.turns += float64(len(r.Turns))
		s.calls += float64(len(r.ToolCalls))
		s.price += r.CostUSD + r.SavedUSD
	}
	if !rep.Calls.Agent || len(rep.Calls.Targets) != 2 {
		t.Fatalf("calls section: agent %v, %d targets:\n%s", rep.Calls.Agent, len(rep.Calls.Targets), inv.stdout)
	}
	wantTurns := map[string]float64{"careful": 3, "hasty": 2}
	for _, got := range rep.Calls.Targets {
		s := own[got.Target]
		if s == nil || got.Turns == nil {
			t.Fatalf("%s: stored %+v, turns %+v", got.Target, s, got.Turns)
		}
		if got.Turns.Mean != s.turns/s.n || got.Turns.Mean != wantTurns[got.Target] || got.Turns.N != 8 {
			t.Errorf("%s: %v turns per case over %d; stored %v, the mock scripts %v", got.Target, got.Turns.Mean, got.Turns.N, s.turns/s.n, wantTurns[got.Target])
		}
		if math.Abs(got.Calls.Mean-s.calls/s.n) > 1e-9 || math.Abs(got.Cost.Mean-s.price/s.n) > 1e-9 {
			t.Errorf("%s: calls %v, cost %v per case; stored %v, %v", got.Target, got.Calls.Mean, got.Cost.Mean, s.calls/s.n, s.price/s.n)
		}
		if len(got.Selection) != 1 || got.Selection[0].Field != "(tools)" {
			t.Errorf("%s: tool choice %+v; want tool_calls' (tools) field", got.Target, got.Selection)
		}
	}
	found := false
	for _, m := range rep.Calls.Measures {
		if m.Measure == "turns_per_case" {
			found = true
			if m.A != "careful" || m.B != "hasty" || m.N != 8 || m.Delta != 1 || m.Verdict != "a_higher" {
				t.Errorf("turns compared: %+v; want careful − hasty = 1 on 8 cases, careful higher", m)
			}
		}
	}
	if !found {
		t.Errorf("no turns comparison: %+v", rep.Calls.Measures)
	}
	text := runCLI(t, e, "report", "latest", "--spec", spec, "--db", db)
	if !strings.Contains(text.stdout, "turns/case") || !strings.Contains(text.stdout, "3.00") {
		t.Errorf("text report lacks turns per case:\n%s", text.stdout)
	}
}
