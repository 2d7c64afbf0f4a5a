package scorer

import (
	"context"
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// FuzzExtractJSON: the JSON extractor never panics, stays fast on any
// input, returns only values that are valid JSON, and finds the value
// whenever the whole input is valid JSON.
func FuzzExtractJSON(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"a":2}`, "Sure:\n```json\n{\"t\": 1, \"t\": 2}\n```", `x {"o": {"k": 1}, "o": 2} y`,
		`{"a":1}`, "```json\n{\"a\": [1,2]}\n```", `Sure! {"team":"x"} hope it helps`,
		`[1, {"b": null}]`, `{"a": "}"}`, `{{{{`, "```\n```", `"str"`, `42`, ` null `,
		`see [1] then {"ok":true}`, `{"a":1}}`, "```json{\"a\":1}```", `{"a":"\u00e9\ud800"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		start := time.Now()
		v, err := ExtractJSON(s)
		if took := time.Since(start); took > time.Second {
			t.Fatalf("ExtractJSON took %v on %d bytes", took, len(s))
		}
		if err == nil {
			b, merr := json.Marshal(v)
			if merr != nil || !json.Valid(b) {
				t.Fatalf("extracted a value that is not JSON: %#v (%v)", v, merr)
			}
		} else if err.Error() == "" {
			t.Fatal("error without a message")
		}
		trimmed := strings.TrimSpace(s)
		if json.Valid([]byte(trimmed)) && utf8.ValidString(trimmed) {
			if key, _, _, dup := dataset.DuplicateKey([]byte(trimmed)); dup {
				if err == nil || !strings.Contains(err.Error(), "repeats the key") {
					t.Fatalf("JSON %q repeats key %q, but extracting gave %#v, %v", trimmed, key, v, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("valid JSON %q not extracted: %v", trimmed, err)
			}
			var want any
			dec := json.NewDecoder(strings.NewReader(trimmed))
			dec.UseNumber()
			if derr := dec.Decode(&want); derr == nil && !reflect.DeepEqual(v, want) {
				t.Fatalf("extracted %#v from valid JSON, want %#v", v, want)
			}
		}
		if !strings.ContainsAny(s, "{[") && !strings.Contains(s, "```") && err == nil && !json.Valid([]byte(trimmed)) {
			t.Fatalf("found JSON in %q, which has no brackets or fence and is not JSON", s)
		}
	})
}

// FuzzNormalize: every normaliser is total, idempotent and keeps valid
// UTF-8 valid; each does what it says; equals under any chain is reflexive.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"", " A,b\tC ", "İSTANBUL", "e\u0301", "1,234", "\u00a0x\u2003", "\xff\xfe", "ǅ", "ﬃ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, name := range Normalisers() {
			fn, _ := lookupNormaliser(name)
			once := fn(s)
			if twice := fn(once); twice != once {
				t.Fatalf("%s is not idempotent on %q: %q then %q", name, s, once, twice)
			}
			if utf8.ValidString(s) && !utf8.ValidString(once) {
				t.Fatalf("%s made invalid UTF-8 from %q", name, s)
			}
			switch name {
			case "trim":
				if once != strings.TrimFunc(once, unicode.IsSpace) {
					t.Fatalf("trim left space: %q", once)
				}
			case "no_commas":
				if strings.Contains(once, ",") {
					t.Fatalf("no_commas left a comma: %q", once)
				}
			case "collapse_spaces":
				prev := false
				for _, r := range once {
					sp := unicode.IsSpace(r)
					if sp && (prev || r != ' ') {
						t.Fatalf("collapse_spaces left %q in %q", r, once)
					}
					prev = sp
				}
			}
		}
		chain, _ := compileNormalize(Normalisers())
		if !valuesEqual(s, s, chain) {
			t.Fatalf("equals is not reflexive on %q", s)
		}
	})
}

