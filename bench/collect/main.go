// Command collect measures `assay collect`'s ingestion: it serves a
// receiver (internal/collect, the same handler the command serves) on
// 127.0.0.1:0 over a fresh SQLite store and posts OTLP/HTTP protobuf
// batches of GenAI chat spans to it from -clients concurrent clients, each
// span ~1.3 KB of messages and 15 attributes in the current semantic
// conventions, every one with a new trace ID. It prints spans per second
// per -report spans and the process's RSS and Go heap (after a GC) at each
// report. It is not part of the assay binary.
//
//	go run ./bench/collect -spans 1000000 -batch 512 -clients 4 -report 100000
//
// With -cpuprofile FILE it writes a CPU profile of the whole run.
package main

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/assay-eval/assay/internal/collect"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/sqlite"
	"github.com/assay-eval/assay/internal/traces"
)

func main() {
	spans := flag.Int("spans", 1_000_000, "spans to send")
	batch := flag.Int("batch", 512, "spans per request")
	clients := flag.Int("clients", 4, "concurrent clients")
	every := flag.Int("report", 100_000, "print a line every this many spans")
	db := flag.String("db", "", "store path (default: a new one in a temporary directory)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile here")
	noRedact := flag.Bool("no-redact", false, "turn the redaction off (an empty detector list)")
	randomIDs := flag.Bool("random-ids", false, "random trace IDs, as real OTLP senders make them (default: increasing IDs, which the store's ID index takes more cheaply)")
	flag.Parse()
	if err := run(*spans, *batch, *clients, *every, *db, *cpuprofile, *noRedact, *randomIDs); err != nil {
		log.Fatal(err)
	}
}

// marker starts every template trace ID; the batch number is written
// after it in each request's bytes.
var marker = []byte{0xde, 0xad, 0xbe, 0xef}

