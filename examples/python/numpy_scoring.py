"""The reference scenario (scenarios/reference.rx) and the runtime-error
scenario (scenarios/error.rx) in plain NumPy, as a model author writes
them, served to rxeq by python/rxeq_executor.py:

    rxeq run --executor author-numpy='/usr/bin/python3 python/rxeq_executor.py examples/python/numpy_scoring.py' \\
        scenarios/reference.rx scenarios/error.rx

Every array stays float32 (NumPy keeps float32 when a float32 array meets
a Python float); argmax returns int64 on 64-bit platforms.
"""

import numpy as np

from rxeq_executor import checked_rem


def _softmax(logits):
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _head(logits):
    probs = _softmax(logits)
    return logits, probs, probs.argmax(axis=1).astype(np.int64)


def score_linear(x, w, b):
    logits = x @ w + b
    for round_idx in range(4):
        if checked_rem(round_idx, 2) == 0:
            logits = logits * 0.5
        else:
            logits = np.tanh(logits)
    return _head(logits)


def score_mlp(x, w1, b1, w2, b2):
    hidden = np.tanh(x @ w1.T + b1)
    for round_idx in range(4):
        if checked_rem(round_idx, 2) == 0:
            hidden = hidden * 0.75
        else:
            hidden = np.tanh(hidden)
    return _head(hidden @ w2 + b2)


def score_pipeline(x, mean, scale, w1, b1, w2, b2, phase):
    xn = (x - mean) / scale
    hidden = xn @ w1.T + b1
    for round_idx in range(4):
        if checked_rem(round_idx + phase, 2) == 0:
            hidden = np.maximum(hidden, 0)
        else:
            hidden = np.tanh(hidden)
    return _head(hidden @ w2 + b2)


def score_divisor(x, w, divisor):
    # divisor is 0 in scenarios/error.rx: checked_rem raises the error every
    # rxeq executor raises, "score_divisor: CheckedRem: division by zero
    # (round_idx=0) at error.rx:…".
    logits = x @ w
    for round_idx in range(4):
        if checked_rem(round_idx, divisor) == 0:
            logits = logits * 0.5
    return _head(logits)
