package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/assay-eval/assay/internal/mock"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/provider/httpcall/httpcalltest"
	"github.com/assay-eval/assay/internal/spec"
)

const plantedKey = "sk-ant-planted-0123456789abcdefSECRET"

func newProvider(t *testing.T, base string, stream bool, key string) *Provider {
	t.Helper()
	p, err := New(&spec.Target{Name: "t", Provider: "anthropic", Model: "target-model", BaseURL: base, Stream: stream}, key, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

func request(user string) *provider.Request {
	return &provider.Request{
		Model: "claude-mock",
		Messages: []provider.Message{
			{Role: "system", Content: "answer in one word"},
			{Role: "user", Content: user},
		},
	}
}

func ptr[T any](v T) *T { return &v }

func TestCompleteAgainstMock(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(httpcalltest.Mode(stream), func(t *testing.T) {
			base := httpcalltest.StartMock(t, mock.Options{CacheSystem: true, Rules: []mock.Rule{{Match: "capital", Reply: "Paris is the capital"}}})
			resp, err := newProvider(t, base, stream, "").Complete(context.Background(), request("what is the capital of France?"))
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if resp.Text != "Paris is the capital" || resp.FinishReason != "end_turn" {
				t.Errorf("text %q finish %q, want the scripted reply and end_turn", resp.Text, resp.FinishReason)
			}
			// 4 system words (read from the cache) + 6 user words in: Input
			// counts them all, as OpenAI's prompt_tokens would.
			if want := (provider.Usage{Input: 10, Output: 4, Cached: 4}); resp.Usage != want {
				t.Errorf("usage %+v, want %+v", resp.Usage, want)
			}
			if resp.Model != "claude-mock" || resp.SystemFingerprint != "" {
				t.Errorf("model %q fingerprint %q, want the served model and no fingerprint", resp.Model, resp.SystemFingerprint)
			}
			if resp.Attempts != 1 || resp.Latency <= 0 {
				t.Errorf("attempts %d latency %v, want 1 and > 0", resp.Attempts, resp.Latency)
			}
		})
	}
}

func TestStopReasons(t *testing.T) {
	for _, stream := range []bool{false, true} {
		base := httpcalltest.StartMock(t, mock.Options{Default: "one two three four"})
		req := request("x")
		req.Params.MaxTokens = ptr(2)
		resp, err := newProvider(t, base, stream, "").Complete(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Text != "one two" || resp.FinishReason != "max_tokens" || resp.Usage.Output != 2 {
			t.Errorf("%s: text %q finish %q output %d, want the first 2 words, max_tokens, 2", httpcalltest.Mode(stream), resp.Text, resp.FinishReason, resp.Usage.Output)
		}
		req = request("x")
		req.Params.Stop = []string{"three"}
		resp, err = newProvider(t, base, stream, "").Complete(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Text != "one two " || resp.FinishReason != "stop_sequence" {
			t.Errorf("%s: text %q finish %q, want the text before the stop sequence and stop_sequence", httpcalltest.Mode(stream), resp.Text, resp.FinishReason)
		}
	}
}

func recordingServer(t *testing.T) (base string, last func() (map[string]any, http.Header)) {
	t.Helper()
	var body map[string]any
	var hdr http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body = nil
		_ = json.NewDecoder(r.Body).Decode(&body)
		hdr = r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() (map[string]any, http.Header) { return body, hdr }
}

func TestParamsOnTheWire(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-from-env")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "token-from-env")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	base, last := recordingServer(t)

	req := &provider.Request{
		Model: "claude-mock",
		Messages: []provider.Message{
			{Role: "system", Content: "rule one"},
			{Role: "system", Content: "rule two"},
			{Role: "user", Content: "hi"},
			{Role: "assistant", Content: "hello"},
			{Role: "user", Content: "again"},
		},
		Params: provider.Params{Temperature: ptr(0.0), TopP: ptr(0.9), MaxTokens: ptr(64), Stop: []string{"END"}},
	}
	if _, err := newProvider(t, base, false, "sk-spec").Complete(context.Background(), req); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	body, hdr := last()
	want := map[string]any{"model": "claude-mock", "temperature": 0.0, "top_p": 0.9, "max_tokens": 64.0}
	for k, v := range want {
		if body[k] != v {
			t.Errorf("%s = %v, want %v", k, body[k], v)
		}
	}
	if got := fmt.Sprint(body["stop_sequences"]); got != "[END]" {
		t.Errorf("stop_sequences = %v, want [END]", got)
	}
	if got := fmt.Sprint(body["system"]); got != "[map[text:rule one type:text] map[text:rule two type:text]]" {
		t.Errorf("system = %v, want both system messages as text blocks", got)
	}
	msgs, _ := body["messages"].([]any)
	var roles []string
	for _, m := range msgs {
		roles = append(roles, fmt.Sprint(m.(map[string]any)["role"]))
	}
	if strings.Join(roles, ",") != "user,assistant,user" {
		t.Errorf("message roles %v, want user,assistant,user with the system messages lifted out", roles)
	}
	// This SDK sends the API key as a bearer token.
	if got := hdr.Get("Authorization"); got != "Bearer sk-spec" {
		t.Errorf("Authorization %q, want the key passed to New, not the environment's", got)
	}
	if got := hdr.Get("X-Api-Key"); got != "" {
		t.Errorf("x-api-key %q came from the environment", got)
	}
	if hdr.Get("Anthropic-Version") == "" {
		t.Error("no anthropic-version header")
	}

	// Unset params are not sent, but max_tokens, which the API requires, is.
	if _, err := newProvider(t, base, false, "").Complete(context.Background(), request("hi")); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	body, hdr = last()
	if body["max_tokens"] != float64(DefaultMaxTokens) {
		t.Errorf("max_tokens = %v, want the default %d", body["max_tokens"], DefaultMaxTokens)
	}
	for _, absent := range []string{"temperature", "top_p", "stop_sequences", "stream"} {
		if _, ok := body[absent]; ok {
			t.Errorf("%s sent though unset", absent)
		}
	}
	if got := hdr.Get("X-Api-Key") + hdr.Get("Authorization"); got != "" {
		t.Errorf("credentials %q sent with no key", got)
	}
}

func TestServerAnswersAreClassified(t *testing.T) {
	const sse = "text/event-stream"
	start := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n"
	block := "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
	delta := "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n"
	end := "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	tests := []struct {
		name, ctype, body string
		status            int
		stream            bool
		kind              provider.ErrorKind // "" = success
		msg               string
	}{
		{name: "not found", status: 404, ctype: "application/json", body: `{"type":"error","error":{"type":"not_found_error","message":"model: claude-9"}}`, kind: provider.KindNotFound, msg: "not_found_error: model: claude-9"},
		{name: "bad request", status: 400, ctype: "application/json", body: `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too large"}}`, kind: provider.KindBadRequest, msg: "max_tokens: too large"},
		{name: "permission", status: 403, ctype: "application/json", body: `{"type":"error","error":{"type":"permission_error","message":"no"}}`, kind: provider.KindAuth},
		{name: "gateway html", status: 502, ctype: "text/html", body: "<html>\n<h1>502 Bad Gateway</h1></html>", kind: provider.KindServer, msg: "<h1>502 Bad Gateway</h1>"},
		{name: "text body", status: 200, ctype: "text/plain", body: "hello", kind: provider.KindMalformed},
		{name: "empty message", status: 200, ctype: "application/json", body: `{}`, kind: provider.KindMalformed, msg: "neither content nor a stop_reason"},
		{name: "whole stream", status: 200, ctype: sse, body: start + block + delta + end, stream: true},
		{name: "stream without message_stop", status: 200, ctype: sse, body: start + block + delta, stream: true, kind: provider.KindTruncated, msg: "without message_stop"},
		{name: "stream without message_start", status: 200, ctype: sse, body: block + delta, stream: true, kind: provider.KindMalformed},
		{name: "stream answered as JSON", status: 200, ctype: "application/json", body: `{"type":"message","content":[]}`, stream: true, kind: provider.KindMalformed, msg: "no message_start"},
		{name: "delta for a block never started", status: 200, ctype: sse, body: start + delta + end, stream: true, kind: provider.KindMalformed},
		{name: "overloaded event in stream", status: 200, ctype: sse, body: start + block + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n", stream: true, kind: provider.KindOverloaded, msg: "Overloaded"},
		{name: "api error event in stream", status: 200, ctype: sse, body: start + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"boom\"}}\n\n", stream: true, kind: provider.KindServer, msg: "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := newProvider(t, httpcalltest.Serve(t, tt.status, tt.ctype, tt.body), tt.stream, "").Complete(context.Background(), request("x"))
			if tt.kind == "" {
				if err != nil {
					t.Fatalf("Complete: %v", err)
				}
				if resp.Text != "hi" || resp.FinishReason != "end_turn" || resp.Usage.Input != 3 {
					t.Errorf("response %+v, want hi, end_turn, 3 input tokens", resp)
				}
				return
			}
			pe := httpcalltest.ProviderError(t, err)
			if pe.Kind != tt.kind || pe.Status != tt.status {
				t.Errorf("kind %s status %d, want %s %d (err %v)", pe.Kind, pe.Status, tt.kind, tt.status, err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not say %q", err, tt.msg)
			}
		})
	}
}

func TestKeyNeverInErrors(t *testing.T) {
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("X-Api-Key") + r.Header.Get("Authorization")
		switch r.URL.Query().Get("mode") {
		case "json":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(401)
			fmt.Fprintf(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key %s"}}`, key)
		case "long":
			w.WriteHeader(400)
			fmt.Fprintf(w, "%s%s", strings.Repeat("x", 280), key)
		case "html":
			w.WriteHeader(502)
			fmt.Fprintf(w, "<html>upstream rejected header %q</html>", key)
		case "malformed":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id": %s`, key)
		case "stream":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"bad key %s\"}}\n\n", key)
		case "badevent":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message_start\ndata: {%s\n\n", key)
		}
	}))
	t.Cleanup(echo.Close)
	for _, m := range []string{"json", "long", "html", "malformed", "stream", "badevent"} {
		for _, stream := range []bool{false, true} {
			p := newProvider(t, echo.URL, stream, plantedKey)
			p.svc.Options = append(p.svc.Options, option.WithQuery("mode", m))
			_, err := p.Complete(context.Background(), request("x"))
			if err == nil {
				t.Fatalf("%s %s: no error", m, httpcalltest.Mode(stream))
			}
			for _, s := range []string{err.Error(), fmt.Sprint(err), fmt.Sprintf("%v", errors.Unwrap(err))} {
				if strings.Contains(s, plantedKey) || strings.Contains(s, plantedKey[:24]) {
					t.Errorf("%s %s: the key leaked: %s", m, httpcalltest.Mode(stream), s)
				}
			}
		}
	}
}

func TestBadRequestsFailBeforeSending(t *testing.T) {
	p := newProvider(t, "http://127.0.0.1:1", false, "")
	for _, req := range []*provider.Request{
		{Model: "m"},
		{Model: "m", Messages: []provider.Message{{Role: "system", Content: "only a system prompt"}}},
		{Model: "m", Messages: []provider.Message{{Role: "tool", Content: "x"}}},
		{Model: "m", Messages: []provider.Message{{Role: "user", Content: "x"}}, Params: provider.Params{Seed: ptr(int64(1))}},
	} {
		_, err := p.Complete(context.Background(), req)
		if pe := httpcalltest.ProviderError(t, err); pe.Kind != provider.KindBadRequest || pe.Retryable() {
			t.Errorf("%+v: kind %s, want a non-retryable bad_request", req, pe.Kind)
		}
	}
}

func TestNewRejectsBadTargets(t *testing.T) {
	for _, tt := range []struct {
		target spec.Target
		want   string
	}{
		{spec.Target{Name: "a"}, "has no model"},
		{spec.Target{Name: "b", Model: "m", Params: spec.Params{Seed: ptr(int64(1))}}, "params.seed"},
		{spec.Target{Name: "c", Model: "m", BaseURL: "api.anthropic.com"}, "not an absolute http"},
		{spec.Target{Name: "d", Model: "m", BaseURL: "https://user:hunter2@/"}, "not an absolute http"},
	} {
		_, err := New(&tt.target, "", nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: err %v, want one saying %q", tt.target, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("the base URL's password is in the error: %v", err)
		}
	}
}