// FuzzCEL: evaluating any expression that compiles, over any output, never
// panics, finishes within the time-out, and allocates a bounded amount.
func FuzzCEL(f *testing.F) {
	seeds := [][2]string{
		{`output.team == expected.team`, `{"team":"billing"}`},
		{`raw.contains("refund")`, `a refund`},
		{`size(raw) < 100 && raw.matches("^[a-z ]+$")`, `hello world`},
		{`raw.split(" ").all(w, w.size() < 10)`, `a bb ccc`},
		{`output.items.exists(i, i.n > 1)`, `{"items":[{"n":1},{"n":2}]}`},
		{`lists.range(100).all(i, i >= 0)`, `x`},
		{`math.greatest(1, 2) == 2 && "a,b".split(",").size() == 2`, `x`},
		{`meta.latency_ms < 1000.0 && case.tags.bucket == "edge"`, `x`},
		{`raw.split("").map(c, c + c + c).size() > 0`, `abcdefghij`},
		{`[raw, raw, raw].map(x, x + x + x + x).all(y, y.size() > 0)`, `abcdefgh`},
		{`int(output) / 0 == 1`, `7`},
		{`raw.replace("a", raw).size() > 0`, strings.Repeat("a", 4000)},
		{`raw.replace("", raw + raw).size() > 0`, strings.Repeat("ab", 2000)},
		{`lists.range(10000).map(i, raw).join(raw).size() > 0`, strings.Repeat("x", 2000)},
		{`"%s %s".format([lists.range(10000).map(i, raw), raw]).size() > 0`, strings.Repeat("y", 2000)},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, expr, raw string) {
		prg, err := compileCEL(expr)
		if err != nil {
			return
		}
		s := &celScorer{name: "fuzz", expr: expr, prg: prg}
		in := &Input{Raw: raw, Expected: map[string]any{"team": "billing", "n": 3.0}, Result: &record.Result{LatencyMS: 12, FinishReason: "stop"}}
		if v, perr := ExtractJSON(raw); perr == nil {
			in.Parsed = v
		} else {
			in.Parsed = strings.TrimSpace(raw)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		v := s.Score(context.Background(), in)
		took := time.Since(start)
		runtime.ReadMemStats(&after)
		if took > celTimeout+time.Second {
			t.Fatalf("evaluation took %v: %q", took, expr)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 512<<20 {
			t.Fatalf("evaluation allocated %d MiB: %q", alloc>>20, expr)
		}
		if v.Pass && v.Shape != ShapePass || !v.Pass && v.Shape == ShapePass {
			t.Fatalf("inconsistent verdict %+v", v)
		}
	})
}

// FuzzScore: the whole Set on hostile output never panics, keeps every
// verdict consistent and never passes empty output.
func FuzzScore(f *testing.F) {
	for _, s := range []string{"", "{}", `{"team":"billing","n":3}`, "I can't help with that", "```json\n{\"team\": 1}\n```", "A: 5", "[[[", "\x00"} {
		f.Add(s)
	}
	sp := newSpec(spec.Output{Format: "json"},
		spec.Scorer{Name: "team", Type: "field_equals", Field: "team", Primary: true},
		spec.Scorer{Name: "schema", Type: "json_schema", Schema: map[string]any{"type": "object", "required": []any{"team"}}},
		spec.Scorer{Name: "fields", Type: "required_fields", Fields: []string{"team", "n"}},
		spec.Scorer{Name: "json", Type: "is_json"},
		spec.Scorer{Name: "banned", Type: "not_contains", Values: []string{"password"}},
		spec.Scorer{Name: "rule", Type: "cel", Expr: `output.n == expected.n`, Primary: true},
		spec.Scorer{Name: "short", Type: "max_length", Max: 10000},
	)
	set, probs := Compile(sp)
	if len(probs) > 0 {
		f.Fatal(probs)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		r := &record.Result{RunID: "r", CaseID: "c", Target: "t", Raw: raw}
		scores := set.Score(context.Background(), nil, r)
		if len(scores) != len(sp.Scorers)+1 {
			t.Fatalf("%d scores", len(scores))
		}
		if r.Parsed != "" && !json.Valid([]byte(r.Parsed)) {
			t.Fatalf("Parsed is not JSON: %q", r.Parsed)
		}
		if (r.Parsed == "") == (r.ParseError == "") {
			t.Fatalf("Parsed %q and ParseError %q", r.Parsed, r.ParseError)
		}
		empty := isEmptyRaw(raw)
		for _, s := range scores {
			if s.Pass != (s.Shape == ShapePass) || s.Value < 0 || s.Value > 1 || (!s.Pass && s.Kind == "") {
				t.Fatalf("inconsistent score %+v", s)
			}
			if empty && s.Pass {
				t.Fatalf("empty output %q passed %s", raw, s.Scorer)
			}
		}
	})
}

