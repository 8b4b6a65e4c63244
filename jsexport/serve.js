// rxeq's server for generated TensorFlow.js modules (rxeq.executor/v1).
//
// rxeq runs this with `node -e BOOTSTRAP MODE`, the text in
// $RXEQ_SERVE_JS, MODE tfjs-cpu or tfjs-wasm, and $RXEQ_TFJS_DIR the
// directory whose node_modules hold @tensorflow/tfjs-core and the
// backends (npm ci of rxeq's tfjs/package-lock.json). The wasm backend
// runs on one thread, its .wasm files loaded from the installed
// package's dist directory: nothing is fetched.
//
// Each prepare message carries the program exported by rxeq (the
// `module` field); the module is compiled in memory (nothing is written
// to disk) with a require that resolves @tensorflow/* in $RXEQ_TFJS_DIR,
// and its functions are called positionally with the run's inputs:
// float32 tensors as tf.Tensor, int64 scalars as BigInt. A thrown
// RxeqError (checkedRem, checkedDiv) carries rxeq's kind and text;
// anything else is sent as "Name: message" with no kind. After every
// run the count of live tensors must be what it was before: a leak is
// reported as the run's error.
'use strict';

const fs = require('fs');
const path = require('path');
const vm = require('vm');
const zlib = require('zlib');
const Module = require('module');

const PROTOCOL = 'rxeq.executor/v1';
const MODE = process.argv[1] || '';
if (MODE !== 'tfjs-cpu' && MODE !== 'tfjs-wasm') {
  process.stderr.write(`rxeq serve.js: unknown mode ${JSON.stringify(MODE)} (want tfjs-cpu or tfjs-wasm)\n`);
  process.exit(2);
}
const DIR = process.env.RXEQ_TFJS_DIR || '';
const tfRequire = Module.createRequire(path.join(path.resolve(DIR), 'package.json'));

// The protocol owns fd 1; console output (TF.js's greeting, a module's
// console.log) goes to stderr.
for (const k of ['log', 'info', 'warn', 'debug']) {
  console[k] = console.error;
}
process.stdout.write = process.stderr.write.bind(process.stderr);

// inBuf holds bytes read from fd 0 and not consumed yet, inBuf[inStart,
// inEnd): one readSync takes whatever the pipe holds, so a request (its
// length, header and tensors, all in rxeq's one write) costs one system
// call, not one per part.
const inBuf = Buffer.allocUnsafe(1 << 16);
let inStart = 0;
let inEnd = 0;

// readSome reads what fd 0 holds into buf at off (at most n bytes),
// waiting for the first byte; 0 is the end of input.
function readSome(buf, off, n) {
  for (;;) {
    try {
      return fs.readSync(0, buf, off, n, null);
    } catch (e) {
      if (e.code === 'EAGAIN') {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
        continue;
      }
      if (e.code === 'EOF') {
        return 0;
      }
      throw e;
    }
  }
}

// readExact reads n bytes into a new array (its own memory: a tensor's
// bytes outlive the next read); at the end of input before the first
// byte it returns null when eofOK (between messages), else it throws.
// What inBuf holds is taken first; a remainder of inBuf's size or more
// is read straight into the result, a smaller one through inBuf.
function readExact(n, eofOK) {
  const buf = new Uint8Array(n);
  let got = Math.min(n, inEnd - inStart);
  buf.set(inBuf.subarray(inStart, inStart + got));
  inStart += got;
  while (got < n) {
    const direct = n - got >= inBuf.length;
    const k = direct ? readSome(buf, got, n - got) : readSome(inBuf, 0, inBuf.length);
    if (k === 0) {
      if (got === 0 && eofOK) {
        return null;
      }
      throw new Error('rxeq closed the pipe in the middle of a message');
    }
    if (direct) {
      got += k;
      continue;
    }
    const take = Math.min(k, n - got);
    buf.set(inBuf.subarray(0, take), got);
    got += take;
    inStart = take;
    inEnd = k;
  }
  return buf;
}

function writeAll(buf) {
  let off = 0;
  while (off < buf.length) {
    try {
      off += fs.writeSync(1, buf, off, buf.length - off);
    } catch (e) {
      if (e.code !== 'EAGAIN') {
        throw e;
      }
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
    }
  }
}

