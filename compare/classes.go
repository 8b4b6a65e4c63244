package compare

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/rextio/rxeq/tensor"
)

// Classes compares an int64 class output (an argmax along axis)
// with the oracle's, exactly except for near-ties.
//
// oracleScores are the oracle's scores the classes were taken from (its
// logits or probabilities): a float tensor whose shape, with the axis
// dimension removed, is the shape of the classes. Classes kept with
// keepdims (the axis dimension present with size 1) are accepted too. A
// negative axis counts from the end of the scores' shape.
//
// Rules, per row (one class element and the scores along axis behind it):
//   - got equal to want passes.
//   - Let top be the row's greatest oracle score. Every class whose score s
//     satisfies |top − s| ≤ tol.ATol + tol.RTol·|top| is tied with the best.
//     When two or more classes are tied the row is a near-tie: it is listed
//     in NearTies (whether or not the executors disagree), and any tied
//     class is accepted. With exactly two tied classes this is the rule
//     "the top two scores are within tolerance, so either index passes";
//     with more it accepts each of them, since rounding may pick any.
//   - An infinite best score ties only with an equal infinity.
//   - A row whose scores contain a NaN, or that is empty, is never a
//     near-tie (argmax picks the first NaN): it must match exactly.
//   - Any other difference is a class flip and a mismatch; the report shows
//     the oracle's scores of both classes.
//
// Dtype and shape problems (classes not int64, scores not float, shapes
// that do not line up, an axis out of range) are reported as a Problem.
func Classes(name string, wantClasses, gotClasses, oracleScores *tensor.Tensor, axis int, tol Tolerance) OutputMetrics {
	return ClassesOwn(name, wantClasses, gotClasses, oracleScores, nil, axis, tol)
}

// ClassesOwn is Classes that also holds the executor to its
// own scores (gotScores, the executor's value of the same float result;
// nil skips this): in every row its class must be the argmax of its own
// scores, the first index of the greatest score or of the first NaN. So
// where an executor's own scores are bit-equal at two indices its class
// must be the first of them, and the near-tie excuse, which is about the
// oracle's scores, only covers ties that rounding could have flipped. A
// row that breaks this is a mismatch reported as "not the argmax of its
// own scores", whatever the oracle says. gotScores of another shape than
// oracleScores is not used (the scores' own comparison reports it).
func ClassesOwn(name string, wantClasses, gotClasses, oracleScores, gotScores *tensor.Tensor, axis int, tol Tolerance) OutputMetrics {
	m := OutputMetrics{Name: name}
	if p := compatible(wantClasses, gotClasses); p != "" {
		return m.fail(p)
	}
	if wantClasses.DType != tensor.Int64 {
		return m.fail(fmt.Sprintf("dtype mismatch: classes must be int64, have %s", wantClasses.DType))
	}
	if oracleScores == nil {
		return m.fail("the oracle scores are missing")
	}
	if err := oracleScores.Validate(); err != nil {
		return m.fail(fmt.Sprintf("malformed oracle scores: %v", err))
	}
	if oracleScores.DType == tensor.Int64 {
		return m.fail("dtype mismatch: oracle scores must be float, have int64")
	}
	r := oracleScores.Rank()
	if axis < 0 {
		axis += r
	}
	if axis < 0 || axis >= r {
		return m.fail(fmt.Sprintf("axis %d out of range for scores of shape %v", axis, oracleScores.Shape))
	}
	if !classesFit(wantClasses.Shape, oracleScores.Shape, axis) {
		return m.fail(fmt.Sprintf("shape mismatch: classes %v do not fit scores %v reduced along axis %d", wantClasses.Shape, oracleScores.Shape, axis))
	}
	n := oracleScores.Shape[axis]
	inner := tensor.NumElements(oracleScores.Shape[axis+1:])
	scores := oracleScores.Float64s()
	var own []float64
	if gotScores != nil && gotScores.Validate() == nil && gotScores.DType != tensor.Int64 && slices.Equal(gotScores.Shape, oracleScores.Shape) {
		own = gotScores.Float64s()
	}
	m.Total = wantClasses.Len()
	c := &collector{OutputMetrics: &m}
	var flips []string
	for i := range wantClasses.I64 {
		w, g := wantClasses.I64[i], gotClasses.I64[i]
		base := (i/inner)*n*inner + i%inner
		row := func(k int64) float64 { return scores[base+int(k)*inner] }
		if own != nil {
			ownRow := func(k int64) float64 { return own[base+int(k)*inner] }
			if first := firstArgmax(n, ownRow); g != first {
				if len(m.First) < maxListed {
					flips = append(flips, fmt.Sprintf("not the argmax of its own scores: its score %s at %d, %s at %d", scoreAt32(ownRow, n, g), g, scoreAt32(ownRow, n, first), first))
				}
				c.addMismatch(wantClasses.Shape, i, float64(w), float64(g), true, math.Inf(1))
				continue
			}
		}
		tied := tiedClasses(n, row, tol)
		if len(tied) >= 2 {
			m.NearTies = append(m.NearTies, NearTie{Index: tensor.Index(wantClasses.Shape, i), Classes: tied, Want: w, Got: g})
		}
		if g == w || (len(tied) >= 2 && contains(tied, g)) {
			continue
		}
		if len(m.First) < maxListed {
			flips = append(flips, fmt.Sprintf("oracle scores %s, %s", scoreAt(row, n, w), scoreAt(row, n, g)))
		}
		c.addMismatch(wantClasses.Shape, i, float64(w), float64(g), true, math.Inf(1))
	}
	m.OK = m.Mismatches == 0
	m.Report = classesReport(&m, flips)
	return m
}

