"""Write linear.onnx (a scorer with two initializers, for rxeq import's
tests) and erf.onnx (one op rxeq has no form of).

usage: python3 make_linear.py   (in cmd/rxeq/testdata; needs python3-onnx)
"""
import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper, numpy_helper

rng = np.random.default_rng(3)
W = rng.normal(size=(4, 3)).astype(np.float32)
b = rng.normal(size=(3,)).astype(np.float32)
g = helper.make_graph(
    [helper.make_node("Gemm", ["x", "W", "b"], ["logits"], name="linear"),
     helper.make_node("Softmax", ["logits"], ["probs"], axis=1),
     helper.make_node("ArgMax", ["probs"], ["classes"], axis=1, keepdims=0)],
    "linear",
    [helper.make_tensor_value_info("x", T.FLOAT, ["batch", 4])],
    [helper.make_tensor_value_info("logits", T.FLOAT, ["batch", 3]),
     helper.make_tensor_value_info("probs", T.FLOAT, ["batch", 3]),
     helper.make_tensor_value_info("classes", T.INT64, ["batch"])],
    initializer=[numpy_helper.from_array(W, "W"), numpy_helper.from_array(b, "b")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="make_linear.py")
m.ir_version = 8
onnx.checker.check_model(m, full_check=True)
onnx.save(m, "linear.onnx")

g = helper.make_graph([helper.make_node("Erf", ["x"], ["y"], name="erf_0")], "erf",
                      [helper.make_tensor_value_info("x", T.FLOAT, [2])], [helper.make_tensor_value_info("y", T.FLOAT, [2])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="make_linear.py")
m.ir_version = 8
onnx.save(m, "erf.onnx")
