package cgen_test

import (
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/native/cgen"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/program/ir/irtest"
)

var _ = Describe("Generate", func() {
	It("is deterministic: the same program gives the same bytes", func() {
		_, p1 := parse("score_linear.rx", readTestdata("score_linear.rx"))
		_, p2 := parse("score_linear.rx", readTestdata("score_linear.rx"))
		a, err := cgen.Generate(p1)
		Expect(err).NotTo(HaveOccurred())
		b, err := cgen.Generate(p1)
		Expect(err).NotTo(HaveOccurred())
		c, err := cgen.Generate(p2)
		Expect(err).NotTo(HaveOccurred())
		Expect(b).To(Equal(a))
		Expect(c).To(Equal(a))
	})

	It("mirrors the source: a headed function, the for as a for, the if as an if, in order", func() {
		_, p := parse("score_linear.rx", readTestdata("score_linear.rx"))
		src, err := cgen.Generate(p)
		Expect(err).NotTo(HaveOccurred())
		s := string(src)
		Expect(cgen.CFuncName("score_linear")).To(Equal("rx_fn_score_linear"))
		Expect(s).To(ContainSubstring("/* score_linear: score_linear.rx:12:1 */\nint rx_fn_score_linear(const rx_arg *rx_args, rx_status *rx_st)\n{"))
		order := []string{
			"rx_matmul_bias(&rx_c,", // MatMul(x, w) + b, fused (see the fused MatMul specs)
			"for (int64_t round_idx = 0; round_idx < 4; round_idx++) {",
			"rx_checked_rem(&rx_c, 0, round_idx, 2,", "if (", "rx_ew_const(&rx_c,", "} else {", "rx_tanh(&rx_c,",
			"rx_softmax(&rx_c,", "rx_argmax(&rx_c,", "return rx_close(&rx_c);",
		}
		at := 0
		for _, want := range order {
			i := strings.Index(s[at:], want)
			Expect(i).To(BeNumerically(">=", 0), "%q after offset %d", want, at)
			at += i + len(want)
		}
		Expect(strings.Count(s, "for (")).To(Equal(1))
	})

	It("lets no program text reach the C file except through the mangler and the escaper", func() {
		_, p := parse("we*/ird\n??/.rx", readTestdata("names.rx"))
		src, err := cgen.Generate(p)
		Expect(err).NotTo(HaveOccurred())
		s := string(src)
		for _, bad := range []string{"system", "rm -rf", "stdlib", "#define", "line splice", "evil", "größe", "ρ", "??/"} {
			Expect(s).NotTo(ContainSubstring(bad))
		}
		Expect(s).To(ContainSubstring(`we\x2a/ird\x0a\x3f\x3f/.rx`))
		// Every comment is well formed: nothing opens a comment inside one.
		for _, m := range regexp.MustCompile(`(?s)/\*(.*?)\*/`).FindAllStringSubmatch(s, -1) {
			Expect(m[1]).NotTo(ContainSubstring("/*"))
			Expect(m[1]).NotTo(ContainSubstring("\\\n"))
		}
		// The only preprocessor line is the runtime include.
		for _, line := range strings.Split(s, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "#") {
				Expect(line).To(Equal(`#include "rx_runtime.h"`))
			}
		}
		// Every identifier-ish token is ASCII.
		Expect(regexp.MustCompile(`[^\x00-\x7f]`).MatchString(s)).To(BeFalse())
	})

	DescribeTable("rejects what it cannot compile, naming it",
		func(build func() *ir.Func, want string) {
			_, err := cgen.Generate(&ir.Program{File: "t.rx", Funcs: []*ir.Func{build()}})
			Expect(err).To(MatchError(cgen.ErrUnsupported))
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("rank 5", func() *ir.Func {
			b := irtest.NewFunc("big")
			x := b.Param("x", ir.Float32, 1, 1, 1, 1, 1)
			r := b.Result("r", ir.Float32, 1, 1, 1, 1, 1)
			b.Op(ir.Copy, r, x)
			return b.Fn
		}, "function big: parameter x has rank 5 ([1][1][1][1][1]float32); at most 4"),
		Entry("a bool parameter", func() *ir.Func {
			b := irtest.NewFunc("flag")
			b.Param("c", ir.Bool)
			return b.Fn
		}, "function flag: parameter c has dtype bool"),
		Entry("MatMul of rank 3", func() *ir.Func {
			b := irtest.NewFunc("mm")
			x := b.Param("x", ir.Float32, 2, 2, 2)
			r := b.Result("r", ir.Float32, 2, 2, 2)
			b.Op(ir.MatMul, r, x, x)
			return b.Fn
		}, "op matmul on ([2][2][2]float32, [2][2][2]float32)"),
		Entry("an unknown op", func() *ir.Func {
			b := irtest.NewFunc("odd")
			x := b.Param("x", ir.Float32, 2)
			r := b.Result("r", ir.Float32, 2)
			b.Op(ir.OpKind(200), r, x)
			return b.Fn
		}, "function odd: op invalid"),
		Entry("an int64 tensor add", func() *ir.Func {
			b := irtest.NewFunc("iadd")
			x := b.Param("x", ir.Int64, 2)
			r := b.Result("r", ir.Int64, 2)
			b.Op(ir.Add, r, x, x)
			return b.Fn
		}, "op add on ([2]int64, [2]int64) -> [2]int64"),
	)
})

var _ = Describe("Mangle", func() {
	It("keeps safe names and mangles keywords, libc names, reserved prefixes and non-ASCII", func() {
		Expect(cgen.Mangle("round_idx")).To(Equal("round_idx"))
		Expect(cgen.Mangle("logits2")).To(Equal("logits2"))
		for name, want := range map[string]string{
			"int": "rx_u_int", "double": "rx_u_double", "static": "rx_u_static", "main": "rx_u_main",
			"malloc": "rx_u_malloc", "exit": "rx_u_exit", "rx_x": "rx_u_rx__x", "_x": "rx_u___x",
			"ρ": "rx_u__3c1_", "größe": "rx_u_gr_f6__df_e", "RX_OK": "rx_u_RX__OK",
		} {
			Expect(cgen.Mangle(name)).To(Equal(want), name)
		}
	})

	It("is injective and always yields a C identifier", func() {
		names := []string{"a", "a_", "a__", "_a", "__a", "a_5f_", "a\u005f", "rx_a", "rx__a", "ρ", "_3c1_", "rx_u__3c1_",
			"x1", "x_1", "x__1", "int", "rx_u_int", "größe", "gr_f6__df_e", "a b", "a-b", "é", "e\u0301"}
		seen := map[string]string{}
		ident := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
		for _, n := range names {
			m := cgen.Mangle(n)
			Expect(ident.MatchString(m)).To(BeTrue(), m)
			if prev, ok := seen[m]; ok {
				Expect(prev).To(Equal(n), "collision on %s", m)
			}
			seen[m] = n
		}
	})
})
