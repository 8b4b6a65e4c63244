"""Export a two-layer MLP scorer with torch.onnx.export and save what
PyTorch computes for a batch: DIR/mlp.onnx, DIR/x.npy and DIR/{logits,
probs,classes}.npy. Used by onnx/import_python_test.go and docs/import.md.

usage: python3 torch_mlp.py DIR
"""
import sys

import numpy as np
import torch


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(6, 5)
        self.fc2 = torch.nn.Linear(5, 3)

    def forward(self, x):
        logits = self.fc2(torch.relu(self.fc1(x)))
        return logits, torch.softmax(logits, dim=1), torch.argmax(logits, dim=1)


def main(d):
    torch.manual_seed(20261206)
    model = MLP().eval()
    x = torch.randn(7, 6)
    batch = {0: "batch"}
    torch.onnx.export(model, (x,), d + "/mlp.onnx", input_names=["x"], output_names=["logits", "probs", "classes"],
                      dynamic_axes={"x": batch, "logits": batch, "probs": batch, "classes": batch}, opset_version=17)
    with torch.no_grad():
        logits, probs, classes = model(x)
    np.save(d + "/x.npy", x.numpy())
    np.save(d + "/logits.npy", logits.numpy())
    np.save(d + "/probs.npy", probs.numpy())
    np.save(d + "/classes.npy", classes.numpy().astype(np.int64))


if __name__ == "__main__":
    main(sys.argv[1])
