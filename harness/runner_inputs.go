package harness

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/rextio/rxeq/program"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// BatchSymbol returns the symbolic dimension that the batch size binds: the
// first symbolic dimension of the first parameter that has one (scanning
// parameters in order and each one's dims from the outside in), or "" when
// the function has no symbolic dimension (it then runs at every batch with
// the same inputs).
//
// It is fn.BatchSymbol: the checker sizes shapes with the same rule.
func BatchSymbol(fn *program.Func) string { return fn.BatchSymbol() }

// InputSeedName returns the name the seed of one input is derived from:
// "scenario/function/bBATCH/param".
func InputSeedName(scenario, fn string, batch int, param string) string {
	return fmt.Sprintf("%s/%s/b%d/%s", scenario, fn, batch, param)
}

// GenerateInputs builds the inputs of one case from the file's //rx:input
// distributions.
//
// Each float32 parameter is filled by tensor.Generate from its
// distribution with the seed tensor.DeriveSeed(seed, InputSeedName(…)),
// so a case's inputs depend only on the scenario seed and the case name.
// Its shape is the declared one with the batch symbol (BatchSymbol) bound
// to batch and any other symbol bound from dims; a symbol in neither is an
// ErrScenario error naming it, and so is a shape of more than
// tensor.MaxElements elements (a batch beyond the file's //rx:batches can
// make one). An int64 scalar parameter takes the value of its const(v)
// distribution. A parameter without //rx:input, or an int64 parameter of
// rank > 0, is an ErrScenario error.
//
// program.ParseScenario checks these rules statically, with positions, for
// `rxeq check` and `rxeq run`; here they guard library callers, whose files
// come from program.Parse and may bind more symbols through Options.Dims.
func GenerateInputs(f *program.File, fn *program.Func, batch int, seed uint64, dims map[string]int) (map[string]*tensor.Tensor, error) {
	return generateInputs(f, fn, batch, seed, dims, nil)
}

// generateInputs is GenerateInputs for the parameters not in skip.
func generateInputs(f *program.File, fn *program.Func, batch int, seed uint64, dims map[string]int, skip map[string]*tensor.Tensor) (map[string]*tensor.Tensor, error) {
	scenario := f.ScenarioName()
	batchSym := BatchSymbol(fn)
	out := make(map[string]*tensor.Tensor, len(fn.Params))
	for _, p := range fn.Params {
		if _, ok := skip[p.Name]; ok {
			continue
		}
		d, ok := f.Input(p.Name)
		if !ok {
			return nil, fmt.Errorf("%w: %s: parameter %s has no //rx:input directive (like //rx:input %s normal(0, 1))", ErrScenario, fn.Name, p.Name, p.Name)
		}
		switch p.Type.DType {
		case ir.Int64:
			if p.Type.Rank() != 0 {
				return nil, fmt.Errorf("%w: %s: parameter %s is an int64 tensor; only int64 scalars can be generated", ErrScenario, fn.Name, p.Name)
			}
			if d.Kind != tensor.Const || d.A != math.Trunc(d.A) || math.Abs(d.A) > program.MaxInputInt {
				return nil, fmt.Errorf("%w: %s: int64 parameter %s needs //rx:input %s const(N) with an integer N, have %s", ErrScenario, fn.Name, p.Name, p.Name, d)
			}
			out[p.Name] = tensor.Scalar(int64(d.A))
		case ir.Float32:
			shape := make([]int, p.Type.Rank())
			for i, dim := range p.Type.Shape {
				switch {
				case !dim.IsSym():
					shape[i] = int(dim.Size)
				case dim.Sym == batchSym:
					shape[i] = batch
				default:
					v, ok := dims[dim.Sym]
					if !ok || v < 0 {
						return nil, fmt.Errorf("%w: %s: parameter %s: symbolic dimension %s is not the batch symbol %s and is not bound (Options.Dims)", ErrScenario, fn.Name, p.Name, dim.Sym, batchSym)
					}
					shape[i] = v
				}
			}
			if _, ok := tensor.CheckedNumElements(shape); !ok {
				return nil, fmt.Errorf("%w: %s: parameter %s: shape %v at batch %d has more than %d elements (2^60 - 1), the most a tensor may hold", ErrScenario, fn.Name, p.Name, shape, batch, tensor.MaxElements)
			}
			out[p.Name] = tensor.Generate(d, tensor.DeriveSeed(seed, InputSeedName(scenario, fn.Name, batch, p.Name)), shape...)
		default:
			return nil, fmt.Errorf("%w: %s: parameter %s has dtype %s, which cannot be generated", ErrScenario, fn.Name, p.Name, p.Type.DType)
		}
	}
	return out, nil
}

// Digest returns the hex SHA-256 of a tensor: its dtype, rank, dims and
// data bytes (little-endian). Equal digests mean equal bytes.
func Digest(t *tensor.Tensor) string {
	h := sha256.New()
	if t == nil {
		h.Write([]byte("nil"))
		return hex.EncodeToString(h.Sum(nil))
	}
	var buf [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(buf[:], v)
		h.Write(buf[:])
	}
	put(uint64(t.DType))
	put(uint64(len(t.Shape)))
	for _, d := range t.Shape {
		put(uint64(d))
	}
	put(uint64(len(t.F32)))
	for _, v := range t.F32 {
		binary.LittleEndian.PutUint32(buf[:4], math.Float32bits(v))
		h.Write(buf[:4])
	}
	put(uint64(len(t.F64)))
	for _, v := range t.F64 {
		put(math.Float64bits(v))
	}
	put(uint64(len(t.I64)))
	for _, v := range t.I64 {
		put(uint64(v))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// digests returns the digest of every input, by name.
func digests(inputs map[string]*tensor.Tensor) map[string]string {
	out := make(map[string]string, len(inputs))
	for name, t := range inputs {
		out[name] = Digest(t)
	}
	return out
}

// checkDigests compares the inputs after a run with the digests taken
// before it, fills c.Inputs and returns a message naming every modified
// input ("" if none).
func checkDigests(before map[string]string, after map[string]*tensor.Tensor, finished bool) ([]InputDigest, string) {
	names := make([]string, 0, len(before))
	for n := range before {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []InputDigest
	var bad []string
	for _, n := range names {
		d := InputDigest{Name: n, Before: before[n]}
		if finished {
			d.After = Digest(after[n])
			if d.After != d.Before {
				bad = append(bad, fmt.Sprintf("input %s was modified by the executor (sha256 %s… before, %s… after)", n, d.Before[:12], d.After[:12]))
			}
		}
		out = append(out, d)
	}
	return out, strings.Join(bad, "; ")
}
