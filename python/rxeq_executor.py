#!/usr/bin/env python3
"""Serve the functions of a Python module to rxeq as an external executor.

rxeq (github.com/rextio/rxeq) runs a scoring function written in its .rx
language through several executors and compares their full outputs. This
adapter lets a model author's own Python code be one of them: it speaks
rxeq's executor protocol, rxeq.executor/v1 (docs/executor-protocol.md), on
stdin and stdout, and calls the module's function of the same name as the
.rx function, with the inputs as keyword arguments by parameter name:

    rxeq run --executor author-numpy='/usr/bin/python3 python/rxeq_executor.py examples/python/numpy_scoring.py' \\
        scenarios/reference.rx

Needs Python 3.8+ and NumPy; nothing else (the module may import what it
likes: PyTorch, TensorFlow, JAX...).

The calling convention:

* Float and int64 tensor inputs arrive as NumPy arrays of dtype float32 or
  int64, C-contiguous and writable (they are this process's own copies, but
  rxeq checks that the function does not write into them: the result
  carries a CRC-32 of each input as it is after the call). An int64 scalar
  parameter (rank 0) arrives as a Python int.
* The function returns its results as a tuple or list in the .rx
  function's result order, a dict by result name, or, for one result, the
  array itself. Anything with a ``numpy()`` method (a CPU torch.Tensor, an
  eager tf.Tensor) or that NumPy can convert is accepted. The dtype is NOT
  converted: a float64 array where the .rx function returns float32 is
  reported by rxeq as a wrong dtype, as it should be.
* An exception fails the call. ``RxeqError(kind, message)`` carries one of
  rxeq's stable error kinds and texts; ``checked_rem`` and ``checked_div``
  raise it exactly as every rxeq executor does for CheckedRem and
  CheckedDiv (e.g. "score_divisor: CheckedRem: division by zero
  (round_idx=0) at error.rx:20:6"). Any other exception becomes an
  unclassified error "TypeName: text" and its traceback goes to stderr.
* A function of the program that the module does not define is reported
  as not served, and rxeq marks its cases skipped, with the reason.

Anything the module prints goes to stderr: file descriptor 1 is moved to
stderr before the module is imported, so print() and C libraries cannot
corrupt the protocol stream.
"""

import argparse
import contextvars
import importlib
import importlib.util
import inspect
import json
import os
import struct
import sys
import traceback
import zlib

try:
    import numpy as np
except ImportError as e:  # say which python this is, and what to do
    sys.exit("rxeq_executor.py needs NumPy, and %s cannot import it (%s): run the adapter with a Python "
             "that has NumPy, e.g. Debian's /usr/bin/python3 with python3-numpy" % (sys.executable, e))

PROTOCOL = "rxeq.executor/v1"

__all__ = ["RxeqError", "checked_rem", "checked_div", "serve", "main", "PROTOCOL"]

# The stable error kinds rxeq knows (harness/compare_errors.go).
KINDS = (
    "division by zero",
    "integer overflow",
    "missing input",
    "unknown input",
    "wrong dtype",
    "wrong rank",
    "wrong shape",
    "unsupported device",
    "unsupported",
)

_MIN_INT64 = -(1 << 63)


class RxeqError(Exception):
    """An error with one of rxeq's stable kinds and its exact text.

    kind is one of KINDS (or "" for an unclassified error); message is the
    whole text, "FUNC: DETAIL" for a runtime error, compared by rxeq with
    the oracle's.
    """

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind
        self.message = message


class ProtocolError(Exception):
    """rxeq sent something this adapter cannot read."""


# The call being served: (function name, its checked sites), for
# checked_rem and checked_div.
_current = contextvars.ContextVar("rxeq_current_call", default=None)


def _site(builtin, lhs, nth):
    call = _current.get()
    if call is None:
        return None, None
    fn, sites = call
    cands = [s for s in sites if s["builtin"] == builtin and (lhs is None or s["lhs"] == lhs)]
    if nth is not None:
        cands = cands[nth:nth + 1]
    if len(cands) != 1:
        which = "" if lhs is None else " with dividend %r" % lhs
        raise RxeqError("", "%s: the adapter found %d %s sites%s in the program; pass lhs= (the dividend's source text) or nth=" % (
            fn, len(cands), builtin, which))
    return fn, cands[0]