// template is one batch's protobuf bytes and where its trace IDs are.
func template(n int) ([]byte, []int) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	ra := rs.Resource().Attributes()
	ra.PutStr("service.name", "support-bot")
	ra.PutStr("service.version", "2.14.1")
	ra.PutStr("deployment.environment", "production")
	ra.PutStr("telemetry.sdk.language", "python")
	ra.PutStr("host.name", "web-7f9c")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("opentelemetry.instrumentation.openai_v2")
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for i := range n {
		s := ss.Spans().AppendEmpty()
		var tid [16]byte
		copy(tid[:], marker)
		binary.BigEndian.PutUint32(tid[8:], uint32(i))
		copy(tid[12:], []byte{0xfe, 0xed, 0xfa, 0xce})
		s.SetTraceID(tid)
		s.SetSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, byte(i >> 8), byte(i)})
		s.SetName("chat gpt-4o")
		s.SetKind(ptrace.SpanKindClient)
		t := start.Add(time.Duration(i) * time.Millisecond)
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(t))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(t.Add(870 * time.Millisecond)))
		a := s.Attributes()
		a.PutStr("gen_ai.operation.name", "chat")
		a.PutStr("gen_ai.provider.name", "openai")
		a.PutStr("gen_ai.request.model", []string{"gpt-4o", "gpt-4o-mini", "claude-sonnet-4"}[i%3])
		a.PutStr("gen_ai.response.model", "gpt-4o-2024-08-06")
		a.PutStr("gen_ai.response.id", "chatcmpl-"+strconv.Itoa(i))
		a.PutInt("gen_ai.usage.input_tokens", int64(400+i%300))
		a.PutInt("gen_ai.usage.output_tokens", int64(80+i%50))
		a.PutDouble("gen_ai.request.temperature", 0.2)
		a.PutInt("gen_ai.request.max_tokens", 512)
		a.PutStr("server.address", "api.openai.com")
		a.PutStr("app.route", "/support/answer")
		a.PutStr("gen_ai.system_instructions", `[{"type":"text","content":"You are the support assistant for an online shop. Answer in two sentences, cite the order number, and never promise refunds."}]`)
		a.PutStr("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"My order 48213 arrived with a cracked screen protector and the charger is missing. I ordered it on the 3rd and was told it would ship with everything in the box. What can you do, and how long will a replacement take?"}]},`+
			`{"role":"assistant","parts":[{"type":"tool_call","id":"call_`+strconv.Itoa(i)+`","name":"lookup_order","arguments":{"order_id":"48213"}}]},`+
			`{"role":"tool","parts":[{"type":"tool_call_response","id":"call_`+strconv.Itoa(i)+`","response":{"status":"delivered","items":["phone case","screen protector","charger"],"carrier":"DHL"}}]}]`)
		a.PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"I am sorry order 48213 arrived damaged and incomplete. I have opened a replacement for the screen protector and the charger; it ships today and arrives in 2-3 business days."}],"finish_reason":"stop"}]`)
		sl := a.PutEmptySlice("gen_ai.response.finish_reasons")
		sl.AppendEmpty().SetStr("stop")
	}
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		log.Fatal(err)
	}
	var offs []int
	for i := 0; ; {
		j := bytes.Index(b[i:], marker)
		if j < 0 {
			break
		}
		if bytes.Equal(b[i+j+12:i+j+16], []byte{0xfe, 0xed, 0xfa, 0xce}) {
			offs = append(offs, i+j)
		}
		i += j + 1
	}
	if len(offs) != n {
		log.Fatalf("found %d trace IDs in the template, want %d", len(offs), n)
	}
	return b, offs
}

func run(spans, batch, clients, every int, dbPath, cpuprofile string, noRedact, randomIDs bool) error {
	ctx := context.Background()
	if dbPath == "" {
		dir, err := os.MkdirTemp("", "assay-bench-collect")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		dbPath = filepath.Join(dir, "assay.db")
	}
	st, err := sqlite.Open(ctx, dbPath)
	if err != nil {
		return err
	}
	defer st.Close()
	o := collect.Options{Addr: "127.0.0.1:0", Store: st}
	if noRedact {
		if o.Redact, err = traces.NewRedactor(&spec.Redact{Detectors: []string{}}); err != nil {
			return err
		}
	}
	rc, err := collect.New(o)
	if err != nil {
		return err
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	addrc, done := make(chan string, 1), make(chan error, 1)
	go func() { done <- rc.ListenAndServe(sctx, func(a string) { addrc <- a }) }()
	url := "http://" + <-addrc + collect.Path

	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}

	tmpl, offs := template(batch)
	batches := (spans + batch - 1) / batch
	var next, sent atomic.Int64
	next.Store(-1)
	var mu sync.Mutex
	lastReport, lastTime, t0 := int64(0), time.Now(), time.Now()
	fmt.Printf("%d spans in batches of %d (%d bytes each as protobuf), %d clients, %d CPUs\n", spans, batch, len(tmpl), clients, runtime.NumCPU())
	fmt.Printf("%10s %10s %12s %14s %10s %10s\n", "spans", "spans/s", "cumulative/s", "spans/CPU-s", "RSS MiB", "heap MiB")
	cpu0 := cpuSeconds()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	var wg sync.WaitGroup
	errc := make(chan error, clients)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := bytes.Clone(tmpl)
			for {
				b := next.Add(1)
				if b >= int64(batches) {
					return
				}
				for _, off := range offs {
					if randomIDs {
						crand.Read(body[off : off+16])
					} else {
						binary.BigEndian.PutUint32(body[off+4:], uint32(b))
					}
				}
				resp, err := client.Post(url, "application/x-protobuf", bytes.NewReader(body))
				if err != nil {
					errc <- err
					return
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					errc <- fmt.Errorf("batch %d: %s", b, resp.Status)
					return
				}
				n := sent.Add(int64(batch))
				mu.Lock()
				if n-lastReport >= int64(every) {
					now := time.Now()
					cpu := cpuSeconds() - cpu0
					rss, heap := memory()
					fmt.Printf("%10d %10.0f %12.0f %14.0f %10.1f %10.1f\n", n, float64(n-lastReport)/now.Sub(lastTime).Seconds(),
						float64(n)/now.Sub(t0).Seconds(), float64(n)/cpu, rss, heap)
					lastReport, lastTime = n, time.Now()
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(t0)
	select {
	case err := <-errc:
		return err
	default:
	}
	stop()
	if err := <-done; err != nil {
		return err
	}
	n, err := st.CountTraces(ctx, store.TraceFilter{})
	if err != nil {
		return err
	}
	c := rc.Counts()
	fi, _ := os.Stat(dbPath)
	size := int64(0)
	if fi != nil {
		size = fi.Size()
	}
	cpu := cpuSeconds() - cpu0
	fmt.Printf("%d spans sent in %.1f s: %.0f spans/s, %.1f CPU-s (%.0f spans per CPU-second, %.0f µs of CPU per span); %d traces in the store (%d stored by the receiver, %d redactions); store %.0f MiB\n",
		sent.Load(), elapsed.Seconds(), float64(sent.Load())/elapsed.Seconds(), cpu, float64(sent.Load())/cpu, cpu/float64(sent.Load())*1e6, n, c.Stored, c.Redactions, float64(size)/(1<<20))
	return nil
}

// cpuSeconds is the CPU time the process has used (user and system; the
// clients' share included).
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// memory is the process's resident set (VmRSS) and the Go heap in use
// after a collection, in MiB.
func memory() (rss, heap float64) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	heap = float64(m.HeapInuse) / (1 << 20)
	b, err := os.ReadFile("/proc/self/status")
	if err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
				kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
				rss = kb / 1024
			}
		}
	}
	return rss, heap
}
