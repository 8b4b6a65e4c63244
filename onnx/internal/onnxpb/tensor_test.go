package onnxpb_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rextio/rxeq/onnx/internal/onnxpb"
)

const maxElems = 1 << 28

var _ = Describe("Tensors", func() {
	It("read float32 and int64 elements from raw_data or the typed field, checking them against the dims", func() {
		raw := &onnxpb.Tensor{Dims: []int64{2}, DataType: onnxpb.TypeFloat, RawData: []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0}}
		Expect(raw.Float32s(maxElems)).To(Equal([]float32{1, -2}))
		typed := &onnxpb.Tensor{Dims: []int64{1, 2}, DataType: onnxpb.TypeInt64, Int64Data: []int64{math.MinInt64, 5}}
		Expect(typed.Int64s(maxElems)).To(Equal([]int64{math.MinInt64, 5}))
		scalar := &onnxpb.Tensor{DataType: onnxpb.TypeInt64, RawData: []byte{7, 0, 0, 0, 0, 0, 0, 0}}
		Expect(scalar.Int64s(maxElems)).To(Equal([]int64{7}))
		empty := &onnxpb.Tensor{Dims: []int64{3, 0}, DataType: onnxpb.TypeFloat}
		Expect(empty.Float32s(maxElems)).To(BeEmpty())

		for _, bad := range []*onnxpb.Tensor{
			{Dims: []int64{3}, DataType: onnxpb.TypeFloat, RawData: []byte{0, 0, 0, 0}}, // too few bytes
			{Dims: []int64{1}, DataType: onnxpb.TypeFloat, FloatData: []float32{1, 2}},  // too many
			{Dims: []int64{-1}, DataType: onnxpb.TypeFloat},                             // negative dim
			{Dims: []int64{1 << 40, 1 << 40}, DataType: onnxpb.TypeFloat},               // too large
			{Dims: []int64{1}, DataType: onnxpb.TypeDouble, DoubleData: []float64{1}},   // other type
			{Dims: []int64{1}, DataType: onnxpb.TypeFloat, DataLocation: 1},             // external
		} {
			_, err := bad.Float32s(maxElems)
			Expect(err).To(MatchError(onnxpb.ErrTensor), "%+v", bad)
		}
	})

	It("decode every float32 and int64 .pb file of ONNX's node tests to the values numpy_helper reads", func() {
		requireONNX()
		files, err := filepath.Glob(filepath.Join(testdataDir, "*", "test_data_set_0", "*.pb"))
		Expect(err).NotTo(HaveOccurred())
		if len(files) == 0 {
			Skip("libonnx-testdata is not installed; ci/setup.sh installs it")
		}
		out := runPython(`
import glob, json, sys, onnx
from onnx import numpy_helper
res = {}
for f in sorted(glob.glob(sys.argv[1] + "/*/test_data_set_0/*.pb")):
    t = onnx.TensorProto()
    try:
        t.ParseFromString(open(f, "rb").read())
    except Exception:
        continue
    if t.data_type not in (1, 7) or not t.ListFields():
        continue
    try:
        a = numpy_helper.to_array(t)  # a .pb that is a sequence or an optional is no tensor
    except Exception:
        continue
    vals = a.view("uint32") if t.data_type == 1 else a
    res[f] = [t.data_type, list(a.shape), [str(int(v)) for v in vals.flatten().tolist()]]
print(json.dumps(res))
`, testdataDir)
		var want map[string][]any
		Expect(json.Unmarshal([]byte(out), &want)).To(Succeed())
		Expect(len(want)).To(BeNumerically(">", 500))
		for f, w := range want {
			b, err := os.ReadFile(f)
			Expect(err).NotTo(HaveOccurred())
			t, err := onnxpb.UnmarshalTensor(b)
			Expect(err).NotTo(HaveOccurred(), f)
			var dims []any
			for _, d := range t.Dims {
				dims = append(dims, float64(d))
			}
			if dims == nil {
				dims = []any{}
			}
			Expect(dims).To(Equal(w[1]), f)
			vals := w[2].([]any)
			if w[0].(float64) == onnxpb.TypeFloat {
				got, err := t.Float32s(maxElems)
				Expect(err).NotTo(HaveOccurred(), f)
				Expect(got).To(HaveLen(len(vals)), f)
				for i, v := range got {
					Expect(strconv.FormatUint(uint64(math.Float32bits(v)), 10)).To(Equal(vals[i]), "%s[%d]", f, i)
				}
				continue
			}
			got, err := t.Int64s(maxElems)
			Expect(err).NotTo(HaveOccurred(), f)
			Expect(got).To(HaveLen(len(vals)), f)
			for i, v := range got {
				Expect(strconv.FormatInt(v, 10)).To(Equal(vals[i]), "%s[%d]", f, i)
			}
		}
	})
})
