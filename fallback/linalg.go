package fallback

import "github.com/rextio/rxeq/program/ir"

// matMul computes Dst[M][N] = A[M][K] · B[K][N]. Each output is accumulated
// in float32 starting from 0 and adding A[i][k]·B[k][j] for k = 0, 1, …, in
// that order (the loops run i, k, j so B is read row by row). Every product
// is rounded to float32 before it is added, so no multiply-add is fused.
func (st *state) matMul(o *ir.Op) error {
	a, err := st.float(o.Args[0])
	if err != nil {
		return err
	}
	b, err := st.float(o.Args[1])
	if err != nil {
		return err
	}
	as, bs, os := st.shapes[o.Args[0].ID], st.shapes[o.Args[1].ID], st.shapes[o.Dst.ID]
	m, k, n := as[0], as[1], bs[1]
	if bs[0] != k || os[0] != m || os[1] != n || len(a) != m*k || len(b) != k*n {
		return st.shapeError(o)
	}
	out := st.dstFloat(o, false)
	clear(out)
	for i := 0; i < m; i++ {
		row := out[i*n : i*n+n]
		arow := a[i*k : i*k+k]
		for p, x := range arow {
			brow := b[p*n : p*n+n]
			row := row[:len(brow)] // lets the compiler drop the bounds checks
			for j, y := range brow {
				row[j] += float32(x * y)
			}
		}
	}
	return nil
}

// transpose computes Dst[N][M] = A[M][N] transposed.
func (st *state) transpose(o *ir.Op) error {
	a, err := st.float(o.Args[0])
	if err != nil {
		return err
	}
	as, os := st.shapes[o.Args[0].ID], st.shapes[o.Dst.ID]
	m, n := as[0], as[1]
	if os[0] != n || os[1] != m || len(a) != m*n {
		return st.shapeError(o)
	}
	out := st.dstFloat(o, false)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			out[j*m+i] = a[i*n+j]
		}
	}
	return nil
}
