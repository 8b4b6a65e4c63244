"""The reference scenario (scenarios/reference.rx) and the runtime-error
scenario (scenarios/error.rx) in PyTorch eager mode, as a model author
writes them, served to rxeq by python/rxeq_executor.py:

    rxeq run --executor author-torch='/usr/bin/python3 python/rxeq_executor.py examples/python/torch_scoring.py' \\
        scenarios/reference.rx scenarios/error.rx

The inputs arrive as NumPy arrays and become tensors without a copy
(torch.from_numpy); the control flow is plain Python; the outputs go back
as NumPy arrays (the adapter would also take the tensors themselves).
"""

import torch
import torch.nn.functional as F

from rxeq_executor import checked_rem

# One intra-op thread: rxeq runs several executors at once, and one thread
# gives the same summation order on every machine.
torch.set_num_threads(1)


def _head(logits):
    probs = torch.softmax(logits, dim=1)
    classes = torch.argmax(probs, dim=1)
    return logits.numpy(), probs.numpy(), classes.numpy()


@torch.no_grad()
def score_linear(x, w, b):
    x, w, b = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b)
    logits = F.linear(x, w.T, b)  # w is [F][C]: linear wants [out][in]
    for round_idx in range(4):
        if checked_rem(round_idx, 2) == 0:
            logits = logits * 0.5
        else:
            logits = torch.tanh(logits)
    return _head(logits)


@torch.no_grad()
def score_mlp(x, w1, b1, w2, b2):
    x, w1, b1, w2, b2 = (torch.from_numpy(a) for a in (x, w1, b1, w2, b2))
    hidden = torch.tanh(F.linear(x, w1, b1))  # w1 is [H][F]: already [out][in]
    for round_idx in range(4):
        if checked_rem(round_idx, 2) == 0:
            hidden = hidden * 0.75
        else:
            hidden = torch.tanh(hidden)
    return _head(F.linear(hidden, w2.T, b2))


@torch.no_grad()
def score_pipeline(x, mean, scale, w1, b1, w2, b2, phase):
    x, mean, scale, w1, b1, w2, b2 = (torch.from_numpy(a) for a in (x, mean, scale, w1, b1, w2, b2))
    hidden = F.linear((x - mean) / scale, w1, b1)
    for round_idx in range(4):
        if checked_rem(round_idx + phase, 2) == 0:
            hidden = torch.relu(hidden)
        else:
            hidden = torch.tanh(hidden)
    return _head(F.linear(hidden, w2.T, b2))


@torch.no_grad()
def score_divisor(x, w, divisor):
    logits = torch.from_numpy(x) @ torch.from_numpy(w)
    for round_idx in range(4):
        if checked_rem(round_idx, divisor) == 0:
            logits = logits * 0.5
    return _head(logits)
