"""Only score_linear of scenarios/reference.rx: the other functions are
not served, and rxeq must skip their cases with a reason."""

import numpy as np

from rxeq_executor import checked_rem


def score_linear(x, w, b):
    logits = x @ w + b
    for round_idx in range(4):
        if checked_rem(round_idx, 2) == 0:
            logits = logits * 0.5
        else:
            logits = np.tanh(logits)
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs = e / e.sum(axis=1, keepdims=True)
    return {"logits": logits, "probs": probs, "classes": probs.argmax(axis=1)}