// classesFit reports whether classes is scores with dimension axis removed
// (or kept with size 1).
func classesFit(classes, scores []int, axis int) bool {
	reduced := append(append([]int(nil), scores[:axis]...), scores[axis+1:]...)
	if slices.Equal(classes, reduced) {
		return true
	}
	kept := append(append(append([]int(nil), scores[:axis]...), 1), scores[axis+1:]...)
	return slices.Equal(classes, kept)
}

// firstArgmax is Argmax over one row: the first index of the greatest
// value, or of the first NaN; 0 for an empty row.
func firstArgmax(n int, row func(int64) float64) int64 {
	best := int64(0)
	for k := int64(0); k < int64(n); k++ {
		v := row(k)
		if math.IsNaN(v) {
			return k
		}
		if v > row(best) {
			best = k
		}
	}
	return best
}

// tiedClasses returns the classes of a row tied with its best score, or
// nil when the row is empty or holds a NaN.
func tiedClasses(n int, row func(int64) float64, tol Tolerance) []int64 {
	if n == 0 {
		return nil
	}
	top := math.Inf(-1)
	for k := int64(0); k < int64(n); k++ {
		v := row(k)
		if math.IsNaN(v) {
			return nil
		}
		top = math.Max(top, v)
	}
	var tied []int64
	for k := int64(0); k < int64(n); k++ {
		v := row(k)
		if v == top || (!math.IsInf(top, 0) && math.Abs(top-v) <= tol.Allowed(top)) {
			tied = append(tied, k)
		}
	}
	return tied
}

func contains(xs []int64, x int64) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// scoreAt32 is scoreAt for an executor's float32 scores.
func scoreAt32(row func(int64) float64, n int, k int64) string {
	if k < 0 || k >= int64(n) {
		return "(class out of range)"
	}
	return fmtValue(row(k), false, 32)
}

func scoreAt(row func(int64) float64, n int, k int64) string {
	if k < 0 || k >= int64(n) {
		return "(class out of range)"
	}
	return fmtValue(row(k), false, 64)
}

// classesReport writes "classes: 1 / 16 mismatched (6.2%); first
// mismatches: [3] want 2 got 5 (oracle scores 0.91, 0.12); 1 near-tie row:
// [4] classes {1 6} want 1 got 6".
func classesReport(m *OutputMetrics, flips []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d / %d mismatched", m.Name, m.Mismatches, m.Total)
	if m.Mismatches > 0 {
		fmt.Fprintf(&b, " (%.1f%%)", 100*float64(m.Mismatches)/float64(m.Total))
		b.WriteString("; first mismatches: ")
		for k, mm := range m.First {
			if k > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s want %d got %d (%s)", tensor.FormatIndex(mm.Index), int64(mm.Want), int64(mm.Got), flips[k])
		}
		if m.Mismatches > len(m.First) {
			fmt.Fprintf(&b, ", … (%d more)", m.Mismatches-len(m.First))
		}
	}
	if nt := len(m.NearTies); nt > 0 {
		rows := "rows"
		if nt == 1 {
			rows = "row"
		}
		fmt.Fprintf(&b, "; %d near-tie %s: ", nt, rows)
		for k, t := range m.NearTies {
			if k == maxListed {
				fmt.Fprintf(&b, ", … (%d more)", nt-maxListed)
				break
			}
			if k > 0 {
				b.WriteString(", ")
			}
			cls := make([]string, len(t.Classes))
			for j, c := range t.Classes {
				cls[j] = strconv.FormatInt(c, 10)
			}
			fmt.Fprintf(&b, "%s classes {%s} want %d got %d", tensor.FormatIndex(t.Index), strings.Join(cls, " "), t.Want, t.Got)
		}
	}
	return b.String()
}
