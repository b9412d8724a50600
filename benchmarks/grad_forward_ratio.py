"""Gradient time / forward time for an MLP 784-512-512-10 (tanh, softmax cross-entropy).

Run by hand: ``.venv/bin/python benchmarks/grad_forward_ratio.py [batch]``. The gradient is
synthesized by dlvm-differentiate (it recomputes the forward pass); goal: ratio <= 3.
"""

import sys
import time
from pathlib import Path

import numpy as np

import dlvm_mlir

sys.path.insert(0, str(Path(__file__).resolve().parent))
from optimize_mlp_grad import program  # noqa: E402

B = int(sys.argv[1]) if len(sys.argv) > 1 else 128
PROGRAM = program(B)  # the same MLP and gradient declaration as optimize_mlp_grad.py
exe = dlvm_mlir.compile(PROGRAM)
r = np.random.default_rng(0)
args = [r.standard_normal(s).astype(np.float32)*0.05 for s in [(B,784),(784,512),(1,512),(512,512),(1,512),(512,10),(1,10)]]
y = np.eye(10, dtype=np.float32)[r.integers(0,10,B)]
args.append(y)
def med(f, n=30):
    ts=[]
    for _ in range(n):
        t0=time.perf_counter(); f(); ts.append(time.perf_counter()-t0)
    return np.median(ts)
for _ in range(3): exe["loss"](*args); exe["loss_grad"](*args)
tf = med(lambda: exe["loss"](*args)); tg = med(lambda: exe["loss_grad"](*args))
print(f"batch {B}: forward {tf*1e3:.2f} ms, gradient {tg*1e3:.2f} ms, ratio {tg/tf:.2f}")
