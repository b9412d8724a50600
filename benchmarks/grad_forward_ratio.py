"""Gradient time / forward time for an MLP 784-512-512-10 (tanh, softmax cross-entropy).

Run by hand: ``.venv/bin/python benchmarks/grad_forward_ratio.py [batch]``. The gradient is
synthesized by dlvm-differentiate (it recomputes the forward pass); goal: ratio <= 3.
"""

import sys
import time

import numpy as np

import dlvm_mlir

B = int(sys.argv[1]) if len(sys.argv) > 1 else 128
PROGRAM = f"""
func.func @loss(%x: tensor<{B}x784xf32>, %w1: tensor<784x512xf32>, %b1: tensor<1x512xf32>, %w2: tensor<512x512xf32>, %b2: tensor<1x512xf32>, %w3: tensor<512x10xf32>, %b3: tensor<1x10xf32>, %y: tensor<{B}x10xf32>) -> tensor<f32> {{
  %0 = dlvm.dot %x, %w1 : tensor<{B}x784xf32>, tensor<784x512xf32>
  %1 = dlvm.add %0, %b1 : tensor<{B}x512xf32>, tensor<1x512xf32>
  %2 = dlvm.tanh %1 : tensor<{B}x512xf32>
  %3 = dlvm.dot %2, %w2 : tensor<{B}x512xf32>, tensor<512x512xf32>
  %4 = dlvm.add %3, %b2 : tensor<{B}x512xf32>, tensor<1x512xf32>
  %5 = dlvm.tanh %4 : tensor<{B}x512xf32>
  %6 = dlvm.dot %5, %w3 : tensor<{B}x512xf32>, tensor<512x10xf32>
  %7 = dlvm.add %6, %b3 : tensor<{B}x10xf32>, tensor<1x10xf32>
  %8 = dlvm.log_softmax %7 axis 1 : tensor<{B}x10xf32>
  %9 = dlvm.mul %y, %8 : tensor<{B}x10xf32>, tensor<{B}x10xf32>
  %10 = dlvm.reduce add %9 dims [0, 1] : tensor<{B}x10xf32>
  %c = dlvm.constant dense<-0.0078125> : tensor<f32>
  %11 = dlvm.mul %10, %c : tensor<f32>, tensor<f32>
  return %11 : tensor<f32>
}}
func.func private @loss_grad(tensor<{B}x784xf32>, tensor<784x512xf32>, tensor<1x512xf32>, tensor<512x512xf32>, tensor<1x512xf32>, tensor<512x10xf32>, tensor<1x10xf32>, tensor<{B}x10xf32>)
  -> (tensor<784x512xf32>, tensor<1x512xf32>, tensor<512x512xf32>, tensor<1x512xf32>, tensor<512x10xf32>, tensor<1x10xf32>)
  attributes {{dlvm.gradient = #dlvm.gradient<of @loss wrt [1, 2, 3, 4, 5, 6]>}}
"""
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
