package ortrepro

// reproMain is the part of repro.py that is the same for every case: the
// reference's ±0 rules, the ctypes binding of ONNX Runtime's C API, the
// child process and the comparison.
const reproMain = `

# ---- the reference: NumPy in float64, with rxeq's rules for zeros --------------

class RxeqNumPy:
    """numpy, but maximum, minimum and max follow rxeq's contract for zeros of
    both signs (Maximum(-0, +0) = +0, Minimum(+0, -0) = -0, Max of a lane whose
    greatest values are -0 and +0 is +0; NumPy returns the first operand of two
    zeros). NaN propagates as in NumPy. Everything else is numpy itself."""

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def _zeros(r, a, b, negative):
        a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
        both = (a == 0) & (b == 0)
        if not both.any():
            return r
        out = np.array(r, copy=True)
        out[both] = np.where(negative(np.signbit(a), np.signbit(b))[both], -0.0, 0.0)
        return out if out.ndim else out[()]

    def maximum(self, a, b):
        return self._zeros(np.maximum(a, b), a, b, np.logical_and)

    def minimum(self, a, b):
        return self._zeros(np.minimum(a, b), a, b, np.logical_or)

    def max(self, x, axis=None, keepdims=False):
        x = np.asarray(x)
        if axis is not None and x.shape[axis] == 0:
            shape = list(x.shape)
            shape[axis] = 1
            r = np.full(shape, -np.inf, dtype=x.dtype)
            return r if keepdims else np.squeeze(r, axis=axis)
        r = np.max(x, axis=axis, keepdims=True)
        positive = np.any((x == 0) & ~np.signbit(x), axis=axis, keepdims=True)
        r = np.where(r == 0, np.where(positive, 0.0, -0.0).astype(x.dtype), r)
        if not keepdims:
            r = np.squeeze(r, axis=axis) if axis is not None else r.reshape(())
        return r if r.ndim else r[()]


reference = {}
exec(compile(REFERENCE_SOURCE, "reference", "exec"), reference)
reference["np"] = RxeqNumPy()


def error_text(e):
    if isinstance(e, (ZeroDivisionError, OverflowError)):
        return str(e)
    return "%s: %s" % (type(e).__name__, e)


def run_reference(args):
    try:
        out = reference[REFERENCE_FUNCTION](*args)
        return (out if isinstance(out, tuple) else (out,)), None
    except Exception as e:  # compared by text below
        return None, error_text(e)


# ---- ONNX Runtime through its C API ------------------------------------------

# Positions in struct OrtApi (onnxruntime_c_api.h), as rxeq's onnx/ort/capi.h.
GET_ERROR_CODE, GET_ERROR_MESSAGE, CREATE_ENV = 1, 2, 3
CREATE_SESSION_FROM_ARRAY, RUN, CREATE_SESSION_OPTIONS = 8, 9, 10
SET_SESSION_EXECUTION_MODE = 13
SET_SESSION_LOG_SEVERITY_LEVEL, SET_SESSION_GRAPH_OPTIMIZATION_LEVEL = 22, 23
SET_INTRA_OP_NUM_THREADS, SET_INTER_OP_NUM_THREADS = 24, 25
CREATE_TENSOR_WITH_DATA_AS_ORT_VALUE = 49
CREATE_CPU_MEMORY_INFO = 69
RELEASE_ENV, RELEASE_STATUS, RELEASE_MEMORY_INFO, RELEASE_SESSION, RELEASE_VALUE = 92, 93, 94, 95, 96
RELEASE_SESSION_OPTIONS = 100
ADD_SESSION_CONFIG_ENTRY = 130

ORT_CODES = ["ORT_OK", "ORT_FAIL", "ORT_INVALID_ARGUMENT", "ORT_NO_SUCHFILE", "ORT_NO_MODEL",
             "ORT_ENGINE_ERROR", "ORT_RUNTIME_EXCEPTION", "ORT_INVALID_PROTOBUF", "ORT_MODEL_LOADED",
             "ORT_NOT_IMPLEMENTED", "ORT_INVALID_GRAPH", "ORT_EP_FAIL"]
ELEMENT_TYPES = {"<f4": 1, "<i8": 7}  # ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, _INT64
LOG_WARNING = 2
MALLOC_PERTURB = 165  # the child's MALLOC_PERTURB_ (see in_child)


class SetupError(Exception):
    """ONNX Runtime cannot be used here: exit status 2."""


class OrtError(Exception):
    """A call of ONNX Runtime failed: its OrtStatus's code and message."""


def library_path():
    path = os.environ.get("RXEQ_ORT_LIB")
    if path:
        return path
    cache = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(cache):
        cache = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "rxeq", "ort", ORT_VERSION, ORT_LIBRARY)


class OrtApiBase(ctypes.Structure):
    _fields_ = [("GetApi", ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_uint32)),
                ("GetVersionString", ctypes.CFUNCTYPE(ctypes.c_char_p))]


class Ort:
    """The functions of the OrtApi table this script calls."""

    def __init__(self, path):
        if not os.path.exists(path):
            raise SetupError("no ONNX Runtime library at %s: set RXEQ_ORT_LIB to the path of %s %s "
                             "(rxeq's ci/setup.sh installs it at $XDG_CACHE_HOME or ~/.cache/rxeq/ort/%s/%s)"
                             % (path, ORT_LIBRARY, ORT_VERSION, ORT_VERSION, ORT_LIBRARY))
        try:
            lib = ctypes.CDLL(path)
            get_base = lib.OrtGetApiBase
        except (OSError, AttributeError) as e:
            raise SetupError("%s is not a usable ONNX Runtime library: %s" % (path, e))
        get_base.restype = ctypes.POINTER(OrtApiBase)
        get_base.argtypes = []
        base = get_base().contents
        self.version = base.GetVersionString().decode()
        table = base.GetApi(API_VERSION)
        if not table:
            raise SetupError("%s is ONNX Runtime %s, which does not serve API version %d (1.17 or later needed)"
                             % (path, self.version, API_VERSION))
        self.table = ctypes.cast(table, ctypes.POINTER(ctypes.c_void_p))
        P = ctypes.c_void_p
        PP = ctypes.POINTER(ctypes.c_void_p)
        S = ctypes.c_void_p  # OrtStatus*, NULL on success
        self.get_error_code = self.fn(GET_ERROR_CODE, ctypes.c_int, P)
        self.get_error_message = self.fn(GET_ERROR_MESSAGE, ctypes.c_char_p, P)
        self.release_status = self.fn(RELEASE_STATUS, None, P)
        self.create_env = self.fn(CREATE_ENV, S, ctypes.c_int, ctypes.c_char_p, PP)
        self.create_session_options = self.fn(CREATE_SESSION_OPTIONS, S, PP)
        self.set_intra_op_num_threads = self.fn(SET_INTRA_OP_NUM_THREADS, S, P, ctypes.c_int)
        self.set_inter_op_num_threads = self.fn(SET_INTER_OP_NUM_THREADS, S, P, ctypes.c_int)
        self.set_session_execution_mode = self.fn(SET_SESSION_EXECUTION_MODE, S, P, ctypes.c_int)
        self.add_session_config_entry = self.fn(ADD_SESSION_CONFIG_ENTRY, S, P, ctypes.c_char_p, ctypes.c_char_p)
        self.set_session_log_severity_level = self.fn(SET_SESSION_LOG_SEVERITY_LEVEL, S, P, ctypes.c_int)
        self.set_session_graph_optimization_level = self.fn(SET_SESSION_GRAPH_OPTIMIZATION_LEVEL, S, P, ctypes.c_int)
        self.create_session_from_array = self.fn(CREATE_SESSION_FROM_ARRAY, S, P, ctypes.c_char_p, ctypes.c_size_t, P, PP)
        self.create_cpu_memory_info = self.fn(CREATE_CPU_MEMORY_INFO, S, ctypes.c_int, ctypes.c_int, PP)
        self.create_tensor = self.fn(CREATE_TENSOR_WITH_DATA_AS_ORT_VALUE, S, P, P, ctypes.c_size_t,
                                     ctypes.POINTER(ctypes.c_int64), ctypes.c_size_t, ctypes.c_int, PP)
        self.run = self.fn(RUN, S, P, P, ctypes.POINTER(ctypes.c_char_p), PP, ctypes.c_size_t,
                           ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t, PP)
        self.release_env = self.fn(RELEASE_ENV, None, P)
        self.release_memory_info = self.fn(RELEASE_MEMORY_INFO, None, P)
        self.release_session = self.fn(RELEASE_SESSION, None, P)
        self.release_value = self.fn(RELEASE_VALUE, None, P)
        self.release_session_options = self.fn(RELEASE_SESSION_OPTIONS, None, P)

    def fn(self, index, restype, *argtypes):
        return ctypes.CFUNCTYPE(restype, *argtypes)(self.table[index])

    def check(self, what, status):
        """Raises OrtError with the status's code and message; NULL is success."""
        if not status:
            return
        code = self.get_error_code(status)
        message = (self.get_error_message(status) or b"(no message)").decode(errors="replace").strip()
        self.release_status(status)
        name = ORT_CODES[code] if 0 <= code < len(ORT_CODES) else "OrtErrorCode(%d)" % code
        raise OrtError("%s: %s: %s" % (what, name, message))


def run_ort():
    """Runs the model once as the executor does: returns (outputs, error text,
    ONNX Runtime's version). Raises SetupError when the library cannot be used
    and OrtError when one of its calls fails."""
    ort = Ort(library_path())
    try:
        return run_session(ort)
    except OrtError as e:
        e.version = ort.version
        raise


def run_session(ort):
    new = ctypes.c_void_p
    env, opts, session, info = new(), new(), new(), new()
    values = []
    try:
        ort.check("CreateEnv", ort.create_env(LOG_WARNING, b"repro", ctypes.byref(env)))
        ort.check("CreateCpuMemoryInfo", ort.create_cpu_memory_info(0, 0, ctypes.byref(info)))  # OrtDeviceAllocator, OrtMemTypeDefault
        ort.check("CreateSessionOptions", ort.create_session_options(ctypes.byref(opts)))
        ort.check("SetIntraOpNumThreads", ort.set_intra_op_num_threads(opts, 1))
        ort.check("SetInterOpNumThreads", ort.set_inter_op_num_threads(opts, 1))
        ort.check("SetSessionExecutionMode", ort.set_session_execution_mode(opts, 0))  # ORT_SEQUENTIAL
        for key in (b"session.intra_op.allow_spinning", b"session.inter_op.allow_spinning"):
            ort.check("AddSessionConfigEntry", ort.add_session_config_entry(opts, key, b"0"))
        ort.check("SetSessionLogSeverityLevel", ort.set_session_log_severity_level(opts, LOG_WARNING))
        ort.check("SetSessionGraphOptimizationLevel", ort.set_session_graph_optimization_level(opts, OPT_LEVEL))
        print("creating the session (graph optimization level %d) ..." % OPT_LEVEL, flush=True)
        ort.check("CreateSessionFromArray", ort.create_session_from_array(env, MODEL, len(MODEL), opts, ctypes.byref(session)))

        def tensor(array):
            data = array if array.size else np.zeros(1, dtype=array.dtype)
            shape = (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)
            value = new()
            ort.check("CreateTensorWithDataAsOrtValue", ort.create_tensor(
                info, data.ctypes.data_as(ctypes.c_void_p), array.nbytes, shape, array.ndim,
                ELEMENT_TYPES[array.dtype.str], ctypes.byref(value)))
            values.append(value)
            return value

        ins = [np.frombuffer(raw, dtype=dt).reshape(shape).copy() for _, _, dt, shape, raw in INPUTS]
        outs = [np.zeros(shape, dtype=dt) for _, _, dt, shape in OUTPUTS]
        out_names = [name for _, name, _, _ in OUTPUTS]
        if ERROR_OUTPUT:
            outs.append(np.zeros(3, dtype="<i8"))
            out_names.append(ERROR_OUTPUT)
        in_values = (ctypes.c_void_p * max(len(ins), 1))(*[tensor(a) for a in ins])
        out_values = (ctypes.c_void_p * max(len(outs), 1))(*[tensor(a) for a in outs])
        in_names = (ctypes.c_char_p * max(len(ins), 1))(*[name.encode() for _, name, _, _, _ in INPUTS])
        c_out_names = (ctypes.c_char_p * max(len(outs), 1))(*[name.encode() for name in out_names])
        ort.check("Run", ort.run(session, None, in_names, in_values, len(ins), c_out_names, len(outs), out_values))
    finally:
        for v in values:
            ort.release_value(v)
        if session:
            ort.release_session(session)
        if opts:
            ort.release_session_options(opts)
        if info:
            ort.release_memory_info(info)
        if env:
            ort.release_env(env)
    if ERROR_OUTPUT:
        site, lhs, rhs = (int(v) for v in outs.pop())
        if site != 0:
            return None, checked_error(site, lhs, rhs), ort.version
    return outs, None, ort.version


def checked_error(site, lhs, rhs):
    """rxeq's text of the failure of checked operation number site."""
    if not 1 <= site <= len(SITES) or SITES[site - 1] is None:
        return "malformed %s output: site %d of %d" % (ERROR_OUTPUT, site, len(SITES))
    func, builtin, text, pos = SITES[site - 1]
    if rhs == 0:
        return "%s: %s: division by zero (%s=%d) at %s" % (func, builtin, text, lhs, pos)
    return "%s: %s: integer overflow (%s=%d, divisor -1) at %s" % (func, builtin, text, lhs, pos)


def child(fd):
    """The child process: runs ONNX Runtime and writes what came out to fd."""
    try:
        out, err, version = run_ort()
        result = ("ok", out, err, version)
    except SetupError as e:
        result = ("setup", None, str(e), None)
    except OrtError as e:
        result = ("ort", None, "onnxruntime: " + str(e), getattr(e, "version", None))
    except Exception as e:  # a bug of this script, not a finding
        result = ("setup", None, "%s: %s" % (type(e).__name__, e), None)
    with os.fdopen(fd, "wb") as f:
        pickle.dump(result, f)
    return 0


def in_child():
    """run_ort in a new process, so that a crash of ONNX Runtime is reported:
    (status, outputs, error text, version, signal name or None). The process
    runs with glibc's MALLOC_PERTURB_ (unless it is set already): memory that
    malloc returns is filled with a byte pattern, so that ONNX Runtime's reads
    of uninitialised memory (the seed-72 session crash) come out the same on
    every run instead of depending on what the heap held before."""
    r, w = os.pipe()
    env = dict(os.environ)
    env.setdefault("MALLOC_PERTURB_", str(MALLOC_PERTURB))
    # ONNX Runtime's telemetry off, as in rxeq (its own opt-out; otherwise
    # it leaves /tmp/mat-debug-PID.log behind and a device id in ~/.cache).
    env.setdefault("ORT_DISABLE_TELEMETRY", "1")
    proc = subprocess.Popen([sys.executable, "-B", os.path.abspath(__file__), "--ort-child", str(w)], pass_fds=(w,), env=env)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    code = proc.wait()
    if data:
        return pickle.loads(data) + (None,)
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = "signal %d" % -code
        return ("crash", None, "the ONNX Runtime process died of %s" % name, None, name)
    return ("crash", None, "the ONNX Runtime process exited with status %d and no result" % code, None, None)


# ---- the comparison ----------------------------------------------------------

def bits(v):
    """v's bit pattern: 8 hex digits for a float32, 16 for a float64."""
    v = np.asarray(v)
    if v.dtype == np.float32:
        return "0x%08x" % int(v.view(np.uint32))
    if v.dtype == np.float64:
        return "0x%016x" % int(v.view(np.uint64))
    return str(int(v))


F32_MAX = np.finfo(np.float32).max


def spacing32(w):
    """The gap between the float32 values around |w| (the larger one where they
    differ); the largest finite gap beyond the float32 range."""
    with np.errstate(over="ignore"):
        a = np.abs(w).astype(np.float32)
    up = np.nextafter(a, np.float32(np.inf))
    down = np.nextafter(a, np.float32(0))
    gap = np.where(a == 0, up.astype(np.float64),
                   np.maximum((up - a).astype(np.float64), (a - down).astype(np.float64)))
    big = np.isinf(a) | (a >= F32_MAX)
    return np.where(big, float(F32_MAX - np.nextafter(F32_MAX, np.float32(0))), gap)


def ordered(f):
    """float32 bits as integers in the order of the values (+0 and -0 both 0)."""
    u = np.asarray(f, dtype=np.float32).view(np.uint32).astype(np.int64)
    return np.where(u & 0x80000000, -(u & 0x7fffffff), u)


def compare(name, w, g):
    """Prints the comparison of output name; returns True when it mismatches."""
    w, g = np.asarray(w), np.asarray(g)
    if w.shape != g.shape:
        print("%s: shape %s, want %s" % (name, g.shape, w.shape))
        return True
    if w.dtype.kind == "f":
        rtol, atol, ulp, absrel, signed_zeros = TOLERANCES[name]
        w = w.astype(np.float64)
        # A float64 value beyond float32's range that rounds to an infinity
        # is that infinity, as in rxeq's comparison.
        with np.errstate(over="ignore"):
            w32 = w.astype(np.float32)
        w = np.where(np.isfinite(w) & np.isinf(w32), w32.astype(np.float64), w)
        w32 = w.astype(np.float32)
        g64 = g.astype(np.float64)
        nan = np.isnan(w) | np.isnan(g64)
        inf = ~nan & (np.isinf(w) | np.isinf(g64))
        with np.errstate(invalid="ignore", over="ignore"):
            allowed = atol + rtol * np.abs(w) if absrel else (ulp + 1) * spacing32(w)
            close = np.abs(g64 - w) <= allowed
        if ulp is not None:
            close &= np.abs(ordered(w32) - ordered(g)) <= ulp
        ok = np.where(nan, np.isnan(w) == np.isnan(g64), np.where(inf, w == g64, close))
        if signed_zeros:
            ok &= ~((w == 0) & (g64 == 0) & (np.signbit(w) != np.signbit(g64)))
    else:
        ok = w == g
    idx = np.argwhere(~ok)
    if len(idx) == 0:
        print("%s: %d elements agree" % (name, w.size))
        return False
    print("%s: %d / %d mismatched; first:" % (name, len(idx), w.size))
    for i in idx[:5]:
        i = tuple(int(k) for k in i)
        got = str(g[i]) if g.dtype == np.float32 else repr(g[i].item())  # float32's shortest digits
        extra = ""
        if w.dtype.kind == "f" and ulp is not None and np.isfinite(w[i]) and np.isfinite(g64[i]):
            extra = ", %d ULP from want in float32 (allowed %d)" % (abs(int(ordered(w32[i])) - int(ordered(g[i]))), ulp)
        print("   ", list(i), "want", repr(w[i].item()), "(%s)" % bits(w[i]), "got", got, "(%s)" % bits(g[i]) + extra)
    return True


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--ort-child":
        return child(int(sys.argv[2]))
    np.seterr(all="ignore")  # IEEE results without warnings, as rxeq's executors
    args = []
    for _, _, dt, shape, raw in INPUTS:
        a = np.frombuffer(raw, dtype=dt).reshape(shape)
        if dt == "<i8" and shape == ():
            args.append(int(a[()]))  # an int64 scalar is a Python int in the reference
        else:
            args.append(a.astype(np.float64) if dt == "<f4" else a.copy())
    want, werr = run_reference(args)
    print("executor:", EXECUTOR, "| numpy", np.__version__, "| python", sys.version.split()[0])
    for attempt in range(1, ATTEMPTS + 1):
        status, got, gerr, version, sig = in_child()
        if status == "setup":
            print("cannot run ONNX Runtime:", gerr, file=sys.stderr)
            return 2
        if version:
            print("ONNX Runtime", version, "(OPT_LEVEL %d)" % OPT_LEVEL)
        if status == "crash":
            print(gerr)
            print("REPRODUCED: ONNX Runtime crashed%s" % (" (%s)" % sig if sig else ""))
            return 1
        if gerr or werr:
            print("expected error:", werr)
            print("got error:     ", gerr)
            if gerr != werr:
                print("REPRODUCED")
                return 1
        else:
            bad = False
            for (name, _, _, _), w, g in zip(OUTPUTS, want, got):
                bad = compare(name, w, g) or bad
            if bad:
                print("REPRODUCED")
                return 1
        if attempt < ATTEMPTS:
            print("attempt %d of %d agrees; again in a new process" % (attempt, ATTEMPTS))
    print("not reproduced: the outputs agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
`
