package mock

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// start runs a server for the test and returns its root URL.
func start(t *testing.T, opts Options) (*Server, string) {
	t.Helper()
	s := New(opts)
	base, err := s.Start()
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(s.Close)
	return s, base
}

func post(t *testing.T, url, body string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readJSON(t *testing.T, resp *http.Response, v any) {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading body: %v", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("body is not the expected JSON: %v\n%s", err, b)
	}
}

type chatCompletion struct {
	ID                string `json:"id"`
	Object            string `json:"object"`
	Model             string `json:"model"`
	SystemFingerprint string `json:"system_fingerprint"`
	Choices           []struct {
		Message struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"message"`
		Delta struct {
			Content *string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		TotalTokens         int `json:"total_tokens"`
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

type openAIError struct {
	Error *struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

type anthropicError struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

type anthropicMessage struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Role    string `json:"role"`
	Model   string `json:"model"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StopReason   *string `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
	Usage        struct {
		InputTokens          int `json:"input_tokens"`
		OutputTokens         int `json:"output_tokens"`
		CacheReadInputTokens int `json:"cache_read_input_tokens"`
	} `json:"usage"`
}

const chatBody = `{"model":"gpt-test","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"what is two plus two"}]}`

func TestChatCompletionPlain(t *testing.T) {
	_, base := start(t, Options{})
	resp := post(t, base+"/v1/chat/completions", chatBody)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d, want 200", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	var cc chatCompletion
	readJSON(t, resp, &cc)
	if !strings.HasPrefix(cc.ID, "chatcmpl-") || cc.Object != "chat.completion" {
		t.Errorf("id %q object %q: want a chatcmpl- id and object chat.completion", cc.ID, cc.Object)
	}
	if cc.Model != "gpt-test" || cc.SystemFingerprint != "fp_mock" {
		t.Errorf("model %q fingerprint %q: want the requested model echoed and fp_mock", cc.Model, cc.SystemFingerprint)
	}
	if len(cc.Choices) != 1 {
		t.Fatalf("%d choices, want 1", len(cc.Choices))
	}
	ch := cc.Choices[0]
	if ch.Message.Role != "assistant" || ch.Message.Content != "what is two plus two" {
		t.Errorf("message %+v: want the last user message echoed by the assistant", ch.Message)
	}
	if ch.FinishReason == nil || *ch.FinishReason != "stop" {
		t.Errorf("finish_reason %v, want stop", ch.FinishReason)
	}
	// 2 words of system + 5 of user; 5 words of reply.
	if u := cc.Usage; u == nil || u.PromptTokens != 7 || u.CompletionTokens != 5 || u.TotalTokens != 12 || u.PromptTokensDetails.CachedTokens != 0 {
		t.Errorf("usage %+v, want prompt 7, completion 5, total 12, cached 0", cc.Usage)
	}
}

func TestRepliesFollowRulesThenDefaultThenEcho(t *testing.T) {
	rules := []Rule{{Match: "capital", Reply: "Paris"}, {Match: "France", Reply: "never chosen: an earlier rule matched"}}
	tests := []struct {
		name    string
		def     string
		user    string
		want    string
		wantOut int
	}{
		{"first matching rule", "", "the capital of France", "Paris", 1},
		{"second rule", "", "France", "never chosen: an earlier rule matched", 6},
		{"default", "I do not know", "hello", "I do not know", 4},
		{"echo", "", "say this back", "say this back", 3},
		{"empty echo still costs a token", "", "", "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, base := start(t, Options{Rules: rules, Default: tt.def})
			body, _ := json.Marshal(map[string]any{"model": "m", "messages": []map[string]string{{"role": "user", "content": tt.user}}})
			var cc chatCompletion
			readJSON(t, post(t, base+"/v1/chat/completions", string(body)), &cc)
			if got := cc.Choices[0].Message.Content; got != tt.want {
				t.Errorf("reply %q, want %q", got, tt.want)
			}
			if cc.Usage.CompletionTokens != tt.wantOut {
				t.Errorf("completion_tokens %d, want %d", cc.Usage.CompletionTokens, tt.wantOut)
			}
		})
	}
}

func TestContentPartsAndCachedSystem(t *testing.T) {
	_, base := start(t, Options{CacheSystem: true})
	body := `{"model":"m","messages":[{"role":"system","content":"one two three"},{"role":"user","content":[{"type":"text","text":"alpha "},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"beta"}]}]}`
	var cc chatCompletion
	readJSON(t, post(t, base+"/v1/chat/completions", body), &cc)
	if got := cc.Choices[0].Message.Content; got != "alpha beta" {
		t.Errorf("reply %q, want the text parts joined: %q", got, "alpha beta")
	}
	if u := cc.Usage; u.PromptTokens != 5 || u.PromptTokensDetails.CachedTokens != 3 {
		t.Errorf("usage %+v, want prompt 5 with the 3 system tokens cached", u)
	}
}

func TestMaxTokensAndStop(t *testing.T) {
	_, base := start(t, Options{Default: "one two three four five. six"})
	tests := []struct {
		name, extra, want, finish string
	}{
		{"max_tokens cuts", `"max_tokens":2`, "one two", "length"},
		{"max_completion_tokens cuts", `"max_completion_tokens":3`, "one two three", "length"},
		{"enough tokens", `"max_tokens":6`, "one two three four five. six", "stop"},
		{"stop string", `"stop":"."`, "one two three four five", "stop"},
		{"earliest stop wins", `"stop":["four","two"]`, "one ", "stop"},
		{"stop before the token limit", `"stop":["three"],"max_tokens":4`, "one two ", "stop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"model":"m","messages":[{"role":"user","content":"x"}],` + tt.extra + `}`
			var cc chatCompletion
			readJSON(t, post(t, base+"/v1/chat/completions", body), &cc)
			if got := cc.Choices[0].Message.Content; got != tt.want {
				t.Errorf("reply %q, want %q", got, tt.want)
			}
			if got := *cc.Choices[0].FinishReason; got != tt.finish {
				t.Errorf("finish_reason %q, want %q", got, tt.finish)
			}
		})
	}
}

// sseEvent is one server-sent event.
type sseEvent struct {
	name string
	data string
}

func readSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var evs []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.data != "" {
				evs = append(evs, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data += strings.TrimPrefix(line, "data: ")
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading stream: %v", err)
	}
	if cur.data != "" {
		t.Fatalf("stream ended inside an event: %+v", cur)
	}
	return evs
}

func TestChatCompletionStream(t *testing.T) {
	for _, usage := range []bool{false, true} {
		t.Run(map[bool]string{false: "no usage", true: "include_usage"}[usage], func(t *testing.T) {
			_, base := start(t, Options{Default: "Hello,  streamed\nworld! "})
			body := `{"model":"m","stream":true,"stream_options":{"include_usage":` + map[bool]string{false: "false", true: "true"}[usage] + `},"messages":[{"role":"user","content":"a b c"}]}`
			resp := post(t, base+"/v1/chat/completions", body)
			if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Fatalf("Content-Type %q, want text/event-stream", ct)
			}
			evs := readSSE(t, resp.Body)
			if len(evs) == 0 || evs[len(evs)-1].data != "[DONE]" {
				t.Fatalf("stream does not end with data: [DONE]: %+v", evs)
			}
			var text strings.Builder
			var finishes []string
			var usages int
			var contentChunks int
			for _, ev := range evs[:len(evs)-1] {
				var c chatCompletion
				if err := json.Unmarshal([]byte(ev.data), &c); err != nil {
					t.Fatalf("chunk is not JSON: %v: %s", err, ev.data)
				}
				if c.Object != "chat.completion.chunk" || c.Model != "m" || c.SystemFingerprint != "fp_mock" {
					t.Errorf("chunk header: object %q model %q fingerprint %q", c.Object, c.Model, c.SystemFingerprint)
				}
				for _, ch := range c.Choices {
					if ch.Delta.Content != nil && *ch.Delta.Content != "" {
						contentChunks++
						text.WriteString(*ch.Delta.Content)
					}
					if ch.FinishReason != nil {
						finishes = append(finishes, *ch.FinishReason)
					}
				}
				if c.Usage != nil {
					usages++
					if len(c.Choices) != 0 {
						t.Errorf("the usage chunk has %d choices, want none", len(c.Choices))
					}
					if c.Usage.PromptTokens != 3 || c.Usage.CompletionTokens != 3 {
						t.Errorf("usage %+v, want prompt 3 completion 3", c.Usage)
					}
				}
			}
			if got := text.String(); got != "Hello,  streamed\nworld! " {
				t.Errorf("streamed text %q, want the reply byte for byte", got)
			}
			if contentChunks != 3 {
				t.Errorf("%d content chunks, want one per word (3)", contentChunks)
			}
			if !reflect.DeepEqual(finishes, []string{"stop"}) {
				t.Errorf("finish reasons %v, want exactly one stop", finishes)
			}
			if want := map[bool]int{false: 0, true: 1}[usage]; usages != want {
				t.Errorf("%d usage chunks, want %d", usages, want)
			}
		})
	}
}

