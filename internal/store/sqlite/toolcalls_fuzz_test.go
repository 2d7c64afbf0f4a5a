package sqlite

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/assay-eval/assay/internal/record"
)

// FuzzToolCallsRoundTrip stores a result with arbitrary tool calls and
// reads them back unchanged. Calls arrive from JSON (every provider's wire,
// exec's stdout, a replay file), so their text is UTF-8; anything else is
// not a call a provider can return and is skipped.
func FuzzToolCallsRoundTrip(f *testing.F) {
	d := openTemp(f)
	ctx := context.Background()
	if err := d.CreateRun(ctx, &record.Run{ID: "r", Status: record.StatusRunning, Started: time.Unix(1000, 0)}); err != nil {
		f.Fatal(err)
	}
	f.Add("c1", "lookup", `{"q": "x"}`, 2)
	f.Add("", "f", `{"q": `, 1)
	f.Add("", "", "", 0)
	f.Add("id\u2028", "ünï", "\x00\"\\", 3)
	n := 0
	f.Fuzz(func(t *testing.T, id, name, args string, count int) {
		if !utf8.ValidString(id + name + args) {
			return
		}
		count = count % 5
		if count < 0 {
			count = -count
		}
		var calls []record.ToolCall
		for i := range count {
			calls = append(calls, record.ToolCall{ID: id, Name: fmt.Sprint(name, i), Arguments: args})
		}
		n++
		r := record.Result{RunID: "r", CaseID: fmt.Sprint(n), Target: "t", Epoch: 1, ToolCalls: calls}
		if err := d.PutResults(ctx, []record.Result{r}, nil); err != nil {
			t.Fatal(err)
		}
		got, err := d.Result(ctx, "r", r.Key())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.ToolCalls, calls) {
			t.Fatalf("tool calls %q read back as %q", calls, got.ToolCalls)
		}
	})
}
