package openai

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

	"github.com/openai/openai-go/v3/option"

	"github.com/assay-eval/assay/internal/mock"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/provider/httpcall/httpcalltest"
	"github.com/assay-eval/assay/internal/spec"
)

const plantedKey = "sk-planted-0123456789abcdefSECRET"

func targetFor(base string, stream bool) *spec.Target {
	return &spec.Target{Name: "t", Provider: "openai", Model: "target-model", BaseURL: base, Stream: stream}
}

func newProvider(t *testing.T, base string, stream bool, key string) *Provider {
	t.Helper()
	p, err := New(targetFor(base, stream), key, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

func request(user string) *provider.Request {
	return &provider.Request{
		Model: "gpt-mock",
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
			base := httpcalltest.StartMock(t, mock.Options{CacheSystem: true, Rules: []mock.Rule{{Match: "capital", Reply: "Paris is the capital"}}}) + "/v1"
			p := newProvider(t, base, stream, "")
			resp, err := p.Complete(context.Background(), request("what is the capital of France?"))
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if resp.Text != "Paris is the capital" || resp.FinishReason != "stop" {
				t.Errorf("text %q finish %q, want the scripted reply and stop", resp.Text, resp.FinishReason)
			}
			// 4 system words (cached) + 6 user words in, 4 words out.
			if want := (provider.Usage{Input: 10, Output: 4, Cached: 4}); resp.Usage != want {
				t.Errorf("usage %+v, want %+v", resp.Usage, want)
			}
			if resp.Model != "gpt-mock" || resp.SystemFingerprint != "fp_mock" {
				t.Errorf("model %q fingerprint %q, want the served model and fp_mock", resp.Model, resp.SystemFingerprint)
			}
			if resp.Attempts != 1 || resp.Latency <= 0 {
				t.Errorf("attempts %d latency %v, want 1 and > 0", resp.Attempts, resp.Latency)
			}
			if !stream && resp.FirstToken != 0 {
				t.Errorf("first token %v on a plain call, want 0", resp.FirstToken)
			}
		})
	}
}