function readMessage() {
  const head = readExact(4, true);
  if (head === null) {
    return null;
  }
  const n = new DataView(head.buffer).getUint32(0, true);
  const header = JSON.parse(Buffer.from(readExact(n)).toString('utf8'));
  const tensors = [];
  for (const t of header.tensors || []) {
    tensors.push({ name: t.name, dtype: t.dtype, shape: t.shape || [], bytes: readExact(Number(t.nbytes)) });
  }
  return { header, tensors };
}

// writeMessage sends header and outputs [{name, dtype, shape, bytes}].
function writeMessage(header, outputs) {
  if (outputs && outputs.length) {
    header.tensors = outputs.map((o) => ({ name: o.name, dtype: o.dtype, shape: o.shape, nbytes: o.bytes.length }));
  }
  const h = Buffer.from(JSON.stringify(header), 'utf8');
  const len = Buffer.alloc(4);
  len.writeUInt32LE(h.length, 0);
  const parts = [len, h];
  for (const o of outputs || []) {
    parts.push(o.bytes);
  }
  writeAll(Buffer.concat(parts));
}

let tf;
const versions = { node: process.versions.node };

async function init() {
  tf = tfRequire('@tensorflow/tfjs-core');
  versions['tfjs-core'] = tf.version_core;
  if (MODE === 'tfjs-cpu') {
    versions['tfjs-backend-cpu'] = tfRequire('@tensorflow/tfjs-backend-cpu').version_cpu;
    await tf.setBackend('cpu');
  } else {
    const wasm = tfRequire('@tensorflow/tfjs-backend-wasm');
    versions['tfjs-backend-wasm'] = wasm.version_wasm;
    const dist = path.join(path.dirname(tfRequire.resolve('@tensorflow/tfjs-backend-wasm/package.json')), 'dist') + path.sep;
    wasm.setWasmPaths(dist);
    wasm.setThreadsCount(1);
    if (!(await tf.setBackend('wasm'))) {
      throw new Error('the wasm backend did not initialise');
    }
    versions.threads = String(wasm.getThreadsCount());
  }
  await tf.ready();
  if (tf.getBackend() !== MODE.slice('tfjs-'.length)) {
    throw new Error(`backend ${tf.getBackend()} is active, want ${MODE}`);
  }
}

let count = 0;

function load(prep) {
  const mod = prep.module;
  if (!mod || mod.format !== 'tfjs') {
    throw new Error(`the prepare message has no tfjs module (rxeq sends one to its ${MODE} executor)`);
  }
  count++;
  const filename = `rxeq-program-${count}.js`;
  const wrapper = vm.runInThisContext(Module.wrap(mod.source), { filename });
  const m = { exports: {} };
  wrapper.call(m.exports, m.exports, tfRequire, m, filename, path.resolve(DIR));
  const funcs = {};
  for (const [rx, js] of Object.entries(mod.functions)) {
    if (typeof m.exports[js] !== 'function') {
      throw new Error(`the module has no function ${js}`);
    }
    funcs[rx] = m.exports[js];
  }
  const results = {};
  for (const f of prep.functions || []) {
    results[f.name] = (f.results || []).map((r) => r.name);
  }
  return { funcs, results };
}

function argOf(t) {
  const b = t.bytes;
  if (t.dtype === 'int64') {
    const v = new BigInt64Array(b.buffer, b.byteOffset, b.length / 8);
    if (t.shape.length === 0) {
      return v[0];
    }
    const i32 = new Int32Array(v.length);
    for (let i = 0; i < v.length; i++) {
      if (v[i] < -2147483648n || v[i] > 2147483647n) {
        throw new RangeError(`input ${t.name}: TF.js has no int64 tensors, and ${v[i]} is outside int32`);
      }
      i32[i] = Number(v[i]);
    }
    return tf.tensor(i32, t.shape, 'int32');
  }
  if (t.dtype !== 'float32') {
    throw new TypeError(`input ${t.name}: dtype ${t.dtype} is not float32 or int64`);
  }
  return tf.tensor(new Float32Array(b.buffer, b.byteOffset, b.length / 4), t.shape, 'float32');
}

