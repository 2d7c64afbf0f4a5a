package harness

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/assay-eval/assay/internal/load"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/stats"
)

// errDrained is the cause of a step's context when requests still in
// flight after its drain were cancelled: they are recorded as time-outs.
var errDrained = errors.New("still in flight after the step's drain")

// normalise sets the defaults and checks the options.
func (o Options) normalise(targets []Target) (Options, error) {
	var problems []error
	switch o.Mode {
	case load.ModeRate, load.ModeConcurrency:
	default:
		problems = append(problems, fmt.Errorf("mode %q: want %s or %s", o.Mode, load.ModeRate, load.ModeConcurrency))
	}
	if len(o.Levels) == 0 {
		problems = append(problems, errors.New("no levels to run"))
	}
	for _, l := range o.Levels {
		if !(l > 0) || math.IsInf(l, 0) {
			problems = append(problems, fmt.Errorf("level %g: must be above 0", l))
		}
		if o.Mode == load.ModeConcurrency && l != math.Trunc(l) {
			problems = append(problems, fmt.Errorf("concurrency %g: must be a whole number", l))
		}
	}
	if o.Duration <= 0 {
		problems = append(problems, fmt.Errorf("duration %s: must be above 0", o.Duration))
	}
	if o.Warmup < 0 {
		problems = append(problems, fmt.Errorf("warm-up %s: must not be negative", o.Warmup))
	}
	switch o.Arrivals {
	case "":
		o.Arrivals = load.ArrivalsPoisson
	case load.ArrivalsPoisson, load.ArrivalsUniform:
	default:
		problems = append(problems, fmt.Errorf("arrivals %q: want %s or %s", o.Arrivals, load.ArrivalsPoisson, load.ArrivalsUniform))
	}
	if o.MaxRequests < 0 || o.MaxSpend < 0 || math.IsNaN(o.MaxSpend) {
		problems = append(problems, errors.New("the caps must not be negative"))
	}
	if len(targets) == 0 {
		problems = append(problems, errors.New("no target to load"))
	}
	for _, t := range targets {
		if t.Provider == nil {
			problems = append(problems, fmt.Errorf("target %s: no provider", t.Name))
		}
		if len(t.Requests) == 0 {
			problems = append(problems, fmt.Errorf("target %s: no request to send", t.Name))
		}
		if t.CaseIDs != nil && len(t.CaseIDs) != len(t.Requests) {
			problems = append(problems, fmt.Errorf("target %s: %d case IDs for %d requests", t.Name, len(t.CaseIDs), len(t.Requests)))
		}
	}
	if o.Drain <= 0 {
		o.Drain = max(o.Duration, 5*time.Second)
	}
	if o.Cores <= 0 {
		o.Cores = min(runtime.GOMAXPROCS(0), runtime.NumCPU())
	}
	if o.Now == nil {
		o.Now = wallNow
	}
	return o, errors.Join(problems...)
}