def _checked_error(builtin, a, b, lhs, nth):
    fn, site = _site(builtin, lhs, nth)
    if site is None:
        where, fn, name = "", fn or "?", lhs or "a"
    else:
        where, name = " at " + site["pos"], site["lhs"]
    if b == 0:
        return RxeqError("division by zero", "%s: %s: division by zero (%s=%d)%s" % (fn, builtin, name, a, where))
    return RxeqError("integer overflow", "%s: %s: integer overflow (%s=%d, divisor -1)%s" % (fn, builtin, name, a, where))


def checked_rem(a, b, lhs=None, nth=None):
    """a % b with Go's semantics (the sign of a), as .rx's CheckedRem.

    b == 0 raises the RxeqError every rxeq executor raises, with the site
    (dividend text and position) taken from the program rxeq sent: the
    function's only CheckedRem, or the one whose dividend's source text is
    lhs, or the nth (0-based) of them.
    """
    a, b = int(a), int(b)
    if b == 0:
        raise _checked_error("CheckedRem", a, b, lhs, nth)
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def checked_div(a, b, lhs=None, nth=None):
    """a / b truncated toward zero, as .rx's CheckedDiv; b == 0 and
    MinInt64 / -1 raise rxeq's errors (see checked_rem)."""
    a, b = int(a), int(b)
    if b == 0 or (a == _MIN_INT64 and b == -1):
        raise _checked_error("CheckedDiv", a, b, lhs, nth)
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


# ---------------------------------------------------------------- framing


def _read_exact(f, n):
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = f.readinto(view[got:])
        if not k:
            raise EOFError("rxeq closed the pipe in the middle of a message")
        got += k
    return buf


def read_message(f):
    """Read one frame: (header dict, [(name, array, buffer)]), or None at EOF."""
    head = f.read(4)
    if not head:
        return None
    if len(head) < 4:
        raise EOFError("rxeq closed the pipe in the middle of a message")
    (n,) = struct.unpack("<I", head)
    header = json.loads(bytes(_read_exact(f, n)))
    tensors = []
    for t in header.get("tensors") or []:
        buf = _read_exact(f, int(t["nbytes"]))
        dt = np.dtype(t["dtype"]).newbyteorder("<")
        arr = np.frombuffer(buf, dtype=dt).reshape(tuple(t["shape"] or ()))
        tensors.append((t["name"], arr, buf))
    return header, tensors


def _as_array(name, v):
    if hasattr(v, "detach") and hasattr(v, "numpy"):  # torch.Tensor
        v = v.detach().cpu().numpy()
    elif hasattr(v, "numpy") and not isinstance(v, np.ndarray):  # tf.Tensor, ...
        v = v.numpy()
    a = np.asarray(v)
    if a.dtype.kind not in "biuf":
        raise RxeqError("", "output %s has dtype %s, not a number type" % (name, a.dtype))
    if not a.flags.c_contiguous:
        a = a.copy(order="C")  # not np.ascontiguousarray: it makes a scalar 1-d
    if a.dtype.byteorder == ">" or (a.dtype.byteorder == "=" and sys.byteorder == "big"):
        a = a.astype(a.dtype.newbyteorder("<"))
    return a


def write_message(f, header, arrays=()):
    """Write one frame: header (a dict) and the arrays [(name, ndarray)]."""
    descs, bufs = [], []
    for name, a in arrays:
        descs.append({"name": name, "dtype": a.dtype.name, "shape": list(a.shape), "nbytes": int(a.nbytes)})
        bufs.append(a.reshape(-1).view(np.uint8).data)
    if arrays:
        header["tensors"] = descs
    h = json.dumps(header).encode()
    f.write(struct.pack("<I", len(h)))
    f.write(h)
    for b in bufs:
        f.write(b)
    f.flush()


# ---------------------------------------------------------------- serving


def _served(module):
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, v in vars(module).items()
                 if not n.startswith("_") and inspect.isfunction(v) and v.__module__ == module.__name__]
    return sorted(n for n in names if callable(getattr(module, n, None)))


