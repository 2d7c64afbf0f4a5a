package mock

import (
	"bufio"
	"context"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// client is an HTTP client that keeps a connection per concurrent request,
// so a test's load is not spent opening connections.
func client(conns int) *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: 0}}
}

// send posts a chat request and returns its status (0 when the request
// failed, as when its context was cancelled) once the whole body is read.
func send(ctx context.Context, c *http.Client, url, body string) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0
	}
	return resp.StatusCode
}

func chatAsking(q string) string {
	return `{"model":"m","messages":[{"role":"user","content":"` + q + `"}]}`
}

// With 8 slots and 50 ms of service, the server completes at most
// 8/0.05 = 160 requests/s. A closed loop of 16 clients keeps 8 in service
// and 8 waiting, so by Little's law each request takes 16/160 s = 100 ms:
// 50 ms waiting and 50 ms served. Without the model the same clients would
// get 320 requests/s at 50 ms.
func TestCapacityClosedLoopThroughputAndQueueing(t *testing.T) {
	s, base := start(t, Options{Capacity: 8, Latency: 50 * time.Millisecond, Default: "ok"})
	c := client(16)
	url := base + "/v1/chat/completions"
	// Warm the connections, then measure a 2 s window.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		measuring atomic.Bool
		done      atomic.Int64
		latSum    atomic.Int64 // ns, of the requests completed in the window
		maxBusy   atomic.Int64
		wg        sync.WaitGroup
	)
	for range 16 {
		wg.Go(func() {
			for ctx.Err() == nil {
				began := time.Now()
				if st := send(ctx, c, url, chatBody); st != http.StatusOK {
					if ctx.Err() == nil {
						t.Errorf("status %d, want 200", st)
					}
					return
				}
				if measuring.Load() { // completions within the window
					done.Add(1)
					latSum.Add(int64(time.Since(began)))
				}
			}
		})
	}
	stopPoll := make(chan struct{})
	var pollWG sync.WaitGroup
	pollWG.Go(func() {
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stopPoll:
				return
			case <-tick.C:
				if b := s.Stats().Busy; b > maxBusy.Load() {
					maxBusy.Store(b)
				}
			}
		}
	})
	time.Sleep(300 * time.Millisecond)
	measuring.Store(true)
	began := time.Now()
	time.Sleep(2 * time.Second)
	measuring.Store(false)
	window := time.Since(began)
	cancel()
	wg.Wait()
	close(stopPoll)
	pollWG.Wait()

	n := done.Load()
	rps := float64(n) / window.Seconds()
	meanMS := float64(latSum.Load()) / float64(n) / 1e6
	t.Logf("closed loop of 16 against 8 slots × 50 ms: %.1f req/s, mean latency %.1f ms, max busy %d, stats %+v", rps, meanMS, maxBusy.Load(), s.Stats())
	// The timers of a loaded machine only fire late, so the rate may fall
	// short of 160 but can never pass it.
	if rps < 130 || rps > 168 {
		t.Errorf("throughput %.1f req/s, want about 160 (8 slots / 50 ms) and never more", rps)
	}
	if meanMS < 90 || meanMS > 130 {
		t.Errorf("mean latency %.1f ms, want about 100 (50 ms queued + 50 ms served)", meanMS)
	}
	if b := maxBusy.Load(); b > 8 {
		t.Errorf("%d slots busy at once, want at most 8", b)
	}
	st := s.Stats()
	if st.MaxWaiting < 4 || st.MaxWaiting > 8 {
		t.Errorf("max queue depth %d, want up to 8 (16 clients, 8 slots)", st.MaxWaiting)
	}
	if st.Queued == 0 || st.QueueWait <= 0 {
		t.Errorf("stats %+v: no request counted as having waited", st)
	}
	waitFor(t, func() bool { st := s.Stats(); return st.Busy == 0 && st.Waiting == 0 }, "every slot to be freed once the clients went away")
}