const messagesBody = `{"model":"claude-test","max_tokens":100,"system":"be brief","messages":[{"role":"user","content":[{"type":"text","text":"name a colour"}]}]}`

func TestMessagesPlain(t *testing.T) {
	_, base := start(t, Options{CacheSystem: true})
	resp := post(t, base+"/v1/messages", messagesBody)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d, want 200", resp.StatusCode)
	}
	var m anthropicMessage
	readJSON(t, resp, &m)
	if !strings.HasPrefix(m.ID, "msg_") || m.Type != "message" || m.Role != "assistant" || m.Model != "claude-test" {
		t.Errorf("header %+v: want a msg_ id, type message, role assistant, the requested model", m)
	}
	if len(m.Content) != 1 || m.Content[0].Type != "text" || m.Content[0].Text != "name a colour" {
		t.Errorf("content %+v, want one text block echoing the user", m.Content)
	}
	if m.StopReason == nil || *m.StopReason != "end_turn" || m.StopSequence != nil {
		t.Errorf("stop_reason %v stop_sequence %v, want end_turn and null", m.StopReason, m.StopSequence)
	}
	// 2 system words cached, 3 user words not; input_tokens excludes the cache.
	if u := m.Usage; u.InputTokens != 3 || u.CacheReadInputTokens != 2 || u.OutputTokens != 3 {
		t.Errorf("usage %+v, want input 3, cache read 2, output 3", u)
	}
}

