package fuzz_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/executor"
	"github.com/rextio/rxeq/fallback"
	"github.com/rextio/rxeq/fuzz"
	"github.com/rextio/rxeq/ledger"
	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// tampered is the fallback with every float output passed through edit,
// which is told the output's batch (its axis 0).
type tampered struct {
	name string
	edit func(t *tensor.Tensor)
}

func (t tampered) Name() executor.Name { return executor.Name(t.name) }

func (t tampered) Prepare(ctx context.Context, f *program.File, p *ir.Program) (executor.Prepared, error) {
	inner, err := fallback.Executor{}.Prepare(ctx, f, p)
	return tamperedPrepared{t, inner}, err
}

type tamperedPrepared struct {
	t     tampered
	inner executor.Prepared
}

func (p tamperedPrepared) Run(ctx context.Context, fn string, in map[string]*tensor.Tensor) (executor.Outcome, error) {
	out, err := p.inner.Run(ctx, fn, in)
	for _, o := range out.Outputs {
		if o.DType == tensor.Float32 {
			p.t.edit(o)
		}
	}
	return out, err
}

func (p tamperedPrepared) Close() error { return p.inner.Close() }

// rowsProgram has independent rows of 16 elements: Relu gives zeros,
// the rest ordinary values.
const rowsProgram = `//rx:scenario rows
//rx:batches 1 4
//rx:seed 3
//rx:input x normal(0, 1)
package p

func f(x [B][16]float32) (out [B][16]float32) {
	out = Relu(x) * 2.0
	return
}
`

// checkOne checks rowsProgram with c and e and returns its one finding's
// record, classified against l.
func checkOne(c fuzz.Checker, e executor.Executor, l *ledger.Ledger) *fuzz.Record {
	GinkgoHelper()
	c.Executors = []executor.Executor{e}
	rep, err := c.Check(context.Background(), []byte(rowsProgram))
	Expect(err).NotTo(HaveOccurred())
	Expect(rep.Findings).NotTo(BeEmpty(), "the wrong executor %s must be caught", e.Name())
	return fuzz.NewRecord(rep.Findings[0], []byte(rowsProgram), "", "", l)
}

var _ = Describe("finding categories", func() {
	It("gives a deliberately wrong executor a finding in each category", func() {
		byCat := map[fuzz.Category]*fuzz.Record{}
		add := func(r *fuzz.Record) { byCat[r.Category] = r }

		add(checkOne(fuzz.Checker{}, skewed{name: "panicky", panics: true}, nil))
		add(checkOne(fuzz.Checker{}, skewed{name: "failing", err: errors.New("boom")}, nil))
		add(checkOne(fuzz.Checker{}, constant{name: "nans", out: "out", v: float32(math.NaN())}, nil))
		flipZeros := tampered{name: "flipzeros", edit: func(t *tensor.Tensor) {
			for i, v := range t.F32 {
				if v == 0 {
					t.F32[i] = float32(math.Copysign(0, -1))
					if math.Signbit(float64(v)) {
						t.F32[i] = 0
					}
				}
			}
		}}
		add(checkOne(fuzz.Checker{SignedZeros: true}, flipZeros, nil))
		// One ulp at a row's last element, and only in a batch of more
		// than one row: within the tolerance, so only invariance sees it.
		tail := tampered{name: "tail", edit: func(t *tensor.Tensor) {
			if len(t.Shape) == 2 && t.Shape[0] > 1 {
				for r := range t.Shape[0] {
					i := r*t.Shape[1] + t.Shape[1] - 1
					t.F32[i] = math.Nextafter32(t.F32[i], float32(math.Inf(1)))
				}
			}
		}}
		add(checkOne(fuzz.Checker{Invariance: true}, tail, nil))
		add(checkOne(fuzz.Checker{}, skewed{name: "skewed", delta: 0.01}, nil))
		known, err := ledger.Parse([]byte(`{"schema": "rxeq.ledger/v1", "entries": [{"id": "skewed-relu", "executor": "skewed",
			"category": "accuracy", "match": {"ops": ["Relu"], "values": ["finite"]}, "explanation": "adds 0.01 on purpose"}]}`))
		Expect(err).NotTo(HaveOccurred())
		add(checkOne(fuzz.Checker{}, skewed{name: "skewed", delta: 0.01}, known))

		add(checkOne(fuzz.Checker{ReferenceOnly: true, RoundTrip: editedTrip("Relu(", "Abs(")}, fallback.Executor{}, nil))

		for _, cat := range fuzz.Categories {
			Expect(byCat).To(HaveKey(cat), "no wrong executor gave a %s finding", cat)
		}
		Expect(byCat[fuzz.CatCrash].Executor).To(Equal("panicky"))
		Expect(byCat[fuzz.CatErrorMismatch].Executor).To(Equal("failing"))
		Expect(byCat[fuzz.CatNaNInf].Values).To(Equal(fuzz.ValNaN))
		Expect(byCat[fuzz.CatSignedZero].Values).To(Equal(fuzz.ValSignedZero))
		Expect(byCat[fuzz.CatPosition].Executor).To(Equal("tail"))
		Expect(byCat[fuzz.CatPosition].Detail).To(ContainSubstring("where the original batch has"))
		Expect(byCat[fuzz.CatAccuracy].Values).To(Equal(fuzz.ValFinite))
		Expect(byCat[fuzz.CatRoundTrip].Executor).To(Equal(string(fuzz.RoundTripName)))
		Expect(byCat[fuzz.CatRoundTrip].Kind).To(Equal(fuzz.KindMismatch))
		sem := byCat[fuzz.CatSemantics]
		Expect(sem.Status).To(Equal(fuzz.StatusXFail))
		Expect(sem.Observed).To(Equal(fuzz.CatAccuracy))
		Expect(sem.Ledger).To(Equal("skewed-relu"))
		Expect(sem.LedgerText).To(Equal("skewed-relu: adds 0.01 on purpose"))
		Expect(sem.Ops).To(Equal([]string{"Mul", "Relu"}))
	})

	It("finds no position finding in the fallback, which is row-invariant", func() {
		c := fuzz.Checker{Invariance: true}
		rep, err := c.Check(context.Background(), []byte(rowsProgram))
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Findings).To(BeEmpty())
	})
})

