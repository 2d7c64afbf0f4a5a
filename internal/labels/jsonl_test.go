package labels

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
)

const required = ` is required: a label names the run, case, target, epoch and output_hash it judged, and its labeler`

// Every bad-input fixture in testdata is refused with exactly these
// problems, each at FILE:LINE:COL (columns count characters).
var badFiles = map[string][]string{
	"unknown-field.bad.jsonl": {
		`unknown-field.bad.jsonl:1:153: unknown field "colour"; a label's fields are: run_id, case_id, target, epoch, output_hash, queue, labeler, verdict, reason, corrected, created`,
	},
	"bad-verdict.bad.jsonl": {
		`bad-verdict.bad.jsonl:1:113: "verdict" is "maybe"; valid verdicts are: pass, fail, skip`,
	},
	"fail-without-reason.bad.jsonl": {
		`fail-without-reason.bad.jsonl:1:113: a fail needs a "reason": what is wrong with the output`,
		`fail-without-reason.bad.jsonl:2:129: a fail needs a "reason": what is wrong with the output`,
	},
	"missing-keys.bad.jsonl": {
		`missing-keys.bad.jsonl:1:1: "run_id"` + required,
		`missing-keys.bad.jsonl:1:1: "case_id"` + required,
		`missing-keys.bad.jsonl:1:1: "target"` + required,
		`missing-keys.bad.jsonl:1:1: "output_hash"` + required,
	},
	"wrong-types.bad.jsonl": {
		`wrong-types.bad.jsonl:1:52: "epoch": want a whole number, got the string "1"`,
		`wrong-types.bad.jsonl:1:70: "output_hash" is "XYZ"; want the 16 lowercase hex digits of the labeled output's hash`,
	},
	"bad-epoch-and-time.bad.jsonl": {
		`bad-epoch-and-time.bad.jsonl:2:52: "epoch" is 0; epochs are numbered from 1`,
		`bad-epoch-and-time.bad.jsonl:2:130: "created": want an RFC 3339 time such as "2026-12-03T15:04:05Z", got "yesterday"`,
	},
	"syntax.bad.jsonl": {
		`syntax.bad.jsonl:1:31: invalid JSON: the line ends before the label's object does`,
		`syntax.bad.jsonl:2:1: want a JSON object (one label per line), got a JSON array`,
		`syntax.bad.jsonl:3:1: want a JSON object (one label per line), got the string "label"`,
		`syntax.bad.jsonl:4:16: unexpected data after the label's object (one label per line)`,
		`syntax.bad.jsonl:5:120: "verdict" is given twice`,
		`syntax.bad.jsonl:6:12: invalid JSON: invalid character 'r' looking for beginning of value`,
	},
	"unicode-column.bad.jsonl": {
		`unicode-column.bad.jsonl:1:147: "queue": want a string, got null`,
	},
}

func TestReadBadFiles(t *testing.T) {
	paths, err := filepath.Glob("testdata/*.bad.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != len(badFiles) {
		t.Errorf("%d bad fixtures in testdata, %d in the table: every fixture needs its expected messages", len(paths), len(badFiles))
	}
	for _, p := range paths {
		name := filepath.Base(p)
		t.Run(name, func(t *testing.T) {
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			calls := 0
			err = Read(f, name, func(record.Label) error { calls++; return nil })
			if err == nil {
				t.Fatal("Read accepted a bad file")
			}
			if got, want := err.Error(), strings.Join(badFiles[name], "\n"); got != want {
				t.Errorf("Read:\n%s\nwant:\n%s", got, want)
			}
			var e *Error
			if !errors.As(err, &e) || e.File != name {
				t.Errorf("the problems are not *Error naming the file: %#v", err)
			}
		})
	}
}