// judgeReplySeeds are replies a judge might give, good and bad.
var judgeReplySeeds = []string{
	`{"verdict": "pass", "reason": "ok"}`, `{"verdict":"fail","score":0.2,"reason":"x"}`,
	`{"score": 0.5, "reason": "half"}`, "```json\n{\"verdict\": \"pass\", \"reason\": \"ok\"}\n```",
	`{"verdict": "fail", "reason": "a"} {"verdict": "pass", "reason": "b"}`,
	`Sure: {"verdict": "pass", "reason": "ok"}`, `{"verdict": "pass", "verdict": "fail", "reason": "r"}`,
	`{"verdict": "pass", "reason": "ok", "extra": 1}`, `{"score": 1e309, "reason": "big"}`,
	`{"score": -0, "reason": "z"}`, `{"winner": "A", "reason": "a"}`, `{"winner": "tie", "reason": "t"}`,
	"```\n{\"winner\": \"B\", \"reason\": \"b\"}\n```\n```", `{"reason": "\u0000", "verdict": "pass"}`,
	`{`, `}`, ``, "\xff{", `[{"verdict":"pass","reason":"ok"}]`, `{"Verdict": "pass", "reason": "ok"}`,
}

// unfencedForTest strips surrounding space and one ``` fence, independently
// of the parser, for the fuzz oracles below.
func unfencedForTest(reply string) string {
	s := strings.TrimSpace(reply)
	if strings.HasPrefix(s, "```") {
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = strings.TrimSuffix(s[i+1:], "```")
		}
	}
	return strings.TrimSpace(s)
}

// decodeObjectForTest decodes body when it is exactly one JSON object.
func decodeObjectForTest(t *testing.T, reply string) map[string]any {
	t.Helper()
	body := unfencedForTest(reply)
	var m map[string]any
	if !json.Valid([]byte(body)) || !strings.HasPrefix(body, "{") || json.Unmarshal([]byte(body), &m) != nil {
		t.Fatalf("accepted a reply that is not exactly one JSON object: %q", reply)
	}
	return m
}

// FuzzJudgeVerdict: the strict verdict parser never panics, and never
// accepts — let alone passes — a reply that is not exactly one object with
// only the verdict keys, a non-blank reason and a consistent grade.
func FuzzJudgeVerdict(f *testing.F) {
	for _, s := range judgeReplySeeds {
		f.Add(s, 0.5)
	}
	f.Fuzz(func(t *testing.T, reply string, threshold float64) {
		if !(threshold > 0 && threshold <= 1) {
			threshold = DefaultJudgeThreshold
		}
		v, err := parseJudgeVerdict(reply, threshold)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("error without a message")
			}
			return
		}
		m := decodeObjectForTest(t, reply)
		for k := range m {
			if k != "verdict" && k != "score" && k != "reason" {
				t.Fatalf("accepted key %q in %q", k, reply)
			}
		}
		if r, ok := m["reason"].(string); !ok || strings.TrimSpace(r) == "" {
			t.Fatalf("accepted a reply without a reason: %q", reply)
		}
		verdict, hasVerdict := m["verdict"].(string)
		score, hasScore := m["score"].(float64)
		if !hasVerdict && !hasScore {
			t.Fatalf("accepted a reply with no grade: %q", reply)
		}
		if v.value < 0 || v.value > 1 || math.IsNaN(v.value) {
			t.Fatalf("value %v from %q", v.value, reply)
		}
		wantPass := (hasVerdict && verdict == "pass") || (!hasVerdict && score >= threshold)
		if v.pass != wantPass {
			t.Fatalf("pass = %v for %q (threshold %v)", v.pass, reply, threshold)
		}
		if hasVerdict && hasScore && (verdict == "pass") != (score >= threshold) {
			t.Fatalf("accepted a verdict that contradicts the score: %q", reply)
		}
	})
}

// FuzzPairVerdict: the same for pairwise replies.
func FuzzPairVerdict(f *testing.F) {
	for _, s := range judgeReplySeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		w, reason, err := parsePairVerdict(reply)
		if err != nil {
			return
		}
		m := decodeObjectForTest(t, reply)
		if len(m) != 2 || m["winner"] != w || m["reason"] != reason || strings.TrimSpace(reason) == "" {
			t.Fatalf("accepted %q as winner %q reason %q", reply, w, reason)
		}
		if w != "A" && w != "B" && w != "tie" {
			t.Fatalf("winner %q", w)
		}
	})
}

