package jsexport

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/rextio/rxeq/internal/repro"
	"github.com/rextio/rxeq/program/ir"
	"github.com/rextio/rxeq/tensor"
)

// ReproOptions describe a reproducer: which executor (tfjs-cpu or
// tfjs-wasm) and function, and the inputs of the failing case.
type ReproOptions = repro.Options

// Repro writes a standalone script, repro.js, that reproduces one case of
// executor opts.Executor: it holds the function as Export writes it, the
// inputs as exact float32 bits (base64 of their little-endian bytes), and
// a float64 reference in plain JavaScript doubles: the same module text,
// evaluated a second time with a small library of rxeq's semantics
// (NumPy's NaN rules, IEEE signed zeros, the first NaN's index for
// Argmax) in place of @tensorflow/tfjs-core. It runs the function on the
// executor's backend, computes the reference, prints the versions and
// expected against got at the first mismatching indices, and exits 1
// while the discrepancy reproduces, 0 when it does not. It needs only
// node and the pinned @tensorflow/* packages (found through NODE_PATH or
// next to the script, else in $RXEQ_TFJS_DIR or where ci/setup.sh
// installs them); it does not need rxeq.
//
// Float outputs are compared with the tolerance; NaN must meet NaN and
// ±Inf the same infinity; int64 outputs must be equal (rxeq's near-tie
// rule for classes is not applied). An error is compared by its text.
func Repro(p *ir.Program, opts ReproOptions) ([]byte, error) {
	if !IsExecutor(opts.Executor) {
		return nil, fmt.Errorf("%w: no reproducer for executor %q (want tfjs-cpu or tfjs-wasm)", ErrExport, opts.Executor)
	}
	f, opts, err := repro.Prepare(p, opts, ErrExport)
	if err != nil {
		return nil, err
	}
	m, err := Export(p, Options{Funcs: []string{opts.Func}, Source: opts.Source, Version: opts.Version})
	if err != nil {
		return nil, err
	}
	inputs, err := repro.Inputs(f, opts, ErrExport)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("#!/usr/bin/env node\n")
	b.WriteString("// " + repro.Byline(opts, commentText) + " (TensorFlow.js " + TFJSVersion + "),\n")
	b.WriteString("// against a float64 reference of the same function in plain JavaScript doubles. It needs\n")
	b.WriteString("// only node and the @tensorflow/* packages. Exit status 1: the discrepancy reproduces; 0: it does not.\n")
	b.WriteString("// Usage: NODE_PATH=DIR/node_modules node repro.js   (DIR: where `npm ci` installed rxeq's tfjs/package-lock.json;\n")
	b.WriteString("// without NODE_PATH, $RXEQ_TFJS_DIR or ~/.cache/rxeq/tfjs/" + TFJSVersion + " is tried)\n")
	b.WriteString("'use strict';\n\n")
	b.WriteString("// ---- the function as rxeq exported it " + strings.Repeat("-", 40) + "\n\n")
	b.WriteString("function program(require, module) {\n")
	b.WriteString(repro.StripHeader(string(m.Source), "//"))
	b.WriteString("}\n\n")
	b.WriteString("// ---- the inputs, bit for bit " + strings.Repeat("-", 49) + "\n\n")
	b.WriteString("const INPUTS = [\n")
	for i, prm := range f.Params {
		fmt.Fprintf(&b, "  [%s, %s],\n", jsString(prm.Name), inputLiteral(inputs[i]))
	}
	b.WriteString("];\n")
	results := make([]string, len(f.Results))
	for i, r := range f.Results {
		results[i] = jsString(r.Name)
	}
	fmt.Fprintf(&b, "const RESULTS = [%s];\n", strings.Join(results, ", "))
	fmt.Fprintf(&b, "const FUNCTION = %s;\n", jsString(m.Names[opts.Func]))
	fmt.Fprintf(&b, "const EXECUTOR = %s;\n", jsString(string(opts.Executor)))
	fmt.Fprintf(&b, "const TFJS_VERSION = %s;\n", jsString(TFJSVersion))
	fmt.Fprintf(&b, "const RTOL = %s, ATOL = %s;\n", numText(opts.RTol), numText(opts.ATol))
	b.WriteString(reproMain)
	return []byte(b.String()), nil
}