func TestMaxTokensCutsTheReply(t *testing.T) {
	for _, stream := range []bool{false, true} {
		base := httpcalltest.StartMock(t, mock.Options{Default: "one two three four"}) + "/v1"
		req := request("x")
		req.Params.MaxTokens = ptr(2)
		resp, err := newProvider(t, base, stream, "").Complete(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Text != "one two" || resp.FinishReason != "length" || resp.Usage.Output != 2 {
			t.Errorf("%s: text %q finish %q output %d, want the first 2 words, length, 2", httpcalltest.Mode(stream), resp.Text, resp.FinishReason, resp.Usage.Output)
		}
	}
}

// recordingServer answers every call with a fixed completion and keeps the
// last request body and headers.
func recordingServer(t *testing.T) (base string, last func() (map[string]any, http.Header)) {
	t.Helper()
	var body map[string]any
	var hdr http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body = nil
		_ = json.NewDecoder(r.Body).Decode(&body)
		hdr = r.Header.Clone()
		if body["stream"] == true {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", func() (map[string]any, http.Header) { return body, hdr }
}

func TestParamsOnTheWire(t *testing.T) {
	t.Setenv("OPENAI_ORG_ID", "org-from-env")
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	base, last := recordingServer(t)

	req := request("hi")
	req.Params = provider.Params{Temperature: ptr(0.0), TopP: ptr(0.5), MaxTokens: ptr(64), Seed: ptr(int64(7)), Stop: []string{"\n\n", "END"}}
	if _, err := newProvider(t, base, false, "sk-spec").Complete(context.Background(), req); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	body, hdr := last()
	want := map[string]any{"model": "gpt-mock", "temperature": 0.0, "top_p": 0.5, "max_tokens": 64.0, "seed": 7.0}
	for k, v := range want {
		if body[k] != v {
			t.Errorf("%s = %v, want %v", k, body[k], v)
		}
	}
	if got := fmt.Sprint(body["stop"]); got != "[\n\n END]" {
		t.Errorf("stop = %q, want both sequences", got)
	}
	for _, absent := range []string{"max_completion_tokens", "stream", "stream_options"} {
		if _, ok := body[absent]; ok {
			t.Errorf("%s sent on a plain call", absent)
		}
	}
	msgs, _ := body["messages"].([]any)
	if len(msgs) != 2 || fmt.Sprint(msgs[0]) != "map[content:answer in one word role:system]" || fmt.Sprint(msgs[1]) != "map[content:hi role:user]" {
		t.Errorf("messages %v, want the system and user messages as strings", msgs)
	}
	if got := hdr.Get("Authorization"); got != "Bearer sk-spec" {
		t.Errorf("Authorization %q, want the key passed to New, not the environment's", got)
	}
	if got := hdr.Get("OpenAI-Organization"); got != "" {
		t.Errorf("OpenAI-Organization %q came from the environment", got)
	}

	// Unset params are not sent; a stream asks for usage.
	if _, err := newProvider(t, base, true, "").Complete(context.Background(), request("hi")); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	body, hdr = last()
	for _, absent := range []string{"temperature", "top_p", "max_tokens", "seed", "stop"} {
		if _, ok := body[absent]; ok {
			t.Errorf("%s sent though unset", absent)
		}
	}
	if body["stream"] != true || fmt.Sprint(body["stream_options"]) != "map[include_usage:true]" {
		t.Errorf("stream %v stream_options %v, want true and include_usage", body["stream"], body["stream_options"])
	}
	if got := hdr.Get("Authorization"); got != "" {
		t.Errorf("Authorization %q sent with no key", got)
	}
}

func TestServerAnswersAreClassified(t *testing.T) {
	const sse = "text/event-stream"
	chunk := func(content, finish string) string {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		return `data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"` + content + `"},"finish_reason":` + f + "}]}\n\n"
	}
	usage := "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5}}\n\n"
	tests := []struct {
		name, ctype, body string
		status            int
		stream            bool
		kind              provider.ErrorKind // "" = success
		msg               string             // in the error
		text              string             // on success
	}{
		{name: "ollama-style not found", status: 404, ctype: "application/json", body: `{"error":"model \"llama9\" not found, try pulling it first"}`, kind: provider.KindNotFound, msg: `model "llama9" not found`},
		{name: "openai bad request", status: 400, ctype: "application/json", body: `{"error":{"message":"Invalid value for 'temperature'.","type":"invalid_request_error","param":"temperature","code":"invalid_value"}}`, kind: provider.KindBadRequest, msg: "invalid_request_error/invalid_value: Invalid value for 'temperature'."},
		{name: "vllm detail", status: 400, ctype: "application/json", body: `{"detail":"max_tokens is too large"}`, kind: provider.KindBadRequest, msg: "max_tokens is too large"},
		{name: "gateway html", status: 502, ctype: "text/html", body: "<html>\n<h1>502 Bad Gateway</h1>\n</html>", kind: provider.KindServer, msg: "<html> <h1>502 Bad Gateway</h1> </html>"},
		{name: "empty error body", status: 503, ctype: "text/plain", body: "", kind: provider.KindServer, msg: "Service Unavailable"},
		{name: "timeout status", status: 408, ctype: "text/plain", body: "slow", kind: provider.KindTimeout},
		{name: "conflict status", status: 409, ctype: "text/plain", body: "busy", kind: provider.KindConflict},
		{name: "forbidden", status: 403, ctype: "application/json", body: `{"error":{"message":"no access","type":"permission_error"}}`, kind: provider.KindAuth, msg: "permission_error: no access"},
		{name: "no choices", status: 200, ctype: "application/json", body: `{"id":"c","object":"chat.completion","model":"m","choices":[]}`, kind: provider.KindMalformed, msg: "no choices"},
		{name: "text body", status: 200, ctype: "text/plain", body: "hello", kind: provider.KindMalformed},
		{name: "stream without finish", status: 200, ctype: sse, body: chunk("a", "") + "data: [DONE]\n\n", stream: true, kind: provider.KindTruncated, msg: "finish_reason"},
		{name: "stream cut after finish", status: 200, ctype: sse, body: chunk("a", "stop"), stream: true, kind: provider.KindTruncated, msg: "[DONE]"},
		{name: "stream without usage support", status: 200, ctype: sse, body: chunk("a", "") + chunk("b", "stop") + "data: [DONE]\n\n", stream: true, text: "ab"},
		{name: "refusal", status: 200, ctype: "application/json", body: `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}`, text: "I can't help with that."},
		{name: "stream without [DONE]", status: 200, ctype: sse, body: chunk("a", "stop") + usage, stream: true, text: "a"},
		{name: "stream answered as JSON", status: 200, ctype: "application/json", body: `{"id":"c","choices":[{"index":0,"message":{"content":"x"},"finish_reason":"stop"}]}`, stream: true, kind: provider.KindMalformed, msg: "no chunks"},
		{name: "error event in stream", status: 200, ctype: sse, body: chunk("a", "") + `data: {"error":{"message":"Overloaded","type":"overloaded_error"}}` + "\n\n", stream: true, kind: provider.KindOverloaded, msg: "Overloaded"},
		{name: "rate limit event in stream", status: 200, ctype: sse, body: `data: {"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}` + "\n\n", stream: true, kind: provider.KindRateLimited, msg: "slow down"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, httpcalltest.Serve(t, tt.status, tt.ctype, tt.body)+"/v1", tt.stream, "")
			resp, err := p.Complete(context.Background(), request("x"))
			if tt.kind == "" {
				if err != nil {
					t.Fatalf("Complete: %v", err)
				}
				if resp.Text != tt.text || resp.FinishReason != "stop" {
					t.Errorf("text %q finish %q, want %q stop", resp.Text, resp.FinishReason, tt.text)
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

// TestKeyNeverInErrors plants a key with a server that echoes it back in
// every way a misbehaving server or gateway might, and checks no error text
// carries it.
func TestKeyNeverInErrors(t *testing.T) {
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		switch r.URL.Query().Get("mode") {
		case "json":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(401)
			fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s","type":"invalid_request_error","code":"invalid_api_key"}}`, auth)
		case "long":
			w.WriteHeader(400)
			fmt.Fprintf(w, "%s%s", strings.Repeat("x", 280), auth)
		case "html":
			w.WriteHeader(502)
			fmt.Fprintf(w, "<html>upstream rejected header %q</html>", auth)
		case "malformed":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id": %s`, auth)
		case "stream":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"error\":{\"message\":\"bad key %s\",\"type\":\"server_error\"}}\n\n", auth)
		case "badchunk":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {%s\n\n", auth)
		}
	}))
	t.Cleanup(echo.Close)
	for _, m := range []string{"json", "long", "html", "malformed", "stream", "badchunk"} {
		for _, stream := range []bool{false, true} {
			// The query string rides on the base URL; the SDK keeps it.
			p := newProvider(t, echo.URL+"/v1", stream, plantedKey)
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
	p := newProvider(t, "http://127.0.0.1:1/v1", false, "")
	for _, req := range []*provider.Request{
		{Model: "m"},
		{Model: "m", Messages: []provider.Message{{Role: "tool", Content: "x"}}},
	} {
		_, err := p.Complete(context.Background(), req)
		if pe := httpcalltest.ProviderError(t, err); pe.Kind != provider.KindBadRequest || pe.Retryable() {
			t.Errorf("%+v: kind %s, want a non-retryable bad_request", req.Messages, pe.Kind)
		}
	}
}

func TestNewRejectsBadTargets(t *testing.T) {
	for _, tt := range []struct {
		target spec.Target
		want   string
	}{
		{spec.Target{Name: "a"}, "has no model"},
		{spec.Target{Name: "b", Model: "m", BaseURL: "localhost:8080/v1"}, "not an absolute http"},
		{spec.Target{Name: "c", Model: "m", BaseURL: "ftp://host/v1"}, "not an absolute http"},
		{spec.Target{Name: "d", Model: "m", BaseURL: "https://user:hunter2@/v1"}, "not an absolute http"},
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

// The target's max_output_bytes bounds the reply: a 4 KB answer under a
// 1000-byte limit is an output_limit, under the default it is read.
func TestMaxOutputBytes(t *testing.T) {
	base := httpcalltest.StartMock(t, mock.Options{Default: strings.Repeat("word ", 800)}) + "/v1"
	for _, stream := range []bool{false, true} {
		tg := targetFor(base, stream)
		tg.MaxOutputBytes = 1000
		p, err := New(tg, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Complete(context.Background(), request("x"))
		if pe := httpcalltest.ProviderError(t, err); pe.Kind != provider.KindOutputLimit || !strings.Contains(pe.Msg, "1000 bytes") {
			t.Errorf("%s: kind %s msg %q, want output_limit naming 1000 bytes", httpcalltest.Mode(stream), pe.Kind, pe.Msg)
		}
		if _, err := newProvider(t, base, stream, "").Complete(context.Background(), request("x")); err != nil {
			t.Errorf("%s: under the default limit: %v", httpcalltest.Mode(stream), err)
		}
	}
}