// Run runs a load test: each target in turn, its levels in the order
// given, each a warm-up then a measured window, the step's requests and
// then the step handed to the sink as each step ends. A target's later
// steps are skipped (recorded with the reason) once it is clearly past its
// knee; every later step once a cap would be exceeded. When stop closes,
// requests in flight are cancelled at once, what was measured is kept, the
// steps not run are recorded as skipped, and Run returns ErrInterrupted.
func Run(ctx context.Context, targets []Target, o Options, sink Sink, stop <-chan struct{}) error {
	o, err := o.normalise(targets)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if stop != nil {
		go func() {
			select {
			case <-stop:
				cancel(ErrInterrupted)
			case <-ctx.Done():
			}
		}()
	}
	r := &runner{o: o, budget: &budget{maxRequests: o.MaxRequests, maxSpend: o.MaxSpend}}
	for ti, t := range targets {
		skip := ""
		var next atomic.Int64 // the next of t.Requests to send, cycled
		for si, level := range o.Levels {
			if skip == "" {
				skip = r.stopped(ctx)
			}
			if skip != "" {
				st := record.LoadStep{RunID: o.RunID, Target: t.Name, Step: si, Mode: o.Mode, Level: level, Skipped: skip, Cores: o.Cores}
				if err := sink.Steps([]record.LoadStep{st}); err != nil {
					return fmt.Errorf("storing step %d of %s: %w", si, t.Name, err)
				}
				continue
			}
			st, reqs := r.step(ctx, t, load.StepSeed(o.Seed, ti, si), si, level, &next)
			if err := sink.Requests(reqs); err != nil {
				return fmt.Errorf("storing the requests of step %d of %s: %w", si, t.Name, err)
			}
			if err := sink.Steps([]record.LoadStep{st}); err != nil {
				return fmt.Errorf("storing step %d of %s: %w", si, t.Name, err)
			}
			if o.Progress != nil {
				o.Progress(st)
			}
			if ctx.Err() == nil {
				skip = load.PastKnee(st, reqs, o.SLO)
			}
		}
	}
	if errors.Is(context.Cause(ctx), ErrInterrupted) {
		return ErrInterrupted
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}

// stopped says why no more steps may run ("" when they may).
func (r *runner) stopped(ctx context.Context) string {
	if errors.Is(context.Cause(ctx), ErrInterrupted) {
		return "interrupted before this step"
	}
	if ctx.Err() != nil {
		return "cancelled before this step"
	}
	if why := r.budget.exhausted(); why != "" {
		return "not run: " + why
	}
	return ""
}

// runner runs the steps of one load test.
type runner struct {
	o      Options
	budget *budget
}

// collector gathers a step's measurements from its requests' goroutines.
type collector struct {
	mu       sync.Mutex
	reqs     []record.LoadRequest
	lateness []float64 // ms, open loop
	// sent counts the window's requests started and not cancelled by an
	// interrupt (those were not measured).
	sent atomic.Int64
}

func (c *collector) add(r record.LoadRequest, lateMS float64, late bool) {
	c.mu.Lock()
	c.reqs = append(c.reqs, r)
	if late {
		c.lateness = append(c.lateness, lateMS)
	}
	c.mu.Unlock()
}

// meter measures the harness's CPU over the window.
type meter struct {
	wall time.Time
	cpu  time.Duration
	ok   bool
}

func startMeter() meter {
	cpu, ok := processCPU()
	return meter{wall: wallNow(), cpu: cpu, ok: ok}
}

// cores is the CPU used since the meter started, in cores (NaN when
// unknown).
func (m meter) cores() float64 {
	cpu, ok := processCPU()
	wall := since(m.wall)
	if !ok || !m.ok || wall <= 0 {
		return math.NaN()
	}
	return float64(cpu-m.cpu) / float64(wall)
}

// step runs one step of one target.
func (r *runner) step(ctx context.Context, t Target, seed uint64, si int, level float64, next *atomic.Int64) (record.LoadStep, []record.LoadRequest) {
	o := r.o
	st := record.LoadStep{RunID: o.RunID, Target: t.Name, Step: si, Mode: o.Mode, Level: level, Cores: o.Cores}
	stepCtx, cancelStep := context.WithCancelCause(ctx)
	defer cancelStep(nil)
	c := &collector{}
	var wg sync.WaitGroup
	t0 := wallNow()
	winStart := t0.Add(o.Warmup)
	winEnd := winStart.Add(o.Duration)
	var m meter
	started := false
	startWindow := func() {
		if !started {
			sleepUntil(ctx, winStart)
			st.Started = o.Now()
			m = startMeter()
			started = true
		}
	}
	var probe *lateProbe
	var end time.Time
	pick := func() (provider.Request, string) {
		i := int((next.Add(1) - 1) % int64(len(t.Requests)))
		id := t.Requests[i].CaseID
		if t.CaseIDs != nil {
			id = t.CaseIDs[i]
		}
		return t.Requests[i], id
	}
	first := firstEstimate(t)

	switch o.Mode {
	case load.ModeRate:
		sched, _ := Schedule(o.Arrivals, level, o.Warmup+o.Duration, seed)
		// Sized for the window's arrivals: no copying as answers come in.
		warm, _ := slices.BinarySearch(sched, o.Warmup)
		measuredN := len(sched) - warm
		c.reqs = make([]record.LoadRequest, 0, measuredN)
		c.lateness = make([]float64, 0, measuredN)
		// Each request runs on an idle goroutine of the step when there is
		// one, or a new one: a request never waits for a worker (the loop
		// stays open), and a goroutine whose stack grew in a call is reused
		// (about a tenth of the harness's CPU went into growing new ones).
		work := make(chan func())
		worker := func(job func()) {
			for ok := true; ok; job, ok = <-work {
				job()
			}
		}
		timer := time.NewTimer(time.Hour)
		for _, at := range sched {
			due := t0.Add(at)
			measured := at >= o.Warmup
			if measured {
				startWindow()
			}
			if !waitUntil(ctx, timer, due) {
				break
			}
			if !r.budget.take(first) {
				break
			}
			if measured {
				c.sent.Add(1)
			}
			req, id := pick()
			wg.Add(1)
			job := func() {
				defer wg.Done()
				r.call(ctx, stepCtx, t, &req, id, due, winStart, measured, true, c)
			}
			select {
			case work <- job:
			default:
				go worker(job)
			}
		}
		timer.Stop()
		close(work)
		startWindow()
		if ctx.Err() == nil && r.budget.exhausted() == "" {
			sleepUntil(ctx, winEnd)
		}
		end = wallNow()
	case load.ModeConcurrency:
		halt := make(chan struct{})
		var once sync.Once
		stopIssuing := func() { once.Do(func() { close(halt) }) }
		for range int(level) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					now := wallNow()
					select {
					case <-halt:
						return
					case <-ctx.Done():
						return
					default:
					}
					if !now.Before(winEnd) {
						return
					}
					if !r.budget.take(first) {
						stopIssuing()
						return
					}
					measured := !now.Before(winStart)
					if measured {
						c.sent.Add(1)
					}
					req, id := pick()
					r.call(ctx, stepCtx, t, &req, id, now, winStart, measured, false, c)
				}
			}()
		}
		startWindow()
		probe = startProbe()
		sleepUntilOr(ctx, winEnd, halt)
		stopIssuing()
		end = wallNow()
		probe.stop()
	}
	st.ClientCPU = m.cores()
	st.DurationMS = max(0, msOf(end.Sub(winStart)))

	// Drain: requests in flight may finish for a while, then are cancelled.
	drained := make(chan struct{})
	go func() { wg.Wait(); close(drained) }()
	timer := time.NewTimer(o.Drain)
	select {
	case <-drained:
	case <-timer.C:
		cancelStep(errDrained)
		<-drained
	}
	timer.Stop()

	c.mu.Lock()
	reqs := c.reqs
	st.Sent = int(c.sent.Load())
	lateness := c.lateness
	c.mu.Unlock()
	if probe != nil {
		lateness = probe.samples()
	}
	slices.SortFunc(reqs, func(a, b record.LoadRequest) int { return cmp.Compare(a.StartMS, b.StartMS) })
	for i := range reqs {
		reqs[i].Seq = i
		reqs[i].Step = si
		if reqs[i].ErrorKind != string(provider.KindTimeout) || reqs[i].Status != drainStatus {
			st.Done++
		} else {
			reqs[i].Status = 0
		}
	}
	if len(lateness) > 0 {
		st.LatenessP95MS = stats.Quantile(lateness, 0.95)
	}
	st.Saturated, _ = load.Saturated(st)
	return st, reqs
}

