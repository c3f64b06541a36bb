"""Why accumulators are fp32: sums 64 micro-batch gradients of the
Fashion-MNIST MLP's first layer (4 samples each, PyTorch float64 gradients
rounded to the accumulator's type) in an fp32 accumulator and in a bf16
one, against the exact float64 sum, and prints both relative errors
(‖acc − exact‖ / ‖exact‖). Exits 1 unless bf16 is at least 100× worse."""
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from torch_parity import read_idx  # noqa: E402

d = "/usr/share/datasets/fashion-mnist"
x = torch.tensor(read_idx(f"{d}/train-images-idx3-ubyte.gz").reshape(-1, 784)[:256].astype(np.float64) / 255)
y = torch.tensor(read_idx(f"{d}/train-labels-idx1-ubyte.gz")[:256].astype(np.int64))
torch.manual_seed(0)
l1, l2 = torch.nn.Linear(784, 256).double(), torch.nn.Linear(256, 10).double()
exact = torch.zeros_like(l1.weight)
acc32 = torch.zeros_like(l1.weight, dtype=torch.float32)
acc16 = torch.zeros_like(l1.weight, dtype=torch.bfloat16)
for k in range(0, 256, 4):
    l1.zero_grad()
    loss = F.cross_entropy(l2(F.relu(l1(x[k:k + 4]))), y[k:k + 4], reduction="sum")
    loss.backward()
    g = l1.weight.grad
    exact += g
    acc32 += g.float()
    acc16 = (acc16.float() + g.float()).bfloat16()  # a bf16 accumulator
e32 = float((acc32.double() - exact).norm() / exact.norm())
e16 = float((acc16.double() - exact).norm() / exact.norm())
print(f"64 micro-batches summed: fp32 accumulator relative error {e32:.2e}, bf16 accumulator {e16:.2e}")
print("FP32 ACCUMULATORS JUSTIFIED" if e16 > 100 * e32 else "NO DIFFERENCE")
sys.exit(0 if e16 > 100 * e32 else 1)
