"""A small NumPy evaluator of the ONNX models rxeq exports, for the tests:
an independent reading of the model (ONNX's operator semantics written
out in NumPy), used to check that the export means what the program means.
It knows only the ops the exporter writes.

usage: evaluate.py MODEL.onnx DIR [MODEL.onnx DIR ...]
       (reads DIR/in_NAME.npy, writes DIR/out_NAME.npy)
"""
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

np.seterr(all="ignore")


def attrs(node):
    out = {}
    for a in node.attribute:
        if a.type == onnx.AttributeProto.INT:
            out[a.name] = a.i
        elif a.type == onnx.AttributeProto.INTS:
            out[a.name] = list(a.ints)
        elif a.type == onnx.AttributeProto.TENSOR:
            out[a.name] = numpy_helper.to_array(a.t)
        elif a.type == onnx.AttributeProto.GRAPH:
            out[a.name] = a.g
    return out


def idiv(a, b):
    q = np.floor_divide(a, b)
    fix = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
    return np.where(fix, q + 1, q).astype(a.dtype)


def softmax(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - m)
    return (e / np.sum(e, axis=axis, keepdims=True)).astype(np.float32)


def logsoftmax(x, axis):
    d = x - np.max(x, axis=axis, keepdims=True)
    return (d - np.log(np.sum(np.exp(d), axis=axis, keepdims=True))).astype(np.float32)


def run_graph(g, env):
    env = dict(env)
    for n in g.node:
        a = attrs(n)
        x = [env[i] if i else None for i in n.input]
        op = n.op_type
        if op == "Constant":
            r = [a["value"]]
        elif op == "Identity":
            r = [x[0]]
        elif op in ("Add", "Sub", "Mul", "Div", "Max", "Min", "MatMul", "Equal", "Less", "LessOrEqual",
                    "Greater", "GreaterOrEqual", "And", "Or"):
            p, q = x
            if op == "Div" and p.dtype == np.int64:
                v = idiv(p, q)
            else:
                f = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide,
                     "Max": np.maximum, "Min": np.minimum, "MatMul": np.matmul, "Equal": np.equal,
                     "Less": np.less, "LessOrEqual": np.less_equal, "Greater": np.greater,
                     "GreaterOrEqual": np.greater_equal, "And": np.logical_and, "Or": np.logical_or}[op]
                v = f(p, q)
            r = [np.asarray(v).astype(p.dtype if op in ("Add", "Sub", "Mul", "Div", "Max", "Min", "MatMul") else bool)]
        elif op in ("Neg", "Tanh", "Exp", "Log", "Sigmoid", "Relu", "Abs", "Sqrt", "Not"):
            p = x[0]
            f = {"Neg": np.negative, "Tanh": np.tanh, "Exp": np.exp, "Log": np.log,
                 "Sigmoid": lambda v: 1 / (1 + np.exp(-v)), "Relu": lambda v: np.maximum(v, 0),
                 "Abs": np.abs, "Sqrt": np.sqrt, "Not": np.logical_not}[op]
            r = [np.asarray(f(p)).astype(p.dtype)]
        elif op == "Transpose":
            r = [np.transpose(x[0], a["perm"])]
        elif op == "Softmax":
            r = [softmax(x[0], a["axis"])]
        elif op == "LogSoftmax":
            r = [logsoftmax(x[0], a["axis"])]
        elif op in ("ReduceSum", "ReduceMean", "ReduceMax"):
            axes = tuple(int(v) for v in (x[1] if op == "ReduceSum" else a["axes"]))
            f = {"ReduceSum": np.sum, "ReduceMean": np.mean, "ReduceMax": np.max}[op]
            r = [np.asarray(f(x[0], axis=axes, keepdims=bool(a["keepdims"]))).astype(np.float32)]
        elif op == "ArgMax":
            v = np.argmax(x[0], axis=a["axis"])
            if a["keepdims"]:
                v = np.expand_dims(v, a["axis"])
            r = [np.asarray(v).astype(np.int64)]
        elif op == "Where":
            r = [np.where(x[0], x[1], x[2]).astype(x[1].dtype)]
        elif op == "Gather":
            r = [np.take(x[0], x[1], axis=a.get("axis", 0))]
        elif op == "Unsqueeze":
            r = [np.expand_dims(x[0], tuple(int(v) for v in x[1]))]
        elif op == "Concat":
            r = [np.concatenate(x, axis=a["axis"])]
        elif op == "Shape":
            r = [np.array(x[0].shape[a.get("start", 0):a.get("end", x[0].ndim)], dtype=np.int64)]
        elif op == "ConstantOfShape":
            r = [np.full(tuple(int(v) for v in x[0]), a["value"][0], dtype=a["value"].dtype)]
        elif op == "If":
            g2 = a["then_branch"] if bool(x[0]) else a["else_branch"]
            r = run_graph(g2, env)
        elif op == "Loop":
            body = a["body"]
            trip = None if x[0] is None else int(x[0])
            cond = True if len(x) < 2 or x[1] is None else bool(x[1])
            state = x[2:]
            i = 0
            while (trip is None or i < trip) and cond:
                benv = dict(env)
                names = [v.name for v in body.input]
                benv[names[0]] = np.array(i, dtype=np.int64)
                benv[names[1]] = np.array(cond)
                for k, v in zip(names[2:], state):
                    benv[k] = v
                outs = run_graph(body, benv)
                cond, state = bool(outs[0]), outs[1:]
                i += 1
            r = state
        else:
            raise SystemExit("evaluate.py: op %s is not known" % op)
        for name, v in zip(n.output, r):
            env[name] = v
    return [env[o.name] for o in g.output]


def main():
    args = sys.argv[1:]
    for model, d in zip(args[::2], args[1::2]):
        m = onnx.load(model)
        env = {}
        for v in m.graph.input:
            env[v.name] = np.load(os.path.join(d, "in_" + v.name + ".npy"))
        outs = run_graph(m.graph, env)
        for v, val in zip(m.graph.output, outs):
            np.save(os.path.join(d, "out_" + v.name + ".npy"), np.array(val, order="C"))


main()