// drainStatus marks, inside step, a request cancelled after the drain
// (never stored: it is reset to 0).
const drainStatus = -1

// call makes one request and records it when it is measured: not during
// the warm-up, and not cancelled by an interrupt (a measurement cut short
// by the user is not one). req is the caller's own copy of the request,
// handed to the provider as it is (not copied again per request).
func (r *runner) call(ctx, stepCtx context.Context, t Target, req *provider.Request, caseID string, due, winStart time.Time, measured, scheduled bool, c *collector) {
	start := wallNow()
	resp, err := t.Provider.Complete(stepCtx, req)
	elapsed := since(start)
	cost := 0.0
	if err == nil && resp != nil && t.Price != nil {
		cost = t.Price(resp.Usage.Input, resp.Usage.Output)
	}
	r.budget.done(cost)
	if !measured {
		return
	}
	if ctx.Err() != nil {
		c.sent.Add(-1)
		return
	}
	rec := record.LoadRequest{
		RunID: r.o.RunID, Target: t.Name, CaseID: caseID,
		StartMS: msOf(start.Sub(winStart)), LatencyMS: msOf(elapsed),
		FirstTokenMS: math.NaN(), InterTokenMS: math.NaN(), CostUSD: cost,
	}
	switch {
	case err != nil && errors.Is(context.Cause(stepCtx), errDrained):
		rec.ErrorKind, rec.Status = string(provider.KindTimeout), drainStatus
	case err != nil:
		rec.ErrorKind = string(provider.KindOf(err))
		var pe *provider.Error
		if errors.As(err, &pe) {
			rec.Status = pe.Status
		}
	case resp != nil:
		rec.InputTokens, rec.OutputTokens = resp.Usage.Input, resp.Usage.Output
		if resp.FirstToken > 0 {
			rec.FirstTokenMS = msOf(resp.FirstToken)
			// The mean gap between the first token and the last: what
			// streaming spent per token after the first (vLLM's TPOT).
			if resp.Usage.Output > 1 && elapsed > resp.FirstToken {
				rec.InterTokenMS = msOf(elapsed-resp.FirstToken) / float64(resp.Usage.Output-1)
			}
		}
	}
	c.add(rec, msOf(start.Sub(due)), scheduled)
}