func numText(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// inputLiteral writes a tensor as JavaScript: a BigInt for an int64
// scalar, else {dtype, shape, b64} of its little-endian bytes.
func inputLiteral(t *tensor.Tensor) string {
	if t.DType == tensor.Int64 && len(t.Shape) == 0 {
		return strconv.FormatInt(t.I64[0], 10) + "n"
	}
	dt := "float32"
	if t.DType == tensor.Int64 {
		dt = "int64"
	}
	return fmt.Sprintf("{ dtype: %q, shape: [%s], b64: %q }", dt, strings.Join(repro.Dims(t), ", "), base64.StdEncoding.EncodeToString(repro.LittleEndian(t)))
}

// reproMain loads TF.js and the backend, defines the float64 reference
// library, runs both and compares.
const reproMain = `
// ---- the float64 reference: @tensorflow/tfjs-core's calls above, with rxeq's semantics ----

class RefTensor {
  constructor(shape, data) {
    this.shape = shape;
    this.data = data;
    this.dtype = 'float64';
  }
  dataSync() { return this.data; }
  arraySync() { return this.shape.length === 0 ? this.data[0] : Array.from(this.data); }
  dispose() {}
}

function size(shape) { return shape.reduce((p, d) => p * d, 1); }

function asRef(x) { return x instanceof RefTensor ? x : new RefTensor([], Float64Array.of(x)); }

function unary(x, f) { x = asRef(x); return new RefTensor(x.shape.slice(), x.data.map(f)); }

// binary broadcasts as NumPy does.
function binary(a, b, f) {
  a = asRef(a); b = asRef(b);
  const r = Math.max(a.shape.length, b.shape.length);
  const sa = Array(r - a.shape.length).fill(1).concat(a.shape);
  const sb = Array(r - b.shape.length).fill(1).concat(b.shape);
  const shape = sa.map((d, i) => (d === 1 ? sb[i] : d));
  const strides = (s) => { const st = Array(r).fill(1); for (let i = r - 2; i >= 0; i--) st[i] = st[i + 1] * s[i + 1]; return st; };
  const ta = strides(sa), tb = strides(sb);
  const n = size(shape), out = new Float64Array(n), idx = Array(r).fill(0);
  for (let k = 0; k < n; k++) {
    let oa = 0, ob = 0;
    for (let i = 0; i < r; i++) {
      if (sa[i] !== 1) oa += idx[i] * ta[i];
      if (sb[i] !== 1) ob += idx[i] * tb[i];
    }
    out[k] = f(a.data[oa], b.data[ob]);
    for (let i = r - 1; i >= 0; i--) { if (++idx[i] < shape[i]) break; idx[i] = 0; }
  }
  return new RefTensor(shape, out);
}

// lanes calls f(values) for every lane along axis and collects its results.
function reduce(x, axis, keep, f) {
  const outer = size(x.shape.slice(0, axis)), len = x.shape[axis], inner = size(x.shape.slice(axis + 1));
  const out = new Float64Array(outer * inner);
  const lane = new Float64Array(len);
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      for (let j = 0; j < len; j++) lane[j] = x.data[(o * len + j) * inner + i];
      out[o * inner + i] = f(lane);
    }
  }
  const shape = x.shape.slice();
  if (keep) shape[axis] = 1; else shape.splice(axis, 1);
  return new RefTensor(shape, out);
}

// nanMax is NumPy's max: NaN if any; of -0 and +0, +0.
function nanMax(xs) { let m = -Infinity; for (const v of xs) { if (v !== v) return v; m = Math.max(m, v); } return m; }

function softmaxLast(x, log) {
  const len = x.shape[x.shape.length - 1], out = new Float64Array(x.data.length);
  for (let o = 0; o < x.data.length; o += len) {
    const lane = x.data.subarray(o, o + len), m = nanMax(lane);
    let s = 0;
    for (let j = 0; j < len; j++) s += Math.exp(lane[j] - m);
    for (let j = 0; j < len; j++) out[o + j] = log ? (lane[j] - m) - Math.log(s) : Math.exp(lane[j] - m) / s;
  }
  return new RefTensor(x.shape.slice(), out);
}

function transpose(x, perm) {
  const r = x.shape.length;
  perm = perm || Array.from({ length: r }, (_, i) => r - 1 - i);
  const shape = perm.map((p) => x.shape[p]);
  const st = Array(r).fill(1);
  for (let i = r - 2; i >= 0; i--) st[i] = st[i + 1] * x.shape[i + 1];
  const n = size(shape), out = new Float64Array(n), idx = Array(r).fill(0);
  for (let k = 0; k < n; k++) {
    let off = 0;
    for (let i = 0; i < r; i++) off += idx[i] * st[perm[i]];
    out[k] = x.data[off];
    for (let i = r - 1; i >= 0; i--) { if (++idx[i] < shape[i]) break; idx[i] = 0; }
  }
  return new RefTensor(shape, out);
}

const reference = {
  Tensor: RefTensor,
  tidy: (f) => f(),
  scalar: (v) => new RefTensor([], Float64Array.of(v)),
  add: (a, b) => binary(a, b, (x, y) => x + y),
  sub: (a, b) => binary(a, b, (x, y) => x - y),
  mul: (a, b) => binary(a, b, (x, y) => x * y),
  div: (a, b) => binary(a, b, (x, y) => x / y),
  maximum: (a, b) => binary(a, b, Math.max), // NaN propagates; max(-0, +0) is +0
  minimum: (a, b) => binary(a, b, Math.min),
  neg: (x) => unary(x, (v) => -v),
  tanh: (x) => unary(x, Math.tanh),
  exp: (x) => unary(x, Math.exp),
  log: (x) => unary(x, Math.log),
  sigmoid: (x) => unary(x, (v) => 1 / (1 + Math.exp(-v))),
  relu: (x) => unary(x, (v) => (v > 0 || v !== v ? v : 0)),
  abs: (x) => unary(x, Math.abs),
  sqrt: (x) => unary(x, Math.sqrt),
  matMul: (a, b) => {
    const [n, k] = a.shape, m = b.shape[1], out = new Float64Array(n * m);
    for (let i = 0; i < n; i++) for (let j = 0; j < m; j++) {
      let s = 0;
      for (let p = 0; p < k; p++) s += a.data[i * k + p] * b.data[p * m + j];
      out[i * m + j] = s;
    }
    return new RefTensor([n, m], out);
  },
  transpose,
  softmax: (x) => softmaxLast(x, false),
  logSoftmax: (x) => softmaxLast(x, true),
  sum: (x, axis, keep) => reduce(x, axis, keep, (l) => l.reduce((s, v) => s + v, 0)),
  mean: (x, axis, keep) => reduce(x, axis, keep, (l) => l.reduce((s, v) => s + v, 0) / l.length),
  max: (x, axis, keep) => reduce(x, axis, keep, nanMax),
  // argMax is the first NaN's index if there is one, else the first maximum's.
  argMax: (x, axis) => reduce(x, axis, false, (l) => {
    let best = 0;
    for (let j = 0; j < l.length; j++) { if (l[j] !== l[j]) return j; if (l[j] > l[best]) best = j; }
    return best;
  }),
};

// ---- running both -----------------------------------------------------------

const path = require('path');

// tfjs finds the packages through node's own resolution (NODE_PATH, a
// node_modules next to this script), else in $RXEQ_TFJS_DIR or rxeq's cache.
function tfjs() {
  try {
    require.resolve('@tensorflow/tfjs-core');
    return require;
  } catch (e) {
    const cache = process.env.XDG_CACHE_HOME || path.join(require('os').homedir(), '.cache');
    const dir = process.env.RXEQ_TFJS_DIR || path.join(cache, 'rxeq', 'tfjs', TFJS_VERSION);
    return require('module').createRequire(path.join(dir, 'package.json'));
  }
}

function bytesOf(b64) {
  const buf = Buffer.from(b64, 'base64');
  const copy = new Uint8Array(buf.length);
  copy.set(buf);
  return copy.buffer;
}

function args(tf, toTensor) {
  return INPUTS.map(([, v]) => {
    if (typeof v === 'bigint') return v;
    if (v.dtype === 'int64') {
      const i = new BigInt64Array(bytesOf(v.b64));
      return toTensor(Array.from(i, Number), v.shape, true);
    }
    return toTensor(new Float32Array(bytesOf(v.b64)), v.shape, false);
  });
}

function outputs(value, Tensor) {
  const out = {};
  for (const name of RESULTS) {
    const v = value[name];
    if (typeof v === 'bigint') out[name] = { shape: [], ints: [v] };
    else if (v instanceof Tensor) out[name] = { shape: v.shape, floats: Array.from(v.dataSync()) };
    else out[name] = { shape: v.shape, ints: Array.from(v.data) };
  }
  return out;
}

function num(v) { return Object.is(v, -0) ? '-0' : String(v); }

function errorText(e) { return e && e.name === 'RxeqError' ? e.message : String(e && e.name) + ': ' + String(e && e.message); }

function run(f) {
  try { return { out: f() }; } catch (e) { return { err: errorText(e) }; }
}

async function main() {
  const req = tfjs();
  const tf = req('@tensorflow/tfjs-core');
  const versions = ['node ' + process.versions.node, 'tfjs-core ' + tf.version_core];
  if (EXECUTOR === 'tfjs-wasm') {
    const wasm = req('@tensorflow/tfjs-backend-wasm');
    wasm.setWasmPaths(path.join(path.dirname(req.resolve('@tensorflow/tfjs-backend-wasm/package.json')), 'dist') + path.sep);
    wasm.setThreadsCount(1);
    await tf.setBackend('wasm');
    versions.push('tfjs-backend-wasm ' + wasm.version_wasm + ' (1 thread)');
  } else {
    versions.push('tfjs-backend-cpu ' + req('@tensorflow/tfjs-backend-cpu').version_cpu);
    await tf.setBackend('cpu');
  }
  await tf.ready();
  const fw = { exports: {} };
  program((name) => req(name), fw);
  const ref = { exports: {} };
  program((name) => (name === '@tensorflow/tfjs-core' ? reference : req(name)), ref);

  const got = run(() => outputs(fw.exports[FUNCTION](...args(tf, (d, s, int) => tf.tensor(d, s, int ? 'int32' : 'float32'))), tf.Tensor));
  const want = run(() => outputs(ref.exports[FUNCTION](...args(reference, (d, s) => new RefTensor(s, Float64Array.from(d)))), RefTensor));
  console.log('executor: ' + EXECUTOR + ' | ' + versions.join(' | '));
  if (got.err !== undefined || want.err !== undefined) {
    console.log('expected error:', want.err === undefined ? null : want.err);
    console.log('got error:     ', got.err === undefined ? null : got.err);
    const same = got.err === want.err;
    console.log(same ? 'not reproduced: the errors agree' : 'REPRODUCED');
    return same ? 0 : 1;
  }
  let bad = false;
  for (const name of RESULTS) {
    const w = want.out[name], g = got.out[name];
    if (w.shape.join() !== g.shape.join()) {
      console.log(name + ': shape [' + g.shape + '], want [' + w.shape + ']');
      bad = true;
      continue;
    }
    const wv = w.floats || w.ints, gv = g.floats || g.ints, mism = [];
    for (let i = 0; i < wv.length; i++) {
      let ok;
      if (w.floats) {
        const a = wv[i], b = gv[i];
        if (a !== a || b !== b) ok = a !== a && b !== b;
        else if (!isFinite(a) || !isFinite(b)) ok = a === b;
        else ok = Math.abs(b - a) <= ATOL + RTOL * Math.abs(a);
      } else {
        ok = BigInt(wv[i]) === BigInt(gv[i]);
      }
      if (!ok) mism.push(i);
    }
    if (mism.length === 0) {
      console.log(name + ': ' + wv.length + ' elements agree');
      continue;
    }
    bad = true;
    console.log(name + ': ' + mism.length + ' / ' + wv.length + ' mismatched; first:');
    for (const i of mism.slice(0, 5)) {
      const at = [];
      for (let k = w.shape.length - 1, r = i; k >= 0; k--) { at.unshift(r % w.shape[k]); r = Math.floor(r / w.shape[k]); }
      console.log('    [' + at.join(', ') + '] want ' + num(wv[i]) + ' got ' + num(gv[i]));
    }
  }
  console.log(bad ? 'REPRODUCED' : 'not reproduced: the outputs agree');
  return bad ? 1 : 0;
}

main().then((code) => process.exit(code), (e) => { console.error(e); process.exit(2); });
`