// FuzzStrictJSON: output.strict accepts exactly the outputs the tolerant
// parser takes whole (note ""), with the same value; whatever the tolerant
// parser needed a fence or prose for, strict refuses and says which. The
// note is one of the three it may be.
func FuzzStrictJSON(f *testing.F) {
	for _, s := range []string{
		`{"a":1}`, "```json\n{\"a\": 1}\n```", `Here: {"a": 1}`, `{"a": 1} done`, ` [1] `,
		`{"a":1,"a":2}`, `nope`, "```\n{\"a\":1,\"a\":1}\n```", `{"a": 1}{"b": 2}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lv, note, lerr := extractJSON(s, false)
		sv, snote, serr := extractJSON(s, true)
		if snote != "" {
			t.Fatalf("strict parse noted %q", snote)
		}
		switch note {
		case "", NoteFenced, NoteProse:
		default:
			t.Fatalf("note %q", note)
		}
		if lerr != nil && note != "" {
			t.Fatalf("a failed parse noted %q", note)
		}
		switch {
		case lerr == nil && note == "":
			if serr != nil || !reflect.DeepEqual(lv, sv) {
				t.Fatalf("strict gave %#v, %v where the whole output %q is one value %#v", sv, serr, s, lv)
			}
		case lerr == nil:
			if serr == nil {
				t.Fatalf("strict accepted %q, which needed %s tolerance", s, note)
			}
			want := "text before or after it"
			if note == NoteFenced {
				want = "fence"
			}
			if !strings.Contains(serr.Error(), want) {
				t.Fatalf("strict error %q on a %s output does not say %q", serr, note, want)
			}
		default:
			if serr == nil {
				t.Fatalf("strict accepted %q, which the tolerant parser refused (%v)", s, lerr)
			}
		}
	})
}

// FuzzParseDecimal: parseDecimal reads exactly the literals math/big reads
// (for exponents big.Rat can afford), with the same value, and two
// literals are equal as decimals exactly when big.Rat says so; a decimal
// prints as a literal that reads back as itself.
func FuzzParseDecimal(f *testing.F) {
	for _, s := range [][2]string{{"12442.0", "12442"}, {"1.50", "1.5"}, {"9007199254740993", "9007199254740992"},
		{"-0", "0e5"}, {"1e3", "1000.000"}, {".5", "5e-1"}, {"+7", "7."}, {"1e", "x"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		da, okA := parseDecimal(a)
		db, okB := parseDecimal(b)
		for _, c := range []struct {
			s  string
			d  decimal
			ok bool
		}{{a, da, okA}, {b, db, okB}} {
			if !c.ok {
				continue
			}
			if back, ok := parseDecimal(c.d.String()); !ok || back != c.d {
				t.Fatalf("%q reads as %+v, prints %q, reads back as %+v", c.s, c.d, c.d.String(), back)
			}
			if c.d.exp > 300 || c.d.exp < -300 || len(c.s) > 400 {
				continue
			}
			r, ok := new(big.Rat).SetString(strings.TrimPrefix(c.s, "+"))
			got, inRange := c.d.rat()
			if !ok || !inRange || r.Cmp(got) != 0 {
				t.Fatalf("%q: decimal %v, big.Rat %v (%v)", c.s, got, r, ok)
			}
		}
		if okA && okB && da.exp < 300 && da.exp > -300 && db.exp < 300 && db.exp > -300 {
			ra, _ := da.rat()
			rb, _ := db.rat()
			if (da == db) != (ra.Cmp(rb) == 0) {
				t.Fatalf("%q == %q is %v as decimals, %v as rationals", a, b, da == db, ra.Cmp(rb) == 0)
			}
		}
	})
}

// FuzzValuesEqual: comparing decoded JSON values is symmetric, every value
// equals itself and its re-encoding, and a failure message never panics and
// never prints both sides alike without saying more.
func FuzzValuesEqual(f *testing.F) {
	for _, s := range [][2]string{{`12442.0`, `12442`}, {`{"a": [1.50, "x"]}`, `{"a": [1.5, "x"]}`},
		{`9007199254740993`, `9007199254740992`}, {`"1.5"`, `1.5`}, {`true`, `"true"`}, {`null`, `"null"`}} {
		f.Add(s[0], s[1])
	}
	decode := func(s string) (any, bool) {
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		var v any
		return v, dec.Decode(&v) == nil
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		va, okA := decode(a)
		vb, okB := decode(b)
		if !okA || !okB {
			return
		}
		if valuesEqual(va, vb, nil) != valuesEqual(vb, va, nil) {
			t.Fatalf("valuesEqual(%s, %s) is not symmetric", a, b)
		}
		if !valuesEqual(va, va, nil) {
			t.Fatalf("%s does not equal itself", a)
		}
		if enc, err := json.Marshal(canonical(va)); err == nil {
			if back, ok := decode(string(enc)); !ok || !valuesEqual(va, back, nil) {
				t.Fatalf("%s re-encoded as %s is another value", a, enc)
			}
		}
		if !valuesEqual(va, vb, nil) {
			msg := mismatch(va, vb, nil)
			if quote(va) == quote(vb) && !strings.Contains(msg, "(") && !strings.Contains(msg, ";") {
				t.Fatalf("%s vs %s: %q says nothing beyond two equal prints", a, b, msg)
			}
		}
	})
}
