"""rxeq's server for generated Python modules (rxeq.executor/v1).

rxeq runs this with ``python3 -c BOOTSTRAP MODE``, the text in $RXEQ_SERVE_PY (MODE: pytorch,
torchscript or numpy) for its built-in executors of the same names. Each
prepare message carries the program exported by rxeq (the optional
``module`` field, docs/executor-protocol.md); the module is compiled in
memory (nothing is written to disk: its text is registered with linecache
so that TorchScript can read the functions' source) and its functions are
called positionally with the run's inputs. Under torchscript every function
goes through torch.jit.script in prepare; a function TorchScript rejects
fails the prepare with TorchScript's message.

Errors: ZeroDivisionError and OverflowError raised by the module's
checked_rem/checked_div carry rxeq's shared text and are sent with the
kinds "division by zero" and "integer overflow" (under TorchScript they
arrive as torch.jit.Error whose last line is "builtins.ZeroDivisionError:
TEXT"); anything else is sent as "TypeName: text" with no kind.
"""

import json
import linecache
import os
import re
import struct
import sys
import traceback
import types
import zlib

PROTOCOL = "rxeq.executor/v1"
MODE = sys.argv[1] if len(sys.argv) > 1 else ""
if MODE not in ("pytorch", "torchscript", "numpy"):
    sys.exit("rxeq serve: unknown mode %r (want pytorch, torchscript or numpy)" % MODE)

# The protocol keeps a private copy of fd 1; fd 1 (print, C libraries)
# goes to stderr.
_fd = os.dup(1)
os.dup2(2, 1)
sys.stdout = sys.stderr
WOUT = os.fdopen(_fd, "wb", buffering=1 << 16)
RIN = sys.stdin.buffer

import numpy as np  # noqa: E402

np.seterr(all="ignore")  # IEEE results, as every executor's; no warnings per call
if MODE != "numpy":
    import torch  # noqa: E402

    torch.set_num_threads(1)

KINDS = {"ZeroDivisionError": "division by zero", "OverflowError": "integer overflow"}
_SCRIPT_ERR = re.compile(r"^(?:builtins\.)?(ZeroDivisionError|OverflowError): (.*)$")


def versions():
    v = {"python": sys.version.split()[0], "numpy": np.__version__}
    if MODE != "numpy":
        v["torch"] = torch.__version__
    return v


def read_exact(n):
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = RIN.readinto(view[got:])
        if not k:
            raise EOFError("rxeq closed the pipe in the middle of a message")
        got += k
    return buf


def read_message():
    head = RIN.read(4)
    if not head:
        return None
    if len(head) < 4:
        raise EOFError("rxeq closed the pipe in the middle of a message")
    (n,) = struct.unpack("<I", head)
    header = json.loads(bytes(read_exact(n)))
    tensors = []
    for t in header.get("tensors") or []:
        buf = read_exact(int(t["nbytes"]))
        arr = np.frombuffer(buf, dtype=np.dtype(t["dtype"]).newbyteorder("<")).reshape(tuple(t["shape"] or ()))
        tensors.append((t["name"], arr, buf))
    return header, tensors


def write_message(header, arrays=()):
    descs, bufs = [], []
    for name, a in arrays:
        descs.append({"name": name, "dtype": a.dtype.name, "shape": list(a.shape), "nbytes": int(a.nbytes)})
        bufs.append(a.reshape(-1).view(np.uint8).data)
    if arrays:
        header["tensors"] = descs
    h = json.dumps(header).encode()
    WOUT.write(struct.pack("<I", len(h)))
    WOUT.write(h)
    for b in bufs:
        WOUT.write(b)
    WOUT.flush()


def as_array(v):
    if MODE != "numpy" and isinstance(v, torch.Tensor):
        v = v.detach().cpu().numpy()
    a = np.asarray(v)
    if not a.flags.c_contiguous:
        a = a.copy(order="C")
    return a


_count = [0]


def load(prep):
    """Compile the prepare's module; return {rx function: callable}."""
    mod = prep.get("module")
    if not mod:
        raise ValueError("the prepare message has no generated module (rxeq sends one to its %s executor)" % MODE)
    _count[0] += 1
    name = "rxeq_program_%d" % _count[0]
    filename = "<rxeq %s: %s>" % (name, prep.get("file", "?"))
    src = mod["source"]
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    m = types.ModuleType(name)
    m.__file__ = filename
    sys.modules[name] = m
    exec(compile(src, filename, "exec"), m.__dict__)
    results = {f["name"]: [r["name"] for r in f["results"]] for f in prep["functions"]}
    funcs = {}
    for rx, py in mod["functions"].items():
        fn = getattr(m, py)
        if MODE == "torchscript":
            fn = torch.jit.script(fn)
        funcs[rx] = fn
    return name, filename, funcs, results


def error_of(e):
    """(kind, message) of an exception from a generated function."""
    kind = KINDS.get(type(e).__name__)
    if kind is not None:
        return kind, str(e)
    if MODE == "torchscript" and isinstance(e, torch.jit.Error):
        lines = [ln for ln in str(e).splitlines() if ln.strip()]
        if lines:
            m = _SCRIPT_ERR.match(lines[-1])
            if m:
                return KINDS[m.group(1)], m.group(2)
    text = str(e)
    if len(text) > 4000:
        text = text[:4000] + "..."
    return "", "%s: %s" % (type(e).__name__, text)


def serve():
    write_message({"type": "hello", "protocol": PROTOCOL, "name": MODE, "functions": None, "versions": versions()})
    programs = {}
    while True:
        msg = read_message()
        if msg is None:
            return 0
        header, tensors = msg
        kind = header.get("type")
        if kind == "close":
            return 0
        if kind == "release":
            p = programs.pop(header.get("program"), None)
            if p is not None:
                sys.modules.pop(p[0], None)
                linecache.cache.pop(p[1], None)
            continue
        reply = {"id": header.get("id")}
        if kind == "prepare":
            try:
                programs[header["program"]] = load(header)
                reply["type"] = "ready"
            except Exception as e:
                traceback.print_exc(file=sys.stderr)
                reply.update(type="error", kind="", message="%s could not prepare %s: %s: %s" % (
                    MODE, header.get("file", "?"), type(e).__name__, e))
            write_message(reply)
            continue
        if kind != "run":
            reply.update(type="error", kind="", message="rxeq serve: unknown message type %r" % kind)
            write_message(reply)
            continue
        fname = header["function"]
        prog = programs.get(header.get("program"))
        outputs = None
        try:
            if prog is None or fname not in prog[2]:
                raise ValueError("%s was not prepared" % fname)
            args = []
            for _, arr, _ in tensors:
                if arr.ndim == 0 and arr.dtype.kind == "i":
                    args.append(int(arr[()]))
                elif MODE == "numpy":
                    args.append(arr)
                else:
                    args.append(torch.from_numpy(arr))
            value = prog[2][fname](*args)
            results = prog[3][fname]
            if not isinstance(value, tuple):
                value = (value,)
            outputs = [(n, as_array(v)) for n, v in zip(results, value)]
            reply["type"] = "result"
        except Exception as e:
            reply["type"] = "error"
            reply["kind"], reply["message"] = error_of(e)
            if not reply["kind"]:
                traceback.print_exc(file=sys.stderr)
        reply["input_crc32"] = {n: zlib.crc32(buf) & 0xFFFFFFFF for n, _, buf in tensors}
        write_message(reply, outputs or ())


try:
    sys.exit(serve())
except BrokenPipeError:
    sys.exit(0)
