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

// FuzzTraceRoundTrip stores a trace with arbitrary messages and
// attributes and reads it back unchanged: the conversation goes through
// the JSON the input and output columns hold, the attributes are kept
// byte for byte. Message text arrives in JSON or protobuf strings, so it
// is UTF-8; anything else is not a message a collector can receive and is
// skipped. Attributes that are not JSON must be refused, never stored.
func FuzzTraceRoundTrip(f *testing.F) {
	d := openTemp(f)
	ctx := context.Background()
	f.Add("user", "Where is my refund?", "call_1", "lookup", `{"order": 12}`, `{"route":"/refunds"}`, 2)
	f.Add("", "", "", "", "", "", 0)
	f.Add("tool", "\u2028\x00\"\\</script>", "id\u2028", "ünï", `{"q": `, `{"a": 1e999}`, 3)
	f.Add("assistant", "null", "", "f", "", `[1, "two", {"3": null}]`, 1)
	n := 0
	f.Fuzz(func(t *testing.T, role, content, callID, name, args, attrs string, count int) {
		for _, s := range []string{role, content, callID, name, args} {
			if !utf8.ValidString(s) {
				return
			}
		}
		count %= 4
		if count < 0 {
			count = -count
		}
		var msgs []record.Message
		for i := range count {
			m := record.Message{Role: role, Content: content, ToolCallID: callID, Name: name}
			for j := range i {
				m.ToolCalls = append(m.ToolCalls, record.ToolCall{ID: callID, Name: fmt.Sprint(name, j), Arguments: args})
			}
			msgs = append(msgs, m)
		}
		n++
		tr := record.Trace{
			ID: fmt.Sprint("fuzz-", n), Time: time.Unix(int64(n), 0).UTC(), Model: name,
			Input: msgs, Output: msgs, Attributes: []byte(attrs), Received: time.Unix(1, 0).UTC(),
		}
		stored, err := d.PutTraces(ctx, []record.Trace{tr})
		if err != nil {
			if _, known := d.Trace(ctx, tr.ID); known == nil {
				t.Fatalf("PutTraces failed (%v) but stored the trace", err)
			}
			return // attributes that are not JSON
		}
		if stored != 1 {
			t.Fatalf("PutTraces of a new trace stored %d", stored)
		}
		got, err := d.Trace(ctx, tr.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Input, msgs) || !reflect.DeepEqual(got.Output, msgs) {
			t.Fatalf("messages %q read back as %q / %q", msgs, got.Input, got.Output)
		}
		if string(got.Attributes) != attrs {
			t.Fatalf("attributes %q read back as %q", attrs, got.Attributes)
		}
	})
}