// Requests waiting for a slot get it in the order they arrived.
func TestCapacityQueueIsFIFO(t *testing.T) {
	s, base := start(t, Options{Capacity: 1, Latency: 200 * time.Millisecond})
	c := client(8)
	url := base + "/v1/chat/completions"
	order := make(chan string, 8)
	var wg sync.WaitGroup
	ask := func(q string) {
		wg.Go(func() {
			if st := send(context.Background(), c, url, chatAsking(q)); st != http.StatusOK {
				t.Errorf("%s: status %d", q, st)
			}
			order <- q
		})
	}
	ask("first")
	waitFor(t, func() bool { return s.Stats().Busy == 1 }, "the first request to take the slot")
	names := []string{"second", "third", "fourth", "fifth", "sixth"}
	for i, q := range names {
		ask(q)
		waitFor(t, func() bool { return s.Stats().Waiting == int64(i+1) }, q+" to queue")
	}
	wg.Wait()
	close(order)
	var got []string
	for q := range order {
		got = append(got, q)
	}
	want := append([]string{"first"}, names...)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("answered in the order %v, want the order of arrival %v", got, want)
	}
	if st := s.Stats(); st.MaxWaiting != 5 || st.Queued != 5 {
		t.Errorf("stats %+v; want max queue depth 5 and 5 requests queued", st)
	}
}

// Beyond the queue limit the server answers 503 at once, in each API's
// error shape; the requests in service and in the queue are answered.
func TestCapacityQueueLimitAnswers503(t *testing.T) {
	s, base := start(t, Options{Capacity: 1, QueueLimit: 1, Latency: 300 * time.Millisecond})
	c := client(4)
	var wg sync.WaitGroup
	statuses := make([]int, 2)
	for i := range 2 {
		wg.Go(func() { statuses[i] = send(context.Background(), c, base+"/v1/chat/completions", chatBody) })
		waitFor(t, func() bool { st := s.Stats(); return st.Busy+st.Waiting == int64(i+1) }, "a request to be taken in")
	}
	began := time.Now()
	r := post(t, base+"/v1/chat/completions", chatBody)
	if r.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("over the queue limit: status %d, want 503", r.StatusCode)
	}
	if d := time.Since(began); d > 250*time.Millisecond {
		t.Errorf("the 503 took %v; it must not wait for a slot", d)
	}
	var oe openAIError
	readJSON(t, r, &oe)
	if oe.Error == nil || oe.Error.Type != "server_error" || oe.Error.Code == nil || *oe.Error.Code != "service_unavailable" || !strings.Contains(oe.Error.Message, "capacity") {
		t.Errorf("OpenAI 503 body %+v, want type server_error, code service_unavailable and a message about capacity", oe.Error)
	}
	ra := post(t, base+"/v1/messages", messagesBody, "anthropic-version", "2023-06-01")
	var ae anthropicError
	readJSON(t, ra, &ae)
	if ra.StatusCode != http.StatusServiceUnavailable || ae.Type != "error" || ae.Error.Type != "overloaded_error" {
		t.Errorf("Anthropic: status %d, body %+v; want 503 with an overloaded_error", ra.StatusCode, ae)
	}
	wg.Wait()
	if statuses[0] != 200 || statuses[1] != 200 {
		t.Errorf("the requests in service and queued got %v, want 200 and 200", statuses)
	}
	if st := s.Stats(); st.QueueFull != 2 || st.OK != 2 {
		t.Errorf("stats %+v; want 2 answered 503 for a full queue and 2 OK", st)
	}
}

// A queue limit of -1 is no queue: 503 as soon as every slot is busy.
func TestCapacityWithoutQueue(t *testing.T) {
	s, base := start(t, Options{Capacity: 1, QueueLimit: -1, Latency: 300 * time.Millisecond})
	c := client(2)
	var wg sync.WaitGroup
	var first int
	wg.Go(func() { first = send(context.Background(), c, base+"/v1/chat/completions", chatBody) })
	waitFor(t, func() bool { return s.Stats().Busy == 1 }, "the first request to take the slot")
	if r := post(t, base+"/v1/chat/completions", chatBody); r.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("with every slot busy and no queue: status %d, want 503", r.StatusCode)
	}
	wg.Wait()
	if first != 200 {
		t.Errorf("the request in service got %d, want 200", first)
	}
}