def _results(fn_sig, value):
    names = [r["name"] for r in fn_sig["results"]]
    if hasattr(value, "_asdict"):
        value = value._asdict()
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, (tuple, list)):
        if len(value) != len(names):
            raise RxeqError("", "%s returned %d values, the .rx function has %d results (%s)" % (
                fn_sig["name"], len(value), len(names), ", ".join(names)))
        items = list(zip(names, value))
    elif len(names) == 1:
        items = [(names[0], value)]
    else:
        raise RxeqError("", "%s returned a %s, want a tuple or dict of %d results (%s)" % (
            fn_sig["name"], type(value).__name__, len(names), ", ".join(names)))
    return [(str(n), _as_array(n, v)) for n, v in items]


def serve(module, name, rin, wout, label=None):
    """Serve module's functions on the binary streams rin and wout until
    rxeq closes the pipe or sends close. Returns the exit status."""
    label = label or getattr(module, "__file__", None) or module.__name__
    write_message(wout, {"type": "hello", "protocol": PROTOCOL, "name": name, "functions": _served(module)})
    programs = {}
    while True:
        msg = read_message(rin)
        if msg is None:
            return 0
        header, tensors = msg
        kind = header.get("type")
        if kind == "close":
            return 0
        if kind == "release":
            programs.pop(header.get("program"), None)
            continue
        reply = {"id": header.get("id")}
        if kind == "prepare":
            funcs = {f["name"]: f for f in header["functions"]}
            programs[header["program"]] = funcs
            reply["type"] = "ready"
            unserved = {n: "%s defines no function %s" % (label, n) for n in funcs if not callable(getattr(module, n, None))}
            if unserved:
                reply["unserved"] = unserved
            write_message(wout, reply)
            continue
        if kind != "run":
            reply.update(type="error", kind="", message="rxeq_executor.py: unknown message type %r" % kind)
            write_message(wout, reply)
            continue
        fname = header["function"]
        sig = programs.get(header.get("program"), {}).get(fname)
        kwargs = {}
        for tname, arr, _ in tensors:
            kwargs[tname] = int(arr[()]) if arr.ndim == 0 and arr.dtype.kind == "i" else arr
        token = _current.set((fname, sig["checked"] if sig else []))
        outputs = None
        try:
            if sig is None:
                raise RxeqError("", "rxeq_executor.py: %s was not prepared" % fname)
            outputs = _results(sig, getattr(module, fname)(**kwargs))
        except RxeqError as e:
            reply.update(type="error", kind=e.kind, message=e.message)
        except Exception as e:  # the user's code failed: report it, keep serving
            traceback.print_exc(file=sys.stderr)
            reply.update(type="error", kind="", message="%s: %s" % (type(e).__name__, e))
        finally:
            _current.reset(token)
        if outputs is not None:
            reply["type"] = "result"
        # The inputs as they are now: rxeq compares them with what it sent.
        reply["input_crc32"] = {tname: zlib.crc32(buf) & 0xFFFFFFFF for tname, _, buf in tensors}
        write_message(wout, reply, outputs or ())


def _load(spec):
    if spec.endswith(".py") or os.sep in spec:
        path = os.path.abspath(spec)
        sys.path.insert(0, os.path.dirname(path))
        modname = os.path.splitext(os.path.basename(path))[0]
        s = importlib.util.spec_from_file_location(modname, path)
        if s is None or s.loader is None:
            raise ImportError("cannot load %s" % spec)
        module = importlib.util.module_from_spec(s)
        sys.modules[modname] = module
        s.loader.exec_module(module)
        return module
    return importlib.import_module(spec)


def _private_stdout():
    """Keep the protocol on a private copy of fd 1 and point fd 1 (and
    sys.stdout) at stderr, so nothing else can write to the protocol."""
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(fd, "wb", buffering=1 << 16)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Serve a Python module's functions to rxeq (rxeq.executor/v1).")
    ap.add_argument("module", help="a .py file or an importable module name")
    ap.add_argument("--name", default=None, help="the name sent in the hello (default: the module's name)")
    args = ap.parse_args(argv)
    # Run as a script this module is __main__; a user module's
    # "from rxeq_executor import checked_rem" must get this very module
    # (its call context), not a second copy.
    sys.modules.setdefault("rxeq_executor", sys.modules[__name__])
    wout = _private_stdout()
    rin = sys.stdin.buffer
    module = _load(args.module)
    name = args.name or module.__name__
    try:
        return serve(module, name, rin, wout)
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
