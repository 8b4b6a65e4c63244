package npy_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"codeberg.org/sbinet/npyio"

	"github.com/rextio/rxeq/tensor"
	"github.com/rextio/rxeq/tensor/npy"
)

// The benchmarks compare this package with codeberg.org/sbinet/npyio on a
// 65536×32 float32 array (8 MiB), the measurement behind the package
// doc's decision. npyio needs the rank-2 shape as nested slices (views of
// the same data, made once outside the timer).

const benchRows, benchCols = 65536, 32

func benchTensor() *tensor.Tensor {
	t := tensor.NewFloat32(benchRows, benchCols)
	for i := range t.F32 {
		t.F32[i] = float32(i%1000) * 0.25
	}
	return t
}

func rows(t *tensor.Tensor) [][]float32 {
	out := make([][]float32, benchRows)
	for i := range out {
		out[i] = t.F32[i*benchCols : (i+1)*benchCols]
	}
	return out
}

// compare times rxeq's and npyio's version of one operation in the same
// loop, so both see the same machine load, and reports each one's ns/op and
// their ratio (npyio/rxeq: how many times slower npyio is).
func compare(b *testing.B, ours, theirs func() error) {
	var tOurs, tTheirs time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := ours(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := theirs(); err != nil {
			b.Fatal(err)
		}
		tOurs += t1.Sub(t0)
		tTheirs += time.Since(t1)
	}
	b.ReportMetric(float64(tOurs.Nanoseconds())/float64(b.N), "rxeq-ns/op")
	b.ReportMetric(float64(tTheirs.Nanoseconds())/float64(b.N), "npyio-ns/op")
	b.ReportMetric(float64(tTheirs)/float64(tOurs), "npyio/rxeq")
}

// BenchmarkWrite writes the array with Write and with npyio.Write (given
// nested row slices, the only way npyio writes a rank-2 shape).
func BenchmarkWrite(b *testing.B) {
	t := benchTensor()
	nested := rows(t)
	var buf bytes.Buffer
	compare(b, func() error {
		buf.Reset()
		return npy.Write(&buf, t)
	}, func() error {
		buf.Reset()
		return npyio.Write(&buf, nested)
	})
}

// BenchmarkRead reads the array with Read and with npyio's Reader into a
// []float32 (its fastest path: no reflection, no shape).
func BenchmarkRead(b *testing.B) {
	t := benchTensor()
	var buf bytes.Buffer
	if err := npy.Write(&buf, t); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	compare(b, func() error {
		_, err := npy.Read(bytes.NewReader(data))
		return err
	}, func() error {
		r, err := npyio.NewReader(bytes.NewReader(data))
		if err != nil {
			return err
		}
		var got []float32
		if err := r.Read(&got); err != nil {
			return err
		}
		if len(got) != t.Len() || r.Header.Descr.Shape[1] != benchCols {
			return fmt.Errorf("npyio read %d elements, shape %v", len(got), r.Header.Descr.Shape)
		}
		return nil
	})
}
