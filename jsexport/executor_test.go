package jsexport_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/compare"
	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/executor/builtin"
	"github.com/rextio/rxeq/external"
	"github.com/rextio/rxeq/harness"
	"github.com/rextio/rxeq/jsexport"
	"github.com/rextio/rxeq/ledger"
	"github.com/rextio/rxeq/oracle"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/scenarios"
	"github.com/rextio/rxeq/tensor"
)

var both = []executor.Name{executor.TFJSCPU, executor.TFJSWasm}

func config() builtin.Config {
	return builtin.Config{TFJSDir: tfjsDir()}
}

// prepareBoth prepares the program through tfjs-cpu and tfjs-wasm.
func prepareBoth(f *program.File, p *ir.Program) []executor.Prepared {
	GinkgoHelper()
	var prs []executor.Prepared
	for _, name := range both {
		e, err := jsexport.NewExecutor(name, opts())
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(e.Close)
		pr, err := e.Prepare(context.Background(), f, p)
		Expect(err).NotTo(HaveOccurred(), string(name))
		prs = append(prs, pr)
	}
	return prs
}

var _ = Describe("the TensorFlow.js executors", Label("tfjs", "slow"), func() {
	It("run the whole catalog, the edge scenarios included, within tolerance of the oracle, with the oracle's error texts; every failure is a ledger entry's", func() {
		needTFJS()
		files, err := scenarios.Catalog()
		Expect(err).NotTo(HaveOccurred())
		sel, err := builtin.Select(both, config(), nil)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(sel.Close)
		Expect(sel.Unavailable).To(BeEmpty())
		res, err := harness.Run(context.Background(), files, harness.Options{Executors: sel.Executors, SkipLocks: true, Backends: both})
		Expect(err).NotTo(HaveOccurred())
		led := ledger.Default()
		per, errs := map[executor.Name]int{}, map[executor.Name]int{}
		failed := map[string]bool{}
		for _, c := range res.Cases {
			per[c.Executor]++
			Expect(c.Path).To(Equal(c.Executor))
			if c.Error != "" {
				errs[c.Executor]++
				Expect(c.Error).To(MatchRegexp(`^\w+: Checked(Rem|Div): (division by zero|integer overflow) \(`))
			}
			if c.Status == harness.StatusPass {
				continue
			}
			Expect(c.Status).To(Equal(harness.StatusFail), c.Name()+": "+c.Message)
			failed[string(c.Executor)+" "+c.Scenario+"/"+c.Function] = true
			var ops []string
			switch c.Function {
			case "reduce_specials", "edge_specials":
				ops = []string{"Argmax"}
			case "binary_specials":
				ops = []string{"Maximum", "Minimum"}
			case "transcendental", "tails":
				ops = []string{"Sigmoid", "Tanh"}
			case "sigmoid_underflow":
				ops = []string{"Sigmoid"}
			}
			values := "finite"
			if c.Function == "binary_specials" {
				values = "nan"
			}
			e := led.Match(ledger.Case{Executor: string(c.Executor), Category: map[string]string{"finite": "accuracy", "nan": "nan-inf"}[values],
				Ops: ops, Values: values, Scenario: c.Scenario})
			Expect(e).NotTo(BeNil(), c.Name()+": no ledger entry: "+c.Message)
		}
		Expect(failed).To(Equal(map[string]bool{
			"tfjs-cpu op-edges/reduce_specials":   true, // tf.argMax skips NaN
			"tfjs-wasm op-edges/reduce_specials":  true,
			"tfjs-cpu edge-values/edge_specials":  true, // the same, on rows of 8
			"tfjs-wasm edge-values/edge_specials": true,
			"tfjs-wasm op-edges/binary_specials":  true, // tf.maximum/minimum drop NaN on wasm
			// XNNPACK's Sigmoid and Tanh beyond 1 ULP, Sigmoid's underflow to 0
			"tfjs-wasm op-accuracy/transcendental":    true,
			"tfjs-wasm op-accuracy/tails":             true,
			"tfjs-wasm op-accuracy/sigmoid_underflow": true,
		}))
		Expect(per[executor.TFJSCPU]).To(BeNumerically(">=", 50))
		Expect(per[executor.TFJSWasm]).To(Equal(per[executor.TFJSCPU]))
		Expect(errs[executor.TFJSCPU]).To(BeNumerically(">", 0))
		Expect(errs[executor.TFJSWasm]).To(Equal(errs[executor.TFJSCPU]))
		for _, pr := range res.Preparations {
			switch pr.Executor {
			case executor.TFJSCPU:
				Expect(pr.Framework).To(MatchRegexp(`^node \d+\.\d+\.\d+, tfjs-backend-cpu 4\.22\.0, tfjs-core 4\.22\.0$`))
			case executor.TFJSWasm:
				Expect(pr.Framework).To(MatchRegexp(`^node \d+\.\d+\.\d+, tfjs-backend-wasm 4\.22\.0, tfjs-core 4\.22\.0, threads 1$`))
			}
		}
	})

	It("compare the cpu and wasm backends bit for bit on the catalog, and the differences are where docs/tfjs.md says", func() {
		needTFJS()
		files, err := scenarios.Catalog()
		Expect(err).NotTo(HaveOccurred())
		ctx := context.Background()
		where := map[string]int{}   // scenario/function output -> elements that differ
		worst := map[string]int{}   // the greatest ULP distance between two numbers there
		far := map[string]float64{} // the greatest |cpu - wasm| / (2e-6 + 1e-5|cpu|) there
		var lines []string
		cases := 0
		for _, f := range files {
			p, err := program.Lower(f)
			Expect(err).NotTo(HaveOccurred())
			prs := prepareBoth(f, p)
			for _, fn := range f.Funcs {
				for _, batch := range f.Batches {
					in, err := harness.GenerateInputs(f, fn, batch, f.Seed, nil)
					Expect(err).NotTo(HaveOccurred())
					a, errA := prs[0].Run(ctx, fn.Name, in)
					b, errB := prs[1].Run(ctx, fn.Name, in)
					cases++
					if errA != nil || errB != nil {
						Expect(fmt.Sprint(errA)).To(Equal(fmt.Sprint(errB)), fn.Name)
						continue
					}
					for _, r := range fn.Results {
						ta, tb := a.Outputs[r.Name], b.Outputs[r.Name]
						for i := range ta.F32 {
							if math.Float32bits(ta.F32[i]) != math.Float32bits(tb.F32[i]) && !(ta.F32[i] != ta.F32[i] && tb.F32[i] != tb.F32[i]) {
								key := f.ScenarioName() + "/" + fn.Name + " " + r.Name
								where[key]++
								if !math.IsNaN(float64(ta.F32[i])) && !math.IsNaN(float64(tb.F32[i])) {
									worst[key] = max(worst[key], ulps(ta.F32[i], tb.F32[i]))
									x, y := float64(ta.F32[i]), float64(tb.F32[i])
									if !math.IsInf(x, 0) || !math.IsInf(y, 0) {
										far[key] = max(far[key], math.Abs(x-y)/(compare.DefaultATol+compare.DefaultRTol*math.Abs(x)))
									}
								}
								if where[key] <= 3 {
									lines = append(lines, fmt.Sprintf("%s/%s/b%d %s[%d]: cpu %v wasm %v", f.ScenarioName(), fn.Name, batch, r.Name, i, ta.F32[i], tb.F32[i]))
								}
							}
						}
						if !equalI64(ta.I64, tb.I64) {
							where[f.ScenarioName()+"/"+fn.Name+" "+r.Name]++
						}
					}
				}
			}
			for _, pr := range prs {
				Expect(pr.Close()).To(Succeed())
			}
		}
		Expect(cases).To(BeNumerically(">", 50))
		var keys []string
		for k, n := range where {
			keys = append(keys, fmt.Sprintf("%s: %d elements, at most %d ULP apart", k, n, worst[k]))
		}
		sort.Strings(keys)
		AddReportEntry("tfjs-cpu vs tfjs-wasm, outputs that differ in some bit", strings.Join(keys, "\n"))
		AddReportEntry("first differences", strings.Join(lines, "\n"))
		// The backends run different kernels (JavaScript loops against
		// XNNPACK), so float results differ in the last bits nearly
		// everywhere; what must not differ is a class or an exact value.
		for k := range where {
			Expect(k).NotTo(MatchRegexp(`(classes|argmax)`), "a class differs between the backends: %v", keys)
		}
		// Beyond the NaN that the wasm backend's maximum and minimum drop
		// (op-edges/binary_specials, a ledger entry), numbers are close:
		// a few ULP apart, except where sums cancel (logits) and where
		// the wasm backend gives 0 for a subnormal result (sigmoid and
		// softmax of large negative inputs): within rxeq's default
		// tolerance of each other (the batch statistics of row-tiles, a
		// mean over 5000 rows subtracted from each, come nearest).
		for k, u := range far {
			Expect(u).To(BeNumerically("<=", 1), "%s: %v", k, keys)
		}
	})

	It("compute each op as the oracle does on hand-computable cases and on the edges, through both backends", func() {
		needTFJS()
		_, p := parse("ops.rx", opsProgram)
		f, err := program.Parse("ops.rx", []byte(opsProgram))
		Expect(err).NotTo(HaveOccurred())
		prs := prepareBoth(f, p)
		orc, err := oracle.Executor{}.Prepare(context.Background(), f, p)
		Expect(err).NotTo(HaveOccurred())
		x := tensor.FromFloat32([]float32{1, 2, -3, 0.5, 0, 4}, 2, 3)
		y := tensor.FromFloat32([]float32{2, -1, 1, 0.25, 3, -2}, 2, 3)
		w := tensor.FromFloat32([]float32{1, 0, 0, 1, 1, 1}, 3, 2)
		in := map[string]*tensor.Tensor{"x": x, "y": y, "w": w}
		// Values a person computes from x, y and w above.
		e1, e2, e3 := math.Exp(1), math.Exp(2), math.Exp(-3)
		want := map[string][]float64{
			"add": {3, 1, -2, 0.75, 3, 2}, "sub": {-1, 3, -4, 0.25, -3, 6}, "mul": {2, -2, -3, 0.125, 0, -8},
			"div": {0.5, -2, -3, 2, 0, -2}, "neg": {-1, -2, 3, -0.5, 0, -4}, "mx": {2, 2, 1, 0.5, 3, 4}, "mn": {1, -1, -3, 0.25, 0, -2},
			"th": tanhs(1, 2, -3, 0.5, 0, 4), "ex": {e1, e2, e3, math.Exp(0.5), 1, math.Exp(4)},
			"lg": {0, math.Log(2), math.NaN(), math.Log(0.5), math.Inf(-1), math.Log(4)},
			"sg": {1 / (1 + math.Exp(-1)), 1 / (1 + math.Exp(-2)), 1 / (1 + math.Exp(3)), 1 / (1 + math.Exp(-0.5)), 0.5, 1 / (1 + math.Exp(-4))},
			"re": {1, 2, 0, 0.5, 0, 4}, "ab": {1, 2, 3, 0.5, 0, 4}, "sq": {1, math.Sqrt2, math.NaN(), math.Sqrt(0.5), 0, 2},
			"mm": {-2, -1, 4.5, 4}, "tr": {1, 0.5, 2, 0, -3, 4},
			"sm":  {e1 / (e1 + e2 + e3), e2 / (e1 + e2 + e3), e3 / (e1 + e2 + e3)},
			"sm0": {e1 / (e1 + math.Exp(0.5)), e2 / (e2 + 1), e3 / (e3 + math.Exp(4))},
			"ls":  {1 - math.Log(e1+e2+e3), 2 - math.Log(e1+e2+e3), -3 - math.Log(e1+e2+e3)},
			"su":  {0, 4.5}, "me": {0, 1.5}, "mk": {2, 4}, "su0": {1.5, 2, 1},
		}
		wantI := map[string][]int64{"am": {1, 2}, "am0": {0, 0, 1}}
		ref, err := orc.Run(context.Background(), "ops", in)
		Expect(err).NotTo(HaveOccurred())
		for i, pr := range prs {
			got, err := pr.Run(context.Background(), "ops", in)
			Expect(err).NotTo(HaveOccurred(), string(both[i]))
			for name, w := range want {
				g := got.Outputs[name]
				Expect(g).NotTo(BeNil(), name)
				if name == "sm" || name == "ls" {
					g = tensor.FromFloat32(g.F32[:3], 3) // row 0
				}
				if name == "sm0" {
					g = tensor.FromFloat32(g.F32[:3], 3)
				}
				for k, wv := range w {
					gv := float64(g.F32[k])
					rv := ref.Outputs[name].F64[k]
					msg := fmt.Sprintf("%s %s[%d] got %v want %v oracle %v", both[i], name, k, gv, wv, rv)
					if math.IsNaN(wv) || math.IsInf(wv, 0) {
						Expect(gv).To(Or(BeIdenticalTo(wv), Satisfy(func(v float64) bool { return math.IsNaN(v) && math.IsNaN(wv) })), msg)
						continue
					}
					Expect(math.Abs(gv-wv)).To(BeNumerically("<=", 1e-6+2e-6*math.Abs(wv)), msg)
					Expect(math.Abs(rv-wv)).To(BeNumerically("<=", 1e-12+1e-12*math.Abs(wv)), "the oracle agrees: "+msg)
				}
			}
			for name, w := range wantI {
				Expect(got.Outputs[name].I64).To(Equal(w), string(both[i])+" "+name)
				Expect(ref.Outputs[name].I64).To(Equal(w), "oracle "+name)
			}
			// A class index used as an integer scalar: a BigInt in the
			// module, a rank-0 int64 output.
			b, err := pr.Run(context.Background(), "best", map[string]*tensor.Tensor{"v": tensor.FromFloat32([]float32{-1, 7, 3}, 3)})
			Expect(err).NotTo(HaveOccurred(), string(both[i]))
			Expect(b.Outputs["k"].Shape).To(BeEmpty())
			Expect(b.Outputs["k"].I64).To(Equal([]int64{1}))
			Expect(b.Outputs["twice"].I64).To(Equal([]int64{2}))
		}
	})

	It("fail a division by zero and an overflow with the oracle's error, kind and text", func() {
		needTFJS()
		f, p := parse("z.rx", `package z
func f(x [B]float32, d int64) (y [B]float32) {
	y = x
	if CheckedDiv(7, d) == 0 && CheckedRem(7, d) == 0 {
		y = x * 2.0
	}
	return
}

func g(x [B]float32, d int64) (y [B]float32) {
	y = x
	if d == 1 || CheckedRem(-9223372036854775807-1, -1) == 0 && CheckedDiv(-9223372036854775807-1, -1) == 1 {
		y = x * 2.0
	}
	return
}
`)
		orc, err := oracle.Executor{}.Prepare(context.Background(), f, p)
		Expect(err).NotTo(HaveOccurred())
		in := map[string]*tensor.Tensor{"x": tensor.FromFloat32([]float32{1, 2, 3}, 3), "d": tensor.Scalar(0)}
		for i, pr := range prepareBoth(f, p) {
			for _, fn := range []string{"f", "g"} {
				_, want := orc.Run(context.Background(), fn, in)
				Expect(want).To(HaveOccurred())
				_, err := pr.Run(context.Background(), fn, in)
				var re *ir.RuntimeError
				Expect(errors.As(err, &re)).To(BeTrue(), "%s: %v", both[i], err)
				Expect(err.Error()).To(Equal(want.Error()), string(both[i]))
				Expect(errors.Is(err, ir.ErrDivisionByZero)).To(Equal(errors.Is(want, ir.ErrDivisionByZero)))
				Expect(errors.Is(err, ir.ErrOverflow)).To(Equal(errors.Is(want, ir.ErrOverflow)))
			}
		}
	})

	It("carry every byte of inputs larger than serve.js's 64 KiB read buffer, and of small ones between them", func() {
		needTFJS()
		src := `package big

func scaled(x [B][32]float32, k int64, z [B]float32) (y [B][32]float32, w [B]float32) {
	y = x * 1.0
	w = z + 0.0
	if k == 2 {
		y = x * 2.0
	}
	return
}
`
		f, p := parse("big.rx", src)
		prs := prepareBoth(f, p)
		for _, batch := range []int{4096, 1, 700, 2049, 3, 512} {
			x := tensor.Generate(tensor.Dist{Kind: tensor.Normal, A: 0, B: 1}, uint64(batch), batch, 32)
			z := tensor.Generate(tensor.Dist{Kind: tensor.Uniform, A: 1, B: 2}, uint64(batch)+1, batch)
			for i, pr := range prs {
				out, err := pr.Run(context.Background(), "scaled", map[string]*tensor.Tensor{"x": x, "k": tensor.Scalar(1), "z": z})
				Expect(err).NotTo(HaveOccurred(), "%s B=%d", both[i], batch)
				Expect(out.Outputs["y"].F32).To(Equal(x.F32), "%s B=%d", both[i], batch)
				Expect(out.Outputs["w"].F32).To(Equal(z.F32), "%s B=%d", both[i], batch)
			}
		}
	})

	It("leave tf.memory().numTensors as it was after a thousand calls (serve.js fails a call that leaks)", func() {
		needTFJS()
		f, p := load("../scenarios/reference.rx")
		in, err := harness.GenerateInputs(f, f.Func("score_pipeline"), 4, f.Seed, nil)
		Expect(err).NotTo(HaveOccurred())
		for i, pr := range prepareBoth(f, p) {
			for k := 0; k < 1000; k++ {
				_, err := pr.Run(context.Background(), "score_pipeline", in)
				Expect(err).NotTo(HaveOccurred(), "%s call %d", both[i], k)
			}
		}
	})

	It("fail the one case whose node process is killed mid-call, and pass the next", func() {
		needTFJS()
		f, p := parse("slow.rx", `package slow
func f(x [B][64]float32, n int64) (y [B][64]float32) {
	y = x
	for range n {
		y = Tanh(y)
	}
	return
}
`)
		x := tensor.NewFloat32(8, 64)
		for i := range x.F32 {
			x.F32[i] = float32(i%7) - 3
		}
		for i, name := range both {
			before := nodeChildren()
			e, err := jsexport.NewExecutor(name, opts())
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(e.Close)
			pr, err := e.Prepare(context.Background(), f, p)
			Expect(err).NotTo(HaveOccurred())
			var pid int
			for _, q := range nodeChildren() {
				if !contains(before, q) {
					pid = q
				}
			}
			Expect(pid).NotTo(BeZero(), "the executor's node process")
			done := make(chan error, 1)
			go func() {
				_, err := pr.Run(context.Background(), "f", map[string]*tensor.Tensor{"x": x, "n": tensor.Scalar(1 << 40)})
				done <- err
			}()
			time.Sleep(300 * time.Millisecond) // inside the loop
			Expect(syscall.Kill(pid, syscall.SIGKILL)).To(Succeed())
			Eventually(done).WithTimeout(30 * time.Second).Should(Receive(&err))
			Expect(errors.Is(err, external.ErrCrashed)).To(BeTrue(), "%s: %v", both[i], err)
			Expect(errors.Is(err, executor.ErrCrashed)).To(BeTrue())
			out, err := pr.Run(context.Background(), "f", map[string]*tensor.Tensor{"x": x, "n": tensor.Scalar(2)})
			Expect(err).NotTo(HaveOccurred(), string(both[i]))
			Expect(float64(out.Outputs["y"].F32[0])).To(BeNumerically("~", math.Tanh(math.Tanh(-3)), 1e-6))
			Expect(pr.Close()).To(Succeed())
		}
	})

	It("are unavailable, with the reason and the install command, without node or without the packages", func() {
		err := jsexport.Available(executor.TFJSCPU, jsexport.ExecutorOptions{Node: "/nonexistent/node"})
		Expect(errors.Is(err, jsexport.ErrUnavailable)).To(BeTrue())
		Expect(err).To(MatchError(ContainSubstring("tfjs-cpu is unavailable: cannot find node")))
		Expect(err).To(MatchError(ContainSubstring("nodejs")))
		dir := GinkgoT().TempDir()
		err = jsexport.Available(executor.TFJSWasm, jsexport.ExecutorOptions{Dir: dir})
		if errors.Is(err, jsexport.ErrUnavailable) && strings.Contains(err.Error(), "cannot find node") {
			Skip("no node here")
		}
		Expect(errors.Is(err, jsexport.ErrUnavailable)).To(BeTrue())
		Expect(err).To(MatchError(ContainSubstring("tfjs-wasm is unavailable: the TensorFlow.js 4.22.0 packages are not installed in " + dir)))
		Expect(err).To(MatchError(ContainSubstring("npm ci --ignore-scripts")))
		Expect(err).To(MatchError(ContainSubstring("RXEQ_TFJS_DIR")))
		sel, err := builtin.Select(both, builtin.Config{}.FromEnv(func(k string) string {
			if k == builtin.EnvTFJSDir {
				return dir
			}
			return os.Getenv(k)
		}), nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(sel.Executors).To(BeEmpty())
		Expect(sel.Unavailable).To(HaveLen(2))
		Expect(sel.Unavailable[0].Reason).To(ContainSubstring("ci/setup.sh"))
	})
})

const opsProgram = `package ops
func ops(x [2][3]float32, y [2][3]float32, w [3][2]float32) (add [2][3]float32, sub [2][3]float32, mul [2][3]float32, div [2][3]float32, neg [2][3]float32, mx [2][3]float32, mn [2][3]float32, th [2][3]float32, ex [2][3]float32, lg [2][3]float32, sg [2][3]float32, re [2][3]float32, ab [2][3]float32, sq [2][3]float32, mm [2][2]float32, tr [3][2]float32, sm [2][3]float32, sm0 [2][3]float32, ls [2][3]float32, su [2]float32, me [2]float32, mk [2][1]float32, su0 [3]float32, am [2]int64, am0 [3]int64) {
	add = x + y
	sub = x - y
	mul = x * y
	div = x / y
	neg = -x
	mx = Maximum(x, y)
	mn = Minimum(x, y)
	th = Tanh(x)
	ex = Exp(x)
	lg = Log(x)
	sg = Sigmoid(x)
	re = Relu(x)
	ab = Abs(x)
	sq = Sqrt(x)
	mm = MatMul(x, w)
	tr = Transpose(x)
	sm = Softmax(x, 1)
	sm0 = Softmax(x, 0)
	ls = LogSoftmax(x, 1)
	su = Sum(x, 1)
	me = Mean(x, 1)
	mk = Max(x, 1, true)
	su0 = Sum(x, 0)
	am = Argmax(x, 1)
	am0 = Argmax(x, 0)
	return
}

func best(v [3]float32) (k int64, twice int64) {
	k = Argmax(v, 0)
	twice = k * 2
	return
}
`

func tanhs(v ...float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Tanh(x)
	}
	return out
}

// ulps is the distance of a and b in float32 units in the last place.
func ulps(a, b float32) int {
	ia, ib := int64(math.Float32bits(a)), int64(math.Float32bits(b))
	if ia < 0x80000000 == (ib < 0x80000000) {
		d := ia - ib
		if d < 0 {
			d = -d
		}
		return int(d)
	}
	return int((ia &^ 0x80000000) + (ib &^ 0x80000000))
}

func equalI64(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// nodeChildren lists the node processes this test process started
// (directly, or under the supervisor's guard process).
func nodeChildren() []int {
	me := os.Getpid()
	parent := map[int]int{}
	comm := map[int]string{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		open, closeIdx := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closeIdx < 0 {
			continue
		}
		fields := strings.Fields(s[closeIdx+1:])
		if len(fields) > 1 {
			parent[pid], _ = strconv.Atoi(fields[1])
			comm[pid] = s[open+1 : closeIdx]
		}
	}
	var out []int
	for pid, c := range comm {
		if c != "node" {
			continue
		}
		for q, n := parent[pid], 0; q > 1 && n < 4; q, n = parent[q], n+1 {
			if q == me {
				out = append(out, pid)
				break
			}
		}
	}
	sort.Ints(out)
	return out
}