var _ = Describe("the findings directory", func() {
	It("saves one directory per key with finding.json, and merges and counts findings with the same key across campaigns", func() {
		dir := GinkgoT().TempDir()
		c := fuzz.Campaign{Seed: 1, Count: 12, Checker: tanhChecker(), Dir: dir, Reducer: fuzz.Reducer{MaxTests: 5}}
		st, out, files := session(c)
		Expect(st.Findings).To(BeNumerically(">", 1))
		Expect(files).To(HaveLen(len(st.Records)))
		if len(st.Records) < st.Findings {
			Expect(out).To(ContainSubstring("same as DIR/"))
		}
		first := map[string]int{}
		for _, r := range st.Records {
			first[r.ID] = r.Count
			b, err := os.ReadFile(filepath.Join(dir, r.ID, "finding.json"))
			Expect(err).NotTo(HaveOccurred())
			var m map[string]any
			Expect(json.Unmarshal(b, &m)).To(Succeed())
			Expect(m).To(HaveKeyWithValue("schema", "rxeq.finding/v1"))
			Expect(m).To(HaveKeyWithValue("executor", "skewed"))
			Expect(m).To(HaveKeyWithValue("category", "accuracy"))
			Expect(m).To(HaveKeyWithValue("status", "new"))
			Expect(m).To(HaveKey("key"))
			Expect(m["ops"]).To(ContainElement("Tanh"))
			Expect(m["reduced"]).To(MatchRegexp(`^seed-\d+\.reduced\.rx$`))
			Expect(filepath.Join(dir, r.ID, m["reduced"].(string))).To(BeAnExistingFile())
		}

		// The same campaign again: nothing new is saved, every count doubles.
		st2, out2, files2 := session(c)
		Expect(files2).To(Equal(files))
		Expect(out2).NotTo(ContainSubstring("saved"))
		for _, r := range st2.Records {
			Expect(r.Count).To(Equal(2*first[r.ID]), r.ID)
		}
		recs, err := fuzz.ReadRecords(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(recs).To(HaveLen(len(files)))

		var table strings.Builder
		fuzz.WriteTable(&table, recs)
		Expect(table.String()).To(MatchRegexp(`^EXECUTOR\s+CATEGORY\s+FINDINGS\s+PROGRAMS\s+XFAIL\nskewed\s+accuracy\s+%d\s+%d\s+0\n`, len(recs), 2*st.Findings))
		Expect(fuzz.Table(recs)).To(HaveLen(1))
		Expect(fuzz.Table(recs)[0].Programs).To(Equal(2 * st.Findings))
	})
})