// firstEstimate is the cost a request is assumed to have before any has
// been answered: the price of its prompt (about 4 characters a token) and
// of max_tokens output (1,024 when unset).
func firstEstimate(t Target) float64 {
	if t.Price == nil {
		return 0
	}
	in, out := 0, 0
	for _, r := range t.Requests {
		n := 0
		for _, m := range r.Messages {
			n += len(m.Content)/4 + 4
		}
		in = max(in, n)
		o := 1024
		if r.Params.MaxTokens != nil {
			o = *r.Params.MaxTokens
		}
		out = max(out, o)
	}
	return t.Price(in, out)
}

// budget holds the test's caps across targets and steps.
type budget struct {
	mu          sync.Mutex
	maxRequests int
	maxSpend    float64
	started     int
	inFlight    int
	spent       float64
	dearest     float64
	answered    bool
	reason      string
}

// take reserves one request, or refuses when it could exceed a cap: the
// requests started, or the spend — what was spent plus every request in
// flight and this one at the dearest cost seen so far (first before any
// answer).
func (b *budget) take(first float64) bool {
	if b.uncapped() {
		return true // nothing to count: no lock on the open loop's path
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.reason != "" {
		return false
	}
	if b.maxRequests > 0 && b.started >= b.maxRequests {
		b.reason = fmt.Sprintf("--max-requests %d reached", b.maxRequests)
		return false
	}
	if b.maxSpend > 0 {
		per := first
		if b.answered {
			per = b.dearest
		}
		if b.spent+float64(b.inFlight+1)*per > b.maxSpend {
			b.reason = fmt.Sprintf("--max-spend $%g reached (spent $%.4f; one more request at up to $%.4f, with %d in flight, could exceed it)",
				b.maxSpend, b.spent, per, b.inFlight)
			return false
		}
	}
	b.started++
	b.inFlight++
	return true
}

func (b *budget) done(cost float64) {
	if b.uncapped() {
		return
	}
	b.mu.Lock()
	b.inFlight--
	b.spent += cost
	if cost > 0 {
		b.answered = true
		b.dearest = max(b.dearest, cost)
	}
	b.mu.Unlock()
}

// uncapped says the test has no cap: take always agrees, and nothing
// need be counted.
func (b *budget) uncapped() bool { return b.maxRequests == 0 && b.maxSpend == 0 }

func (b *budget) exhausted() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.reason
}

// sleepUntil waits until t; false when ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	return sleepUntilOr(ctx, t, nil)
}

func sleepUntilOr(ctx context.Context, t time.Time, or <-chan struct{}) bool {
	d := until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	case <-or:
		return false
	}
}

// waitUntil waits on timer until t; false when ctx ended first.
func waitUntil(ctx context.Context, timer *time.Timer, t time.Time) bool {
	d := until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer.Reset(d)
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		timer.Stop()
		return false
	}
}

// lateProbe measures how late the scheduler wakes a sleeping goroutine
// (a closed loop has no schedule of its own to be late against).
type lateProbe struct {
	done chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	late []float64
}

const probeEvery = 5 * time.Millisecond

func startProbe() *lateProbe {
	p := &lateProbe{done: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		timer := time.NewTimer(probeEvery)
		defer timer.Stop()
		due := wallNow().Add(probeEvery)
		for {
			select {
			case <-p.done:
				return
			case <-timer.C:
			}
			now := wallNow()
			p.mu.Lock()
			p.late = append(p.late, max(0, msOf(now.Sub(due))))
			p.mu.Unlock()
			due = now.Add(probeEvery)
			timer.Reset(probeEvery)
		}
	}()
	return p
}

func (p *lateProbe) stop() { close(p.done); p.wg.Wait() }

func (p *lateProbe) samples() []float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.late)
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
