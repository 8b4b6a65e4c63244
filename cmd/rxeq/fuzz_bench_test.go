package main

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"syscall"
	"testing"
	"time"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/fuzz"
	"github.com/rextio/rxeq/jsexport"
)

// BenchmarkFuzz measures `rxeq fuzz` throughput in programs per second,
// in one run so that the numbers compare: oracle+fallback alone, then
// with the native executor in workers as `rxeq fuzz` runs it (a pooled
// worker per goroutine, programs built in chunks of fuzz.DefaultChunk),
// the way it ran before pools (a worker and a compiler run per program and
// per variant), the default set (native's bit-identical variants, one per
// program in turn) and every program through every variant
// (--all-variants). It reports each rate, native's share of
// oracle+fallback's rate and the default set's share of native's.
//
//	go test ./cmd/rxeq -run '^$' -bench 'Fuzz$' -benchtime 3x
func BenchmarkFuzz(b *testing.B) {
	if _, err := exec.LookPath("cc"); err != nil {
		b.Skip("no C compiler")
	}
	const programs = 64
	session := func(execs string, own, allVariants bool) time.Duration {
		b.Helper()
		wall, _ := fuzzSession{execs: execs, isolate: true, metamorphic: 1, allVariants: allVariants, noSlots: own}.run(b, programs)
		return wall
	}
	variants := defaultFuzzExecutors()
	session(variants, false, true) // the runtime libraries, built once
	var base, native, own, rotated, all time.Duration
	for b.Loop() {
		base += session("oracle,fallback", false, false)
		native += session("oracle,fallback,native", false, false)
		rotated += session(variants, false, false)
		all += session(variants, false, true)
		own += session("oracle,fallback,native", true, false)
	}
	rate := func(d time.Duration) float64 { return float64(programs*b.N) / d.Seconds() }
	b.ReportMetric(rate(base), "oracle+fallback-programs/s")
	b.ReportMetric(rate(native), "native-programs/s")
	b.ReportMetric(rate(rotated), "variants-programs/s")
	b.ReportMetric(rate(all), "all-variants-programs/s")
	b.ReportMetric(rate(own), "native-worker-per-program-programs/s")
	b.ReportMetric(rate(native)/rate(base), "native/oracle+fallback")
	b.ReportMetric(rate(rotated)/rate(native), "variants/native")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkFuzzTFJS measures `rxeq fuzz` throughput with the TensorFlow.js
// executors added: oracle+fallback alone, then with tfjs-cpu and
// tfjs-wasm (one node process each for the whole session, every program
// exported and sent in a prepare), with rxeq fuzz's default checks (a
// metamorphic variant, invariance, the ONNX round trip). Programs draw
// no NaN and no edge values, so that the known discrepancies' reductions
// do not count.
//
//	go test ./cmd/rxeq -run '^$' -bench FuzzTFJS -benchtime 2x
func BenchmarkFuzzTFJS(b *testing.B) {
	dir := tfjsDir()
	if err := jsexport.Available(executor.TFJSWasm, jsexport.ExecutorOptions{Dir: dir}); err != nil {
		b.Skip(err)
	}
	const programs = 64
	session := func(execs string) time.Duration {
		b.Helper()
		wall, _ := fuzzSession{execs: execs, seed: 1000, gen: fuzz.Config{Exclude: fuzz.FeatNaN | fuzz.FeatEdges}}.defaultChecks().run(b, programs)
		return wall
	}
	var base, tfjs time.Duration
	for b.Loop() {
		base += session("oracle,fallback")
		tfjs += session("oracle,fallback,tfjs-cpu,tfjs-wasm")
	}
	rate := func(d time.Duration) float64 { return float64(programs*b.N) / d.Seconds() }
	b.ReportMetric(rate(base), "oracle+fallback-programs/s")
	b.ReportMetric(rate(tfjs), "tfjs-programs/s")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkFuzzORT measures `rxeq fuzz` throughput with the ONNX Runtime
// executors added, as `rxeq fuzz` runs them (isolated, a pooled worker per
// goroutine): oracle+fallback alone, then with onnxruntime and
// onnxruntime-noopt, with rxeq's collector settings (tuneGC) and, for
// comparison, with Go's default GOGC=100. The checks are rxeq fuzz's
// defaults (a metamorphic variant, invariance, the ONNX round trip), the
// default generator is
// used (NaN and edge values included), and the ledger's known
// discrepancies are reduced as findings are, so the rate is what a
// user's campaign sees.
//
//	go test ./cmd/rxeq -run '^$' -bench FuzzORT -benchtime 2x
func BenchmarkFuzzORT(b *testing.B) {
	if err := (builtin.Config{}).FromEnv(os.Getenv).Available(executor.ONNXRuntime); err != nil {
		b.Skip(err)
	}
	const programs = 64
	session := func(execs string) time.Duration {
		b.Helper()
		wall, _ := fuzzSession{execs: execs, isolate: true}.defaultChecks().run(b, programs)
		return wall
	}
	const execs = "oracle,fallback,onnxruntime,onnxruntime-noopt"
	var base, ort, gogc100 time.Duration
	for b.Loop() {
		restore := likeMain()
		base += session("oracle,fallback")
		ort += session(execs)
		restore()
		// Go's default collector (GOGC=100), in this process and the
		// workers, as rxeq ran before tuneGC.
		gogc, had := os.LookupEnv("GOGC")
		_ = os.Setenv("GOGC", "100")
		gogc100 += session(execs)
		if had {
			_ = os.Setenv("GOGC", gogc)
		} else {
			_ = os.Unsetenv("GOGC")
		}
	}
	rate := func(d time.Duration) float64 { return float64(programs*b.N) / d.Seconds() }
	b.ReportMetric(rate(base), "oracle+fallback-programs/s")
	b.ReportMetric(rate(ort), "onnxruntime-programs/s")
	b.ReportMetric(rate(gogc100), "onnxruntime-gogc100-programs/s")
	b.ReportMetric(0, "ns/op")
}

// likeMain sets this process's collector as rxeq's main does (tuneGC),
// so that a benchmark of a command measures what a user runs; the
// workers it starts do the same (TestMain). It returns the function
// that puts the test process's settings back.
func likeMain() (restore func()) {
	percent, limit := debug.SetGCPercent(-1), debug.SetMemoryLimit(-1)
	debug.SetGCPercent(percent)
	tuneGC(os.Getenv)
	return func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	}
}

// BenchmarkFuzzRoundTrip measures what the ONNX round trip
// (fuzz.Checker.RoundTrip, on by default) costs `rxeq fuzz`, with
// --roundtrip=false and with it, for oracle+fallback (where its share is
// largest) and, with a C compiler, with native as well (the default
// set), and for the round trip alone (--executors oracle). It reports
// programs per second (wall time) and CPU milliseconds per program (this
// process's and its workers', getrusage), and each ratio of the cost
// with the round trip over the cost without: on a loaded machine the
// wall-time rates swing with the other load, the CPU time much less.
//
//	go test ./cmd/rxeq -run '^$' -bench FuzzRoundTrip -benchtime 3x
func BenchmarkFuzzRoundTrip(b *testing.B) {
	const programs = 64
	type cost struct{ wall, cpu time.Duration }
	session := func(execs string, roundTrip bool) cost {
		b.Helper()
		sess := fuzzSession{execs: execs, isolate: true}.defaultChecks()
		sess.roundTrip = roundTrip
		wall, cpu := sess.run(b, programs)
		return cost{wall, cpu}
	}
	_, ccErr := exec.LookPath("cc")
	if ccErr == nil {
		session("oracle,fallback,native", false) // the runtime library, built once
	}
	costs := map[string]*cost{}
	add := func(name, execs string, roundTrip bool) {
		c := session(execs, roundTrip)
		if costs[name] == nil {
			costs[name] = &cost{}
		}
		costs[name].wall += c.wall
		costs[name].cpu += c.cpu
	}
	for b.Loop() {
		add("oracle+fallback", "oracle,fallback", false)
		add("oracle+fallback+roundtrip", "oracle,fallback", true)
		add("roundtrip-alone", "oracle", true)
		if ccErr == nil {
			add("native", "oracle,fallback,native", false)
			add("native+roundtrip", "oracle,fallback,native", true)
		}
	}
	n := float64(programs * b.N)
	for name, c := range costs {
		b.ReportMetric(n/c.wall.Seconds(), name+"-programs/s")
		b.ReportMetric(float64(c.cpu.Milliseconds())/n, name+"-cpu-ms/program")
	}
	ratio := func(with, without string) {
		b.ReportMetric(costs[with].cpu.Seconds()/costs[without].cpu.Seconds(), with+"/"+without+"-cpu")
		b.ReportMetric(costs[with].wall.Seconds()/costs[without].wall.Seconds(), with+"/"+without+"-wall")
	}
	ratio("oracle+fallback+roundtrip", "oracle+fallback")
	if ccErr == nil {
		ratio("native+roundtrip", "native")
	}
	b.ReportMetric(0, "ns/op")
}

// fuzzSession is one `rxeq fuzz` session of a benchmark: count programs
// from seed through execs, in workers as rxeq fuzz runs them when
// isolated, with the checks set below.
type fuzzSession struct {
	execs       string
	seed        uint64
	gen         fuzz.Config
	isolate     bool // native code and ONNX Runtime in pooled workers
	roundTrip   bool // the ONNX round trip (fuzz.ONNXTrip)
	metamorphic int  // fuzz.Checker.Metamorphic
	invariance  bool // fuzz.Checker.Invariance
	allVariants bool // every variant on every program, not one in turn
	noSlots     bool // a worker per program, as before pools
}

// defaultChecks is rxeq fuzz's checks: a metamorphic variant, invariance
// and the ONNX round trip.
func (s fuzzSession) defaultChecks() fuzzSession {
	s.metamorphic, s.invariance, s.roundTrip = 1, true, true
	return s
}

// run runs s over count programs and returns its wall time and the CPU
// time of this process and its workers (getrusage) meanwhile.
func (s fuzzSession) run(b *testing.B, count int) (wall, cpu time.Duration) {
	b.Helper()
	ns := nativeSetup{timeout: defaultFuzzTimeout}
	if s.isolate {
		cache, cleanup, err := fuzzCache()
		if err != nil {
			b.Fatal(err)
		}
		defer cleanup()
		ns = nativeSetup{isolate: true, cacheDir: cache, timeout: defaultFuzzTimeout,
			programCC: resolveProgramCC("auto"), rtCache: runtimeCache()}
	}
	checker, err := fuzzChecker(s.execs, ns, s.roundTrip)
	if err != nil {
		b.Fatal(err)
	}
	defer executor.CloseAll(checker.Executors)
	checker.Metamorphic, checker.Invariance = s.metamorphic, s.invariance
	checker.RotateTwins = !s.allVariants
	r := &fuzzRun{Campaign: fuzz.Campaign{Seed: max(s.seed, 1), Count: count, Checker: checker, Dir: b.TempDir(),
		Parallel: runtime.GOMAXPROCS(0), Config: s.gen, NoSlots: s.noSlots}, execList: s.execs, isolate: s.isolate}
	c0 := processCPU()
	st, err := r.run(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	if st.Programs != count {
		b.Fatalf("%d programs ran, want %d", st.Programs, count)
	}
	return st.Elapsed, processCPU() - c0
}

// processCPU is the user and system time of this process and of its
// children that have exited.
func processCPU() time.Duration {
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	d := time.Duration(0)
	for _, t := range []syscall.Timeval{self.Utime, self.Stime, kids.Utime, kids.Stime} {
		d += time.Duration(t.Nano())
	}
	return d
}