// A stream holds its slot until its last event: a request behind it is
// served only after the stream ended. "a b c d" streams as four pieces
// with a 60 ms delay before each but the first, so once the client has read
// the first event the stream holds the slot for at least 180 ms more.
func TestCapacityStreamHoldsTheSlotUntilDone(t *testing.T) {
	s, base := start(t, Options{Capacity: 1, TokenDelay: 60 * time.Millisecond, Default: "a b c d"})
	resp := post(t, base+"/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`)
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	firstRead := time.Now()
	var wg sync.WaitGroup
	var plainEnded time.Time
	wg.Go(func() {
		if st := send(context.Background(), client(1), base+"/v1/chat/completions", chatBody); st != 200 {
			t.Errorf("the request behind the stream: status %d", st)
		}
		plainEnded = time.Now()
	})
	waitFor(t, func() bool { return s.Stats().Waiting == 1 }, "the plain request to queue behind the stream")
	if _, err := io.Copy(io.Discard, br); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if d := plainEnded.Sub(firstRead); d < 170*time.Millisecond {
		t.Errorf("the request queued behind the stream was answered %v after the stream's first event, want at least the 180 ms the stream still held its slot", d)
	}
}

// A client that goes away frees its slot (while served) or leaves the
// queue (while waiting), at once rather than when its latency would end.
func TestCapacityCancelledRequestFreesItsSlot(t *testing.T) {
	s, base := start(t, Options{Capacity: 1, Latency: 10 * time.Second})
	c := client(4)
	url := base + "/v1/chat/completions"
	ctxA, cancelA := context.WithCancel(context.Background())
	ctxB, cancelB := context.WithCancel(context.Background())
	defer cancelA()
	defer cancelB()
	var wg sync.WaitGroup
	wg.Go(func() { send(ctxA, c, url, chatBody) })
	waitFor(t, func() bool { return s.Stats().Busy == 1 }, "A to take the slot")
	wg.Go(func() { send(ctxB, c, url, chatBody) })
	waitFor(t, func() bool { return s.Stats().Waiting == 1 }, "B to queue")

	cancelB()
	waitFor(t, func() bool { st := s.Stats(); return st.Waiting == 0 && st.Busy == 1 }, "cancelled B to leave the queue")
	cancelA()
	waitFor(t, func() bool { st := s.Stats(); return st.Busy == 0 }, "cancelled A to free its slot")
	wg.Wait()

	// The slot is free for the next request, which is served at once.
	ctxC, cancelC := context.WithCancel(context.Background())
	defer cancelC()
	wg.Go(func() { send(ctxC, c, url, chatBody) })
	waitFor(t, func() bool { st := s.Stats(); return st.Busy == 1 && st.Waiting == 0 }, "C to take the freed slot without waiting")
	cancelC()
	wg.Wait()
	if st := s.Stats(); st.OK != 0 || st.Queued != 1 {
		t.Errorf("stats %+v; want nothing answered and one request queued", st)
	}
}

// A request handed the slot just as its client gave up passes it on, so a
// burst of cancellations never leaks a slot.
func TestCapacityCancellationsNeverLeakSlots(t *testing.T) {
	s, base := start(t, Options{Capacity: 2, Latency: 5 * time.Millisecond})
	c := client(32)
	url := base + "/v1/chat/completions"
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%15)*time.Millisecond)
			defer cancel()
			send(ctx, c, url, chatBody)
		})
	}
	wg.Wait()
	waitFor(t, func() bool { st := s.Stats(); return st.Busy == 0 && st.Waiting == 0 && st.InFlight == 0 }, "every slot to be free")
	for range 2 {
		if st := send(context.Background(), c, url, chatBody); st != 200 {
			t.Fatalf("after the cancellations: status %d", st)
		}
	}
}

