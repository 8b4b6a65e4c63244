"""Unit tests of rxeq_executor.py: Go's integer semantics and the shared
error texts of checked_rem/checked_div, and the framing, through in-memory
streams. Run: /usr/bin/python3 -m unittest discover -s python
(the harness specs run it too)."""

import io
import struct
import unittest
import zlib

import numpy as np

import rxeq_executor as rx

MIN = -(1 << 63)


class CheckedArithmetic(unittest.TestCase):
    def test_go_semantics(self):
        self.assertEqual(rx.checked_rem(-7, 2), -1)  # the sign of the dividend, as Go
        self.assertEqual(rx.checked_rem(7, -2), 1)
        self.assertEqual(rx.checked_div(-7, 2), -3)  # truncated toward zero
        self.assertEqual(rx.checked_div(7, -2), -3)
        self.assertEqual(rx.checked_rem(MIN, -1), 0)

    def test_errors_carry_the_site_of_the_call(self):
        sites = [{"builtin": "CheckedRem", "lhs": "round_idx", "pos": "error.rx:21:6"},
                 {"builtin": "CheckedDiv", "lhs": "n", "pos": "error.rx:30:9"}]
        token = rx._current.set(("score_divisor", sites))
        try:
            with self.assertRaises(rx.RxeqError) as e:
                rx.checked_rem(0, 0)
            self.assertEqual(e.exception.kind, "division by zero")
            self.assertEqual(e.exception.message, "score_divisor: CheckedRem: division by zero (round_idx=0) at error.rx:21:6")
            with self.assertRaises(rx.RxeqError) as e:
                rx.checked_div(MIN, -1)
            self.assertEqual(e.exception.kind, "integer overflow")
            self.assertEqual(e.exception.message,
                             "score_divisor: CheckedDiv: integer overflow (n=-9223372036854775808, divisor -1) at error.rx:30:9")
        finally:
            rx._current.reset(token)


class Serving(unittest.TestCase):
    def frame(self, header, *blobs):
        h = __import__("json").dumps(header).encode()
        return struct.pack("<I", len(h)) + h + b"".join(blobs)

    def test_a_run_round_trip(self):
        class Module:
            __name__ = "m"
            __file__ = "m.py"

            @staticmethod
            def twice(x, n):
                return {"y": x * 2, "k": np.array(n, dtype=np.int64)}

        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        sig = {"name": "twice", "params": [], "results": [{"name": "y"}, {"name": "k"}], "checked": []}
        rin = io.BytesIO(
            self.frame({"type": "prepare", "id": 1, "program": 0, "functions": [sig, dict(sig, name="absent")]})
            + self.frame({"type": "run", "id": 2, "program": 0, "function": "twice", "tensors": [
                {"name": "x", "dtype": "float32", "shape": [2, 3], "nbytes": 24},
                {"name": "n", "dtype": "int64", "shape": [], "nbytes": 8}]}, x.tobytes(), struct.pack("<q", 5))
            + self.frame({"type": "close"}))
        out = io.BytesIO()
        self.assertEqual(rx.serve(Module, "mod", rin, out, label="m.py"), 0)
        out.seek(0)
        hello, _ = rx.read_message(out)
        self.assertEqual(hello["protocol"], "rxeq.executor/v1")
        ready, _ = rx.read_message(out)
        self.assertEqual(ready, {"id": 1, "type": "ready", "unserved": {"absent": "m.py defines no function absent"}})
        result, tensors = rx.read_message(out)
        self.assertEqual(result["type"], "result")
        self.assertEqual(result["id"], 2)
        self.assertEqual(result["input_crc32"], {"x": zlib.crc32(x.tobytes()), "n": zlib.crc32(struct.pack("<q", 5))})
        got = {name: arr for name, arr, _ in tensors}
        np.testing.assert_array_equal(got["y"], x * 2)
        self.assertEqual(got["y"].dtype, np.float32)
        self.assertEqual(got["k"].shape, ())
        self.assertEqual(int(got["k"]), 5)


if __name__ == "__main__":
    unittest.main()