func TestMessagesStopReasons(t *testing.T) {
	_, base := start(t, Options{Default: "red green blue"})
	for _, tt := range []struct{ extra, text, reason, seq string }{
		{`"max_tokens":2`, "red green", "max_tokens", ""},
		{`"max_tokens":10,"stop_sequences":["blue"]`, "red green ", "stop_sequence", "blue"},
	} {
		var m anthropicMessage
		readJSON(t, post(t, base+"/v1/messages", `{"model":"c","messages":[{"role":"user","content":"x"}],`+tt.extra+`}`), &m)
		if m.Content[0].Text != tt.text || *m.StopReason != tt.reason {
			t.Errorf("%s: text %q reason %q, want %q %q", tt.extra, m.Content[0].Text, *m.StopReason, tt.text, tt.reason)
		}
		if tt.seq != "" && (m.StopSequence == nil || *m.StopSequence != tt.seq) {
			t.Errorf("%s: stop_sequence %v, want %q", tt.extra, m.StopSequence, tt.seq)
		}
	}
}

func TestMessagesStream(t *testing.T) {
	_, base := start(t, Options{Default: "one two three"})
	body := strings.Replace(messagesBody, `"max_tokens":100`, `"max_tokens":100,"stream":true`, 1)
	evs := readSSE(t, post(t, base+"/v1/messages", body).Body)
	var names []string
	var text strings.Builder
	for _, ev := range evs {
		names = append(names, ev.name)
		var d struct {
			Type    string `json:"type"`
			Message struct {
				Model string `json:"model"`
				Usage struct {
					InputTokens int `json:"input_tokens"`
				} `json:"usage"`
			} `json:"message"`
			Delta struct {
				Type       string `json:"type"`
				Text       string `json:"text"`
				StopReason string `json:"stop_reason"`
			} `json:"delta"`
			Usage struct {
				OutputTokens int `json:"output_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(ev.data), &d); err != nil {
			t.Fatalf("event %s data is not JSON: %v", ev.name, err)
		}
		if d.Type != ev.name {
			t.Errorf("event %q carries type %q; they must agree", ev.name, d.Type)
		}
		switch ev.name {
		case "message_start":
			if d.Message.Model != "claude-test" || d.Message.Usage.InputTokens != 5 {
				t.Errorf("message_start %+v: want the model and input_tokens 5", d.Message)
			}
		case "content_block_delta":
			if d.Delta.Type != "text_delta" {
				t.Errorf("delta type %q, want text_delta", d.Delta.Type)
			}
			text.WriteString(d.Delta.Text)
		case "message_delta":
			if d.Delta.StopReason != "end_turn" || d.Usage.OutputTokens != 3 {
				t.Errorf("message_delta: stop_reason %q output_tokens %d, want end_turn 3", d.Delta.StopReason, d.Usage.OutputTokens)
			}
		}
	}
	want := []string{"message_start", "content_block_start", "ping", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("events %v\nwant   %v", names, want)
	}
	if text.String() != "one two three" {
		t.Errorf("streamed text %q, want %q", text.String(), "one two three")
	}
}

func TestInjectedErrorsHaveEachAPIsShape(t *testing.T) {
	tests := []struct {
		name      string
		opts      Options
		status    int
		openAI    string // error.type
		anthropic string // error.type
		count     func(Stats) int64
	}{
		{"fail", Options{Fail: 1}, 500, "server_error", "api_error", func(s Stats) int64 { return s.Fail }},
		{"overload", Options{Overload: 1}, 529, "overloaded_error", "overloaded_error", func(s Stats) int64 { return s.Overload }},
		{"wrong key", Options{APIKey: "right"}, 401, "invalid_request_error", "authentication_error", func(s Stats) int64 { return s.Rejected }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, base := start(t, tt.opts)
			resp := post(t, base+"/v1/chat/completions", chatBody, "Authorization", "Bearer wrong")
			if resp.StatusCode != tt.status {
				t.Fatalf("openai: status %d, want %d", resp.StatusCode, tt.status)
			}
			var oe openAIError
			readJSON(t, resp, &oe)
			if oe.Error == nil || oe.Error.Type != tt.openAI || oe.Error.Message == "" {
				t.Errorf("openai error body %+v, want error.type %q and a message", oe.Error, tt.openAI)
			}
			resp = post(t, base+"/v1/messages", messagesBody, "x-api-key", "wrong")
			if resp.StatusCode != tt.status {
				t.Fatalf("anthropic: status %d, want %d", resp.StatusCode, tt.status)
			}
			if resp.Header.Get("Request-Id") == "" {
				t.Errorf("anthropic error has no request-id header")
			}
			var ae anthropicError
			readJSON(t, resp, &ae)
			if ae.Type != "error" || ae.Error.Type != tt.anthropic || ae.Error.Message == "" {
				t.Errorf("anthropic error body %+v, want type error, error.type %q and a message", ae, tt.anthropic)
			}
			if got := tt.count(s.Stats()); got != 2 {
				t.Errorf("counter %d, want 2", got)
			}
		})
	}
}

func TestAPIKeyAcceptedInEitherHeader(t *testing.T) {
	s, base := start(t, Options{APIKey: "sk-mock"})
	if r := post(t, base+"/v1/chat/completions", chatBody, "Authorization", "Bearer sk-mock"); r.StatusCode != 200 {
		t.Errorf("Authorization: Bearer: status %d, want 200", r.StatusCode)
	}
	if r := post(t, base+"/v1/messages", messagesBody, "X-Api-Key", "sk-mock"); r.StatusCode != 200 {
		t.Errorf("x-api-key: status %d, want 200", r.StatusCode)
	}
	r := post(t, base+"/v1/messages", messagesBody)
	if r.StatusCode != 401 {
		t.Errorf("no key: status %d, want 401", r.StatusCode)
	}
	b, _ := io.ReadAll(r.Body)
	if bytes.Contains(b, []byte("sk-mock")) {
		t.Errorf("the 401 body reveals the expected key: %s", b)
	}
	if st := s.Stats(); st.OK != 2 || st.Rejected != 1 || st.Requests != 3 {
		t.Errorf("stats %+v, want 3 requests, 2 OK, 1 rejected", st)
	}
}

func TestRateLimitAnswers429WithRetryAfter(t *testing.T) {
	s, base := start(t, Options{Rate: 0.001, Burst: 2, RetryAfter: 2500 * time.Millisecond})
	for i := range 2 {
		if r := post(t, base+"/v1/chat/completions", chatBody); r.StatusCode != 200 {
			t.Fatalf("request %d within the burst: status %d, want 200", i, r.StatusCode)
		}
	}
	for _, path := range []string{"/v1/chat/completions", "/v1/messages"} {
		body := chatBody
		if path == "/v1/messages" {
			body = messagesBody
		}
		r := post(t, base+path, body)
		if r.StatusCode != 429 {
			t.Fatalf("%s over the rate: status %d, want 429", path, r.StatusCode)
		}
		if ra := r.Header.Get("Retry-After"); ra != "3" {
			t.Errorf("%s: Retry-After %q, want 3 (2.5s rounded up to whole seconds)", path, ra)
		}
		if ra := r.Header.Get("Retry-After-Ms"); ra != "2500" {
			t.Errorf("%s: retry-after-ms %q, want 2500", path, ra)
		}
	}
	if st := s.Stats(); st.RateLimit != 2 || st.OK != 2 {
		t.Errorf("stats %+v, want 2 OK and 2 rate-limited", st)
	}
}

func TestMalformedIsNotJSON(t *testing.T) {
	s, base := start(t, Options{Malformed: 1})
	for _, tc := range []struct{ path, body string }{
		{"/v1/chat/completions", chatBody},
		{"/v1/messages", messagesBody},
	} {
		r := post(t, base+tc.path, tc.body)
		b, _ := io.ReadAll(r.Body)
		if r.StatusCode != 200 || json.Valid(b) {
			t.Errorf("%s plain: status %d valid JSON %v, want 200 with a body that is not JSON", tc.path, r.StatusCode, json.Valid(b))
		}
		stream := strings.Replace(tc.body, `"model"`, `"stream":true,"model"`, 1)
		evs := readSSE(t, post(t, base+tc.path, stream).Body)
		if len(evs) == 0 || json.Valid([]byte(evs[0].data)) {
			t.Errorf("%s stream: first event %+v, want data that is not JSON", tc.path, evs)
		}
	}
	if st := s.Stats(); st.Malformed != 4 || st.OK != 0 {
		t.Errorf("stats %+v, want 4 malformed and none OK", st)
	}
}

func TestTruncatedPlainBodyEndsMidJSON(t *testing.T) {
	s, base := start(t, Options{Truncate: 1})
	for _, tc := range []struct{ path, body string }{
		{"/v1/chat/completions", chatBody},
		{"/v1/messages", messagesBody},
	} {
		r := post(t, base+tc.path, tc.body)
		b, err := io.ReadAll(r.Body)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%s: reading the body: err %v, want unexpected EOF (the declared length is not delivered)", tc.path, err)
		}
		if len(b) == 0 || json.Valid(b) {
			t.Errorf("%s: got %d bytes, valid JSON %v; want part of a JSON body", tc.path, len(b), json.Valid(b))
		}
	}
	if st := s.Stats(); st.Truncate != 2 || st.OK != 0 {
		t.Errorf("stats %+v, want 2 truncated and none OK", st)
	}
}

func TestTruncatedStreamStopsBeforeTheEnd(t *testing.T) {
	_, base := start(t, Options{Truncate: 1, Default: "w1 w2 w3 w4"})
	evs := readSSE(t, post(t, base+"/v1/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`).Body)
	var content int
	for _, ev := range evs {
		if ev.data == "[DONE]" || strings.Contains(ev.data, `"finish_reason":"`) || strings.Contains(ev.data, `"usage":{`) {
			t.Errorf("a truncated stream carries the final event %s", ev.data)
		}
		if strings.Contains(ev.data, `"delta":{"content"`) {
			content++
		}
	}
	if content != 2 {
		t.Errorf("%d content chunks, want half of the 4 words", content)
	}

	evs = readSSE(t, post(t, base+"/v1/messages", `{"model":"c","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"x"}]}`).Body)
	for _, ev := range evs {
		switch ev.name {
		case "content_block_stop", "message_delta", "message_stop":
			t.Errorf("a truncated stream carries %s", ev.name)
		}
	}
	if len(evs) == 0 || evs[0].name != "message_start" {
		t.Errorf("a truncated stream should still start: %+v", evs)
	}
}

func TestHangWaitsForTheClientAndLeavesNothingRunning(t *testing.T) {
	s, base := start(t, Options{Hang: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions", strings.NewReader(chatBody))
	began := time.Now()
	_, err := http.DefaultClient.Do(req)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want the client's deadline", err)
	}
	if d := time.Since(began); d < 150*time.Millisecond {
		t.Errorf("answered after %v; a hung request must not answer", d)
	}
	waitFor(t, func() bool { return s.Stats().InFlight == 0 }, "the hung handler to return after the client left")
	if st := s.Stats(); st.Hang != 1 {
		t.Errorf("stats %+v, want 1 hang", st)
	}
}

func TestCloseReleasesHungRequests(t *testing.T) {
	s := New(Options{Hang: 1})
	base, err := s.Start()
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		resp, err := http.Post(base+"/v1/messages", "application/json", strings.NewReader(messagesBody))
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	waitFor(t, func() bool { return s.Stats().Hang == 1 }, "the request to hang")
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(3 * time.Second):
		t.Fatal("Close did not return while a request hung")
	}
	if err := <-errc; err == nil {
		t.Error("the hung request got an answer; want the connection closed")
	}
	if n := s.Stats().InFlight; n != 0 {
		t.Errorf("%d requests still in flight after Close", n)
	}
	s.Close() // a second Close is harmless
}

func TestLatencyAndTokenDelay(t *testing.T) {
	_, base := start(t, Options{Latency: 60 * time.Millisecond, TokenDelay: 30 * time.Millisecond, Default: "a b c"})
	began := time.Now()
	resp := post(t, base+"/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`)
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	first := time.Since(began)
	if _, err := io.Copy(io.Discard, br); err != nil {
		t.Fatal(err)
	}
	total := time.Since(began)
	if first < 60*time.Millisecond {
		t.Errorf("first event after %v, want at least the 60ms latency", first)
	}
	// The server sleeps the latency and then a token delay before each
	// later event, so the last event leaves 120ms after the request at
	// the earliest. The gap after the first event is measured at the
	// client, where its own read of the first event may come late: it is
	// held to one delay, not two, so that jitter cannot fail it.
	if total < 120*time.Millisecond {
		t.Errorf("the stream ended %v after the request, want at least the 60ms latency and 2 token delays of 30ms", total)
	}
	if total-first < 30*time.Millisecond {
		t.Errorf("the stream took %v after its first event, want the token delays after it (not all before it)", total-first)
	}
}

func TestFaultsAreRepeatableForASeed(t *testing.T) {
	statuses := func(seed int64) []int {
		_, base := start(t, Options{Fail: 0.3, Seed: seed})
		var out []int
		for range 200 {
			r := post(t, base+"/v1/chat/completions", chatBody)
			_, _ = io.Copy(io.Discard, r.Body)
			out = append(out, r.StatusCode)
		}
		return out
	}
	a, b, c := statuses(7), statuses(7), statuses(8)
	if !reflect.DeepEqual(a, b) {
		t.Error("the same seed gave different fault sequences")
	}
	if reflect.DeepEqual(a, c) {
		t.Error("different seeds gave the same fault sequence")
	}
	fails := 0
	for _, s := range a {
		if s == 500 {
			fails++
		}
	}
	// Binomial(200, 0.3): mean 60, sd 6.5; this band is over 4 sd wide.
	if fails < 33 || fails > 87 {
		t.Errorf("%d of 200 failed, want about 30%%", fails)
	}
}

func TestRejectsBadRequests(t *testing.T) {
	s, base := start(t, Options{})
	tests := []struct {
		name, path, body, param string
		status                  int
	}{
		{"not json", "/v1/chat/completions", `{"model":`, "", 400},
		{"empty body", "/v1/chat/completions", ``, "", 400},
		{"no model", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`, "model", 400},
		{"no messages", "/v1/chat/completions", `{"model":"m","messages":[]}`, "messages", 400},
		{"bad role", "/v1/chat/completions", `{"model":"m","messages":[{"role":"robot","content":"x"}]}`, "messages", 400},
		{"bad content", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":7}]}`, "", 400},
		{"wrong type", "/v1/chat/completions", `{"model":"m","max_tokens":"many","messages":[{"role":"user","content":"x"}]}`, "max_tokens", 400},
		{"anthropic needs max_tokens", "/v1/messages", `{"model":"c","messages":[{"role":"user","content":"x"}]}`, "", 400},
		{"anthropic has no system role", "/v1/messages", `{"model":"c","max_tokens":5,"messages":[{"role":"system","content":"x"}]}`, "", 400},
		{"unknown path", "/v1/embeddings", `{}`, "", 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := post(t, base+tt.path, tt.body)
			if r.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", r.StatusCode, tt.status)
			}
			if tt.path == "/v1/messages" {
				var ae anthropicError
				readJSON(t, r, &ae)
				if ae.Error.Type != "invalid_request_error" || ae.Error.Message == "" {
					t.Errorf("error %+v, want invalid_request_error with a message", ae)
				}
				return
			}
			var oe openAIError
			readJSON(t, r, &oe)
			if oe.Error == nil || oe.Error.Message == "" {
				t.Fatalf("no error message")
			}
			if tt.param != "" && (oe.Error.Param == nil || *oe.Error.Param != tt.param) {
				t.Errorf("param %v, want %q", oe.Error.Param, tt.param)
			}
		})
	}
	r, err := http.Get(base + "/v1/chat/completions")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != 405 || r.Header.Get("Allow") != "POST" {
		t.Errorf("GET chat completions: status %d Allow %q, want 405 and POST", r.StatusCode, r.Header.Get("Allow"))
	}
	if st := s.Stats(); st.Rejected != int64(len(tests))+1 || st.OK != 0 {
		t.Errorf("stats %+v, want every request rejected", st)
	}
}