function outputOf(name, v) {
  if (typeof v === 'bigint') {
    const a = new BigInt64Array([v]);
    return { name, dtype: 'int64', shape: [], bytes: Buffer.from(a.buffer) };
  }
  if (v instanceof tf.Tensor) {
    const data = v.dataSync();
    const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    return { name, dtype: v.dtype, shape: v.shape.slice(), bytes: Buffer.from(bytes) };
  }
  if (v && v.dtype === 'int64' && v.data instanceof BigInt64Array) {
    return { name, dtype: 'int64', shape: v.shape.slice(), bytes: Buffer.from(v.data.buffer, v.data.byteOffset, v.data.byteLength) };
  }
  throw new TypeError(`result ${name} is ${v === undefined ? 'missing' : typeof v}, not a tensor`);
}

function errorOf(e) {
  if (e && e.name === 'RxeqError' && typeof e.kind === 'string') {
    return { kind: e.kind, message: e.message };
  }
  let text = e && e.message !== undefined ? `${e.name}: ${e.message}` : String(e);
  if (text.length > 4000) {
    text = text.slice(0, 4000) + '...';
  }
  return { kind: '', message: text };
}

function run(prog, fname, tensors) {
  const before = tf.memory().numTensors;
  const args = [];
  let outputs = [];
  try {
    for (const t of tensors) {
      args.push(argOf(t));
    }
    const value = prog.funcs[fname](...args);
    const names = prog.results[fname] || [];
    try {
      outputs = names.map((n) => outputOf(n, value[n]));
    } finally {
      for (const n of names) {
        if (value[n] instanceof tf.Tensor) {
          value[n].dispose();
        }
      }
    }
  } finally {
    for (const a of args) {
      if (a instanceof tf.Tensor) {
        a.dispose();
      }
    }
  }
  const after = tf.memory().numTensors;
  if (after !== before) {
    throw new Error(`${fname} left ${after - before} TF.js tensors behind (tf.memory().numTensors ${before} before the call, ${after} after)`);
  }
  return outputs;
}

function serve() {
  writeMessage({ type: 'hello', protocol: PROTOCOL, name: MODE, functions: null, versions });
  const programs = new Map();
  for (;;) {
    const msg = readMessage();
    if (msg === null) {
      return 0;
    }
    const { header, tensors } = msg;
    if (header.type === 'close') {
      return 0;
    }
    if (header.type === 'release') {
      programs.delete(header.program);
      continue;
    }
    const reply = { id: header.id };
    if (header.type === 'prepare') {
      try {
        programs.set(header.program, load(header));
        reply.type = 'ready';
      } catch (e) {
        process.stderr.write(`${e && e.stack}\n`);
        Object.assign(reply, { type: 'error', kind: '', message: `${MODE} could not prepare ${header.file || '?'}: ${errorOf(e).message}` });
      }
      writeMessage(reply);
      continue;
    }
    if (header.type !== 'run') {
      Object.assign(reply, { type: 'error', kind: '', message: `rxeq serve.js: unknown message type ${JSON.stringify(header.type)}` });
      writeMessage(reply);
      continue;
    }
    let outputs = [];
    try {
      const prog = programs.get(header.program);
      if (!prog || !prog.funcs[header.function]) {
        throw new Error(`${header.function} was not prepared`);
      }
      outputs = run(prog, header.function, tensors);
      reply.type = 'result';
    } catch (e) {
      outputs = [];
      reply.type = 'error';
      Object.assign(reply, errorOf(e));
      if (!reply.kind) {
        process.stderr.write(`${e && e.stack}\n`);
      }
    }
    reply.input_crc32 = {};
    for (const t of tensors) {
      reply.input_crc32[t.name] = zlib.crc32(t.bytes) >>> 0;
    }
    writeMessage(reply, outputs);
  }
}

init().then(() => process.exit(serve()), (e) => {
  process.stderr.write(`rxeq serve.js: ${MODE} cannot start: ${e && e.stack}\n`);
  process.exit(3);
});
