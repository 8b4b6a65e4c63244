"""score_linear with a classic bug: it centres x in place, writing into
the caller's array. rxeq must report the modified input."""

import numpy as np


def score_linear(x, w, b):
    x -= x.mean(axis=1, keepdims=True)  # the bug: in place
    logits = x @ w + b
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs = e / e.sum(axis=1, keepdims=True)
    return logits, probs, probs.argmax(axis=1)
