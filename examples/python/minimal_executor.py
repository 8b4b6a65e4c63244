#!/usr/bin/env python3
"""A complete rxeq.executor/v1 executor in the standard library alone: it
serves echo(x) -> y (harness/testdata/echo.rx) by sending x's bytes back.
docs/executor-protocol.md walks through it.

    rxeq run --executor mini='python3 examples/python/minimal_executor.py' harness/testdata/echo.rx
"""
import json, os, struct, sys, zlib

proto = os.fdopen(os.dup(1), "wb")    # the protocol keeps fd 1 ...
os.dup2(2, 1)                         # ... and print() goes to stderr
rin = sys.stdin.buffer


def read_exact(n):
    b = rin.read(n)
    if len(b) != n:
        sys.exit(0)                   # rxeq closed the pipe
    return b


def send(header, blobs=()):
    h = json.dumps(header).encode()
    proto.write(struct.pack("<I", len(h)) + h)
    for b in blobs:
        proto.write(b)
    proto.flush()


send({"type": "hello", "protocol": "rxeq.executor/v1", "name": "minimal", "functions": ["echo"]})
while True:
    head = rin.read(4)
    if not head:
        break
    msg = json.loads(read_exact(struct.unpack("<I", head)[0]))
    blobs = {t["name"]: read_exact(t["nbytes"]) for t in msg.get("tensors", [])}
    if msg["type"] == "prepare":
        send({"type": "ready", "id": msg["id"]})
    elif msg["type"] == "run":
        x = next(t for t in msg["tensors"] if t["name"] == "x")
        crcs = {name: zlib.crc32(b) for name, b in blobs.items()}
        send({"type": "result", "id": msg["id"], "input_crc32": crcs,
              "tensors": [{"name": "y", "dtype": x["dtype"], "shape": x["shape"], "nbytes": x["nbytes"]}]},
             [blobs["x"]])
    elif msg["type"] == "close":
        break