func testLabels() []record.Label {
	at := time.Date(2026, 12, 3, 15, 4, 5, 123456789, time.FixedZone("CET", 3600))
	return []record.Label{
		{RunID: "r1", CaseID: "c1", Target: "a", Epoch: 1, OutputHash: "00ff00ff00ff00ff", Queue: "first", Labeler: "ann", Verdict: record.LabelPass, Created: at},
		{RunID: "r1", CaseID: "c\u202e2", Target: "b", Epoch: 2, OutputHash: "0123456789abcdef", Labeler: "bob", Verdict: record.LabelFail,
			Reason: "says </script><script>alert(1)</script>\nand more", Corrected: "{\"label\":\"billing\"}\x00", Created: at.Add(time.Second)},
		{RunID: "r2", CaseID: "c3", Target: "a", Epoch: 1, OutputHash: "ffffffffffffffff", Queue: "q", Labeler: "ann", Verdict: record.LabelSkip},
	}
}

// What Write writes Read reads back as the same labels, one line each.
func TestWriteReadRoundTrip(t *testing.T) {
	want := testLabels()
	var buf bytes.Buffer
	if err := Write(&buf, want); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "\n"); n != len(want) {
		t.Errorf("Write wrote %d lines for %d labels", n, len(want))
	}
	var got []record.Label
	if err := Read(&buf, "labels.jsonl", func(l record.Label) error { got = append(got, l); return nil }); err != nil {
		t.Fatalf("Read of Write's output: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("read %d labels; want %d", len(got), len(want))
	}
	for i := range want {
		if !got[i].Created.Equal(want[i].Created) {
			t.Errorf("label %d created %v; want %v", i, got[i].Created, want[i].Created)
		}
		got[i].Created, want[i].Created = time.Time{}, time.Time{}
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("label %d read back as %+v; want %+v", i, got[i], want[i])
		}
	}
}

// The written lines have the fields in the documented order, with the
// optional ones left out when empty.
func TestWriteFormat(t *testing.T) {
	var buf bytes.Buffer
	l := testLabels()[2]
	if err := Write(&buf, []record.Label{l}); err != nil {
		t.Fatal(err)
	}
	want := `{"run_id":"r2","case_id":"c3","target":"a","epoch":1,"output_hash":"ffffffffffffffff","queue":"q","labeler":"ann","verdict":"skip","created":"0001-01-01T00:00:00Z"}` + "\n"
	if buf.String() != want {
		t.Errorf("Write:\n%s\nwant:\n%s", buf.String(), want)
	}
}

// A good file with blank lines, CRLF line ends and a byte-order mark reads.
func TestReadTolerates(t *testing.T) {
	in := "\xef\xbb\xbf" + `{"run_id":"r","case_id":"c","target":"t","epoch":1,"output_hash":"00ff00ff00ff00ff","labeler":"l","verdict":"pass"}` + "\r\n\r\n  \n" +
		`{"run_id":"r","case_id":"d","target":"t","epoch":1,"output_hash":"00ff00ff00ff00ff","labeler":"l","verdict":"skip"}`
	var n int
	if err := Read(strings.NewReader(in), "f", func(record.Label) error { n++; return nil }); err != nil || n != 2 {
		t.Errorf("Read: %d labels, %v; want 2, nil", n, err)
	}
}

// fn is called for the good labels before the first problem only, and an
// error from fn stops the reading.
func TestReadCallsAndStops(t *testing.T) {
	good := `{"run_id":"r","case_id":"c","target":"t","epoch":1,"output_hash":"00ff00ff00ff00ff","labeler":"l","verdict":"pass"}`
	in := good + "\n{}\n" + good + "\n"
	var n int
	err := Read(strings.NewReader(in), "f", func(record.Label) error { n++; return nil })
	if err == nil || n != 1 {
		t.Errorf("Read: fn called %d times, %v; want once (the line before the bad one) and an error", n, err)
	}
	stop := errors.New("full")
	if err := Read(strings.NewReader(good+"\n"+good), "f", func(record.Label) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("fn's error: Read returned %v", err)
	}
}

