"""Float64 torch reference of Inputs/log_model.mlir trained on six samples
in windows of four (SGD, lr 0.1, mean over each window's samples): the
parameters after both windows, and the second window's gradient, against
gacc-run's (padding-inputs.test)."""
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import safetensors_io as s  # noqa: E402

out = sys.argv[1]
data = s.load(out + "/data.safetensors")
x = torch.tensor(data["input0"], dtype=torch.float64)
y = torch.tensor(data["input1"], dtype=torch.int64)
w = torch.tensor(s.load(out + "/init.safetensors")["w"], dtype=torch.float64)
grad = None
for window in (slice(0, 4), slice(4, 6)):
    w = w.clone().requires_grad_(True)
    loss = F.cross_entropy(torch.log(x[window]) @ w.T, y[window])
    loss.backward()
    grad = w.grad.detach()
    w = (w - 0.1 * grad).detach()


def report(name, got, want):
    got = torch.tensor(got, dtype=torch.float64)
    diff = ((got - want).abs().max() / want.abs().max()).item()
    print(name, "max relative difference", "OK" if diff < 1e-5 else diff)


report("params", s.load(out + "/two.safetensors")["w"], w)
report("ragged params", s.load(out + "/ragged.safetensors")["w"], w)
report("gradients", s.load(out + "/grads.safetensors")["w"], grad)