func TestModels(t *testing.T) {
	_, base := start(t, Options{})
	r, err := http.Get(base + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Object string `json:"object"`
		Data   []struct {
			ID     string `json:"id"`
			Object string `json:"object"`
		} `json:"data"`
	}
	readJSON(t, r, &list)
	if list.Object != "list" || len(list.Data) == 0 || list.Data[0].Object != "model" || list.Data[0].ID == "" {
		t.Errorf("model list %+v, want the OpenAI list shape", list)
	}
}

func TestValidate(t *testing.T) {
	if err := (Options{Fail: 0.5, Hang: 0.5, Rate: 3}).Validate(); err != nil {
		t.Errorf("valid options rejected: %v", err)
	}
	err := Options{Fail: 1.5, Hang: -0.1, Rate: -1, Latency: -time.Second}.Validate()
	if err == nil {
		t.Fatal("invalid options accepted")
	}
	for _, want := range []string{"fail is 1.5", "hang is -0.1", "rate is -1", "latency is -1s"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if err := (Options{Fail: 0.6, Overload: 0.6}).Validate(); err == nil || !strings.Contains(err.Error(), "at most 1") {
		t.Errorf("fractions summing over 1: err %v", err)
	}
	if _, err := New(Options{Truncate: 2}).Start(); err == nil {
		t.Error("Start accepted invalid options")
	}
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