// A line over the bound is a problem at its line, never held; a file of
// many bad lines reports the first 50 and says it stopped.
func TestReadBounds(t *testing.T) {
	long := `{"reason":"` + strings.Repeat("x", MaxLineBytes) + `"}`
	err := Read(strings.NewReader("\n"+long+"\n"), "big.jsonl", func(record.Label) error { return nil })
	if want := fmt.Sprintf("big.jsonl:2:1: the line is longer than %d MiB; a label is one line", MaxLineBytes>>20); err == nil || err.Error() != want {
		t.Errorf("Read of a long line: %v; want %s", err, want)
	}
	err = Read(strings.NewReader(strings.Repeat("[]\n", 80)), "many.jsonl", func(record.Label) error { return nil })
	msgs := strings.Split(err.Error(), "\n")
	if len(msgs) != 51 || msgs[49] != "many.jsonl:50:1: want a JSON object (one label per line), got a JSON array" || msgs[50] != "many.jsonl: stopped after 50 problems" {
		t.Errorf("Read of 80 bad lines: %d messages, the last %q", len(msgs), msgs[len(msgs)-1])
	}
}

func TestCheck(t *testing.T) {
	ok := testLabels()[1]
	if err := Check(&ok); err != nil {
		t.Errorf("Check of a good fail: %v", err)
	}
	for _, tc := range []struct {
		edit func(*record.Label)
		want string
	}{
		{func(l *record.Label) { l.Verdict = "" }, `"verdict" is required; valid verdicts are: pass, fail, skip`},
		{func(l *record.Label) { l.Verdict = "PASS" }, `"verdict" is "PASS"; valid verdicts are: pass, fail, skip`},
		{func(l *record.Label) { l.Reason = "\t\n" }, `a fail needs a "reason": what is wrong with the output`},
		{func(l *record.Label) { l.Labeler = "" }, `"labeler"` + required},
		{func(l *record.Label) { l.OutputHash = "00FF00FF00FF00FF" }, `"output_hash" is "00FF00FF00FF00FF"; want the 16 lowercase hex digits of the labeled output's hash`},
		{func(l *record.Label) { l.Epoch = -1; l.RunID = "" }, `"run_id"` + required + "\n" + `"epoch" is -1; epochs are numbered from 1`},
	} {
		l := ok
		tc.edit(&l)
		if err := Check(&l); err == nil || err.Error() != tc.want {
			t.Errorf("Check: %v\nwant: %s", err, tc.want)
		}
	}
}

// FuzzRead: Read never panics, every problem names the file and a line and
// column inside the input, and every label it accepts passes Check and
// survives Write and Read unchanged.
func FuzzRead(f *testing.F) {
	var buf bytes.Buffer
	_ = Write(&buf, testLabels())
	f.Add(buf.String())
	for name := range badFiles {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add(`{"run_id":"r","case_id":"c","target":"t","epoch":1e0,"output_hash":"00ff00ff00ff00ff","labeler":"l","verdict":"fail","reason":"\ud800"}`)
	f.Fuzz(func(t *testing.T, in string) {
		var got []record.Label
		err := Read(strings.NewReader(in), "fuzz.jsonl", func(l record.Label) error { got = append(got, l); return nil })
		lines := strings.Count(in, "\n") + 1
		for _, e := range unjoin(err) {
			var pe *Error
			if errors.As(e, &pe) {
				if pe.File != "fuzz.jsonl" || pe.Line < 1 || pe.Line > lines || pe.Col < 1 {
					t.Errorf("problem out of place: %v", pe)
				}
			} else if !strings.HasPrefix(e.Error(), "fuzz.jsonl: ") {
				t.Errorf("problem without the file's name: %v", e)
			}
		}
		for i := range got {
			if err := Check(&got[i]); err != nil {
				t.Errorf("Read accepted a label Check refuses: %v", err)
			}
		}
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := Write(&out, got); err != nil {
			t.Fatal(err)
		}
		var again []record.Label
		if err := Read(&out, "again", func(l record.Label) error { again = append(again, l); return nil }); err != nil {
			t.Fatalf("Read of Write's output: %v", err)
		}
		if len(again) != len(got) {
			t.Fatalf("%d labels read back; want %d", len(again), len(got))
		}
		for i := range got {
			if !again[i].Created.Equal(got[i].Created) {
				t.Errorf("created %v read back as %v", got[i].Created, again[i].Created)
			}
			again[i].Created, got[i].Created = time.Time{}, time.Time{}
			if again[i] != got[i] {
				t.Errorf("label %+v read back as %+v", got[i], again[i])
			}
		}
	})
}

func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