// Slowdown multiplies the service time by 1 + Slowdown × busy/Capacity.
func TestCapacitySlowdown(t *testing.T) {
	_, base := start(t, Options{Capacity: 4, Slowdown: 2, Latency: 100 * time.Millisecond})
	c := client(4)
	url := base + "/v1/chat/completions"
	began := time.Now()
	if st := send(context.Background(), c, url, chatBody); st != 200 {
		t.Fatalf("status %d", st)
	}
	alone := time.Since(began)
	// Alone: 100 ms × (1 + 2 × 1/4) = 150 ms.
	if alone < 150*time.Millisecond || alone > 260*time.Millisecond {
		t.Errorf("a request alone took %v, want about 150 ms (100 ms × 1.5)", alone)
	}
	// Four at once: the last to take a slot is slowed by 1 + 2 × 4/4 = 3.
	var wg sync.WaitGroup
	began = time.Now()
	for range 4 {
		wg.Go(func() { send(context.Background(), c, url, chatBody) })
	}
	wg.Wait()
	if all := time.Since(began); all < 300*time.Millisecond || all > 500*time.Millisecond {
		t.Errorf("four requests on four slots took %v, want about 300 ms (100 ms × 3 for the last)", all)
	}
}

func TestCapacityValidate(t *testing.T) {
	if err := (Options{Capacity: 8, QueueLimit: -1, Slowdown: 0.5}).Validate(); err != nil {
		t.Errorf("valid capacity options rejected: %v", err)
	}
	err := Options{Capacity: -1, QueueLimit: -2, Slowdown: math.NaN()}.Validate()
	for _, want := range []string{
		"mock: capacity is -1; it must be a number of concurrent requests >= 0 (0 = unlimited)",
		"mock: queue limit is -2; it must be >= 1 (requests that may wait), 0 (no limit) or -1 (no queue)",
		"mock: slowdown is NaN; it must be a number >= 0",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
	if err := (Options{Slowdown: 1}).Validate(); err == nil || !strings.Contains(err.Error(), "mock: slowdown is 1 but capacity is not set; it scales with busy slots of a capacity (set capacity > 0)") {
		t.Errorf("slowdown without capacity: err %v", err)
	}
	if err := (Options{QueueLimit: 3}).Validate(); err == nil || !strings.Contains(err.Error(), "mock: queue limit is 3 but capacity is not set; a queue forms only for a capacity (set capacity > 0)") {
		t.Errorf("queue limit without capacity: err %v", err)
	}
}

// Close ends the requests in service and those waiting for a slot at once.
func TestCapacityCloseEndsQueuedRequests(t *testing.T) {
	s := New(Options{Capacity: 1, Latency: 10 * time.Second})
	base, err := s.Start()
	if err != nil {
		t.Fatal(err)
	}
	c := client(4)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() { send(context.Background(), c, base+"/v1/chat/completions", chatBody) })
	}
	waitFor(t, func() bool { st := s.Stats(); return st.Busy == 1 && st.Waiting == 2 }, "one request served and two queued")
	began := time.Now()
	s.Close()
	wg.Wait()
	if d := time.Since(began); d > 2*time.Second {
		t.Errorf("Close and the clients took %v; requests in service and queued must end at once", d)
	}
	if st := s.Stats(); st.Busy != 0 || st.Waiting != 0 || st.InFlight != 0 {
		t.Errorf("after Close: %+v; want nothing busy, waiting or in flight", st)
	}
}

// Without an address the mock listens on loopback only.
func TestListensOnLoopbackByDefault(t *testing.T) {
	_, base := start(t, Options{Capacity: 1})
	host, _, err := net.SplitHostPort(strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		t.Errorf("listening on %s; want a loopback address", base)
	}
}
