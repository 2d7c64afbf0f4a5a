package mock

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// answer is one successful reply about to be written.
type answer struct {
	id      uint64
	created int64
	c       *convo
	text    string // the reply after stop sequences and max_tokens
	calls   []call // the tool calls it makes, in order
	end     end
	stop    string        // the stop sequence that ended it
	cut     bool          // the truncate fault: end the body or stream early
	delay   time.Duration // between streamed chunks (TokenDelay, slowed down)
}

// outputTokens is the reply's token count (at least 1, as a model always
// emits an end-of-turn token).
func (a *answer) outputTokens() int {
	n := words(a.text)
	for _, c := range a.calls {
		n += 1 + words(c.args)
	}
	return max(n, 1)
}

// plain writes a whole JSON reply, or the first half of it under the
// truncate fault (with the whole length declared, so the client sees the
// connection end mid-body). It reports whether the reply was whole.
func (s *Server) plain(w http.ResponseWriter, wf wire, a *answer, bp *[]byte) bool {
	b := (*bp)[:0]
	if wf == wireAnthropic {
		b = appendMessage(b, a)
	} else {
		b = appendChatCompletion(b, a)
	}
	*bp = b[:0]
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	setRequestID(h, wf, a.id)
	if a.cut {
		b = b[:len(b)/2]
	}
	_, err := w.Write(b)
	return err == nil && !a.cut
}

// stream writes a server-sent-event reply. Under the truncate fault it
// sends half of the content and ends the stream cleanly before the final
// events. It reports whether the reply was whole.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, wf wire, a *answer, bp *[]byte) bool {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	setRequestID(h, wf, a.id)
	w.WriteHeader(http.StatusOK)
	e := events{w: w, buf: bp}
	if a.delay > 0 {
		e.flusher, _ = w.(http.Flusher)
	}
	limit := -1
	if a.cut {
		n := words(a.text)
		for _, c := range a.calls {
			n += countArgPieces(c.args)
		}
		limit = n / 2
	}
	sent := 0
	// next reports whether another piece (of text or of arguments) may go,
	// waiting the token delay before every piece but the first.
	next := func() bool {
		if sent == limit {
			return false
		}
		if sent > 0 && !s.wait(ctx, a.delay) {
			e.err = ctx.Err()
			return false
		}
		sent++
		return true
	}
	send := func(piece string) bool {
		if !next() {
			return false
		}
		if wf == wireAnthropic {
			return e.send(appendTextDelta(e.start(), piece))
		}
		return e.send(appendChatDelta(e.start(), a, piece))
	}

	if wf == wireAnthropic {
		e.send(appendMessageStart(e.start(), a))
		block := 0
		if a.text != "" || len(a.calls) == 0 {
			e.send(append(e.start(), "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\nevent: ping\ndata: {\"type\":\"ping\"}\n\n"...))
			pieces(a.text, send)
			if e.err != nil || (a.cut && sent == limit) {
				e.flush()
				return false
			}
			e.send(appendBlockStop(e.start(), 0))
			block++
		}
		for i := range a.calls {
			c := &a.calls[i]
			e.send(appendToolUseStart(e.start(), block, c))
			if block == 0 {
				e.send(append(e.start(), "event: ping\ndata: {\"type\":\"ping\"}\n\n"...))
			}
			argPieces(c.args, func(piece string) bool {
				return next() && e.send(appendInputJSONDelta(e.start(), block, piece))
			})
			if e.err != nil || (a.cut && sent == limit) {
				e.flush()
				return false
			}
			e.send(appendBlockStop(e.start(), block))
			block++
		}
		if a.cut {
			e.flush()
			return false
		}
		e.send(appendMessageDelta(e.start(), a))
		e.send(append(e.start(), "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"...))
	} else {
		e.send(appendChatRole(e.start(), a))
		pieces(a.text, send)
		for i := range a.calls {
			if e.err != nil || (a.cut && sent == limit) {
				break
			}
			c := &a.calls[i]
			e.send(appendChatToolStart(e.start(), a, i, c))
			argPieces(c.args, func(piece string) bool {
				return next() && e.send(appendChatToolArgs(e.start(), a, i, piece))
			})
		}
		if e.err != nil || a.cut {
			e.flush()
			return false
		}
		e.send(appendChatFinish(e.start(), a))
		if a.c.usage {
			e.send(appendChatUsageChunk(e.start(), a))
		}
		e.send(append(e.start(), "data: [DONE]\n\n"...))
	}
	e.flush()
	return e.err == nil
}

// events writes SSE events, flushing each one when a token delay makes the
// timing visible, and remembers the first write error.
type events struct {
	w       http.ResponseWriter
	flusher http.Flusher
	buf     *[]byte
	err     error
}

func (e *events) start() []byte { return (*e.buf)[:0] }

func (e *events) send(b []byte) bool {
	*e.buf = b[:0]
	if e.err != nil {
		return false
	}
	if _, e.err = e.w.Write(b); e.err != nil {
		return false
	}
	if e.flusher != nil {
		e.flusher.Flush()
	}
	return true
}

func (e *events) flush() {
	if f, ok := e.w.(http.Flusher); ok && e.err == nil {
		f.Flush()
	}
}
