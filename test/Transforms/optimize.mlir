// dlvm-optimize on gradient-like programs. examples/optimize_stats.py measures these functions
// (op counts and dot multiply-adds before and after) and checks them in the reference interpreter.
// RUN: dlvm-opt %s --dlvm-optimize | FileCheck %s
// RUN: dlvm-opt %s --dlvm-optimize=linalg=false | FileCheck %s --check-prefix=NOLINALG
// RUN: dlvm-opt %s --pass-pipeline='builtin.module(dlvm-optimize{fast-math fusion-policy=always})' --dump-pass-pipeline 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PIPELINE
// PIPELINE: builtin.module(canonicalize,cse,dlvm-algebra-simplify{fast-math=true},dlvm-linalg-fusion{policy=always},dlvm-matmul-reorder,dlvm-algebra-simplify{fast-math=true},canonicalize,cse,dlvm-literal-broadcast-promotion,canonicalize,cse)

// The MLP of examples/mlp.mlir with a backward pass written the way a naive adjoint generator
// emits it (the DLVM paper's Swift AD): a seed of ones, zero-initialized adjoint accumulators,
// adjoints multiplied by ones, negations for subtractions, a transpose of a transposed product,
// x^2 for tanh', explicit broadcasts of biases and of the seed.
// CHECK-LABEL: func.func @mlp_grad
// CHECK-SAME: (%[[X:[^:]*]]: tensor<32x784xf32>, %[[W1:[^:]*]]: tensor<784x128xf32>, %[[B1:[^:]*]]: tensor<1x128xf32>, %[[W2:[^:]*]]: tensor<128x10xf32>, %[[B2:[^:]*]]: tensor<1x10xf32>, %[[Y:[^:]*]]: tensor<32x10xf32>)
// CHECK-DAG: %[[ONE:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK-DAG: %[[SCALE:.*]] = dlvm.constant dense<-3.125000e-02> : tensor<f32>
// CHECK: %[[H0:.*]] = dlvm.dot %[[X]], %[[W1]]
// CHECK: %[[H1:.*]] = dlvm.add %[[H0]], %[[B1]] : tensor<32x128xf32>, tensor<1x128xf32>
// CHECK: %[[H:.*]] = dlvm.tanh %[[H1]]
// CHECK: %[[O0:.*]] = dlvm.dot %[[H]], %[[W2]]
// CHECK: %[[O:.*]] = dlvm.add %[[O0]], %[[B2]] : tensor<32x10xf32>, tensor<1x10xf32>
// CHECK: %[[LOGP:.*]] = dlvm.log_softmax %[[O]]
// CHECK: %[[YLOGP:.*]] = dlvm.mul %[[Y]], %[[LOGP]]
// CHECK: %[[S:.*]] = dlvm.reduce add %[[YLOGP]] dims [0, 1]
// CHECK: %[[L:.*]] = dlvm.mul %[[S]], %[[SCALE]] : tensor<f32>, tensor<f32>
// CHECK: %[[DLOGP:.*]] = dlvm.mul %[[Y]], %[[SCALE]] : tensor<32x10xf32>, tensor<f32>
// CHECK: %[[P:.*]] = dlvm.exp %[[LOGP]]
// CHECK: %[[CORR:.*]] = dlvm.mul %[[P]], %{{.*}} : tensor<32x10xf32>, tensor<32x1xf32>
// CHECK: %[[DO:.*]] = dlvm.sub %[[DLOGP]], %[[CORR]]
// CHECK: %[[W2T:.*]] = dlvm.transpose %[[W2]]
// CHECK: %[[DH:.*]] = dlvm.dot %[[DO]], %[[W2T]]
// CHECK: %[[HSQ:.*]] = dlvm.mul %[[H]], %[[H]]
// CHECK: %[[DTANH:.*]] = dlvm.sub %[[ONE]], %[[HSQ]] : tensor<f32>, tensor<32x128xf32>
// CHECK: %[[DH1:.*]] = dlvm.mul %[[DH]], %[[DTANH]]
// CHECK: %[[XT:.*]] = dlvm.transpose %[[X]]
// CHECK: %[[DW1:.*]] = dlvm.dot %[[XT]], %[[DH1]] : tensor<784x32xf32>, tensor<32x128xf32>
// CHECK-NOT: dlvm.broadcast_to
// CHECK-NOT: dlvm.neg
// CHECK-NOT: dlvm.pow
// CHECK: return %[[DW1]], %{{.*}}, %{{.*}}, %{{.*}}, %[[L]]
func.func @mlp_grad(%x: tensor<32x784xf32>, %w1: tensor<784x128xf32>, %b1: tensor<1x128xf32>,
                    %w2: tensor<128x10xf32>, %b2: tensor<1x10xf32>, %y: tensor<32x10xf32>)
    -> (tensor<784x128xf32>, tensor<1x128xf32>, tensor<128x10xf32>, tensor<1x10xf32>, tensor<f32>) {
  // Forward.
  %h0 = dlvm.dot %x, %w1 : tensor<32x784xf32>, tensor<784x128xf32>
  %b1b = dlvm.broadcast_to %b1 to [32, 128] : tensor<1x128xf32>
  %h1 = dlvm.add %h0, %b1b : tensor<32x128xf32>, tensor<32x128xf32>
  %h = dlvm.tanh %h1 : tensor<32x128xf32>
  %o0 = dlvm.dot %h, %w2 : tensor<32x128xf32>, tensor<128x10xf32>
  %b2b = dlvm.broadcast_to %b2 to [32, 10] : tensor<1x10xf32>
  %o = dlvm.add %o0, %b2b : tensor<32x10xf32>, tensor<32x10xf32>
  %logp = dlvm.log_softmax %o axis 1 : tensor<32x10xf32>
  %ylogp = dlvm.mul %y, %logp : tensor<32x10xf32>, tensor<32x10xf32>
  %s = dlvm.reduce add %ylogp dims [0, 1] : tensor<32x10xf32>
  %n = dlvm.constant dense<-32.0> : tensor<f32>
  %l = dlvm.div %s, %n : tensor<f32>, tensor<f32>
  // Backward: l = s / n.
  %seed = dlvm.constant dense<1.0> : tensor<f32>
  %zero = dlvm.constant dense<0.0> : tensor<f32>
  %dl = dlvm.add %zero, %seed : tensor<f32>, tensor<f32>
  %ds = dlvm.div %dl, %n : tensor<f32>, tensor<f32>
  // s = sum(ylogp): the adjoint is the seed broadcast, times ones.
  %dsb = dlvm.broadcast_to %ds to [32, 10] : tensor<f32>
  %ones = dlvm.constant dense<1.0> : tensor<32x10xf32>
  %dylogp = dlvm.mul %dsb, %ones : tensor<32x10xf32>, tensor<32x10xf32>
  %dlogp = dlvm.mul %dylogp, %y : tensor<32x10xf32>, tensor<32x10xf32>
  // logp = log_softmax(o): do = dlogp - softmax(o) * sum(dlogp, 1).
  %sum = dlvm.reduce add %dlogp dims [1] : tensor<32x10xf32>
  %sumr = dlvm.reshape %sum to [32, 1] : tensor<32xf32>
  %p = dlvm.exp %logp : tensor<32x10xf32>
  %corr = dlvm.mul %p, %sumr : tensor<32x10xf32>, tensor<32x1xf32>
  %ncorr = dlvm.neg %corr : tensor<32x10xf32>
  %do = dlvm.add %dlogp, %ncorr : tensor<32x10xf32>, tensor<32x10xf32>
  // o = o0 + b2b.
  %zeros10 = dlvm.constant dense<0.0> : tensor<32x10xf32>
  %do0 = dlvm.add %zeros10, %do : tensor<32x10xf32>, tensor<32x10xf32>
  %db2b = dlvm.mul %do, %seed : tensor<32x10xf32>, tensor<f32>
  %db2s = dlvm.reduce add %db2b dims [0] : tensor<32x10xf32>
  %db2 = dlvm.reshape %db2s to [1, 10] : tensor<10xf32>
  // o0 = h . w2.
  %w2t = dlvm.transpose %w2 : tensor<128x10xf32>
  %dh = dlvm.dot %do0, %w2t : tensor<32x10xf32>, tensor<10x128xf32>
  %ht = dlvm.transpose %h : tensor<32x128xf32>
  %dw2 = dlvm.dot %ht, %do0 : tensor<128x32xf32>, tensor<32x10xf32>
  %zw2 = dlvm.constant dense<0.0> : tensor<128x10xf32>
  %dw2acc = dlvm.add %zw2, %dw2 : tensor<128x10xf32>, tensor<128x10xf32>
  // h = tanh(h1).
  %two = dlvm.constant dense<2.0> : tensor<f32>
  %hsq = dlvm.pow %h, %two : tensor<32x128xf32>, tensor<f32>
  %dtanh = dlvm.sub %seed, %hsq : tensor<f32>, tensor<32x128xf32>
  %dh1 = dlvm.mul %dh, %dtanh : tensor<32x128xf32>, tensor<32x128xf32>
  // h1 = h0 + b1b.
  %nd = dlvm.neg %dh1 : tensor<32x128xf32>
  %db1s = dlvm.reduce add %dh1 dims [0] : tensor<32x128xf32>
  %db1 = dlvm.reshape %db1s to [1, 128] : tensor<128xf32>
  // h0 = x . w1, with dw1 = transpose(transpose(dh1) . x).
  %dh1t = dlvm.transpose %dh1 : tensor<32x128xf32>
  %dw1t = dlvm.dot %dh1t, %x : tensor<128x32xf32>, tensor<32x784xf32>
  %dw1 = dlvm.transpose %dw1t : tensor<128x784xf32>
  %zw1 = dlvm.constant dense<0.0> : tensor<784x128xf32>
  %dw1acc = dlvm.sub %zw1, %dw1 : tensor<784x128xf32>, tensor<784x128xf32>
  %dw1pos = dlvm.neg %dw1acc : tensor<784x128xf32>
  return %dw1pos, %db1, %dw2acc, %db2, %l : tensor<784x128xf32>, tensor<1x128xf32>, tensor<128x10xf32>, tensor<1x10xf32>, tensor<f32>
}

// A low-rank layer y = x . (a . b) (as in LoRA): multiplying x first is 16x cheaper.
// CHECK-LABEL: func.func @low_rank
// CHECK-SAME: (%[[X:.*]]: tensor<32x512xf32>, %[[A:.*]]: tensor<512x8xf32>, %[[B:.*]]: tensor<8x512xf32>)
// CHECK: %[[XA:.*]] = dlvm.dot %[[X]], %[[A]]
// CHECK: %[[Y:.*]] = dlvm.dot %[[XA]], %[[B]]
// CHECK: return %[[Y]]
// NOLINALG-LABEL: func.func @low_rank
// NOLINALG: dlvm.dot %{{.*}}, %{{.*}} : tensor<512x8xf32>, tensor<8x512xf32>
func.func @low_rank(%x: tensor<32x512xf32>, %a: tensor<512x8xf32>, %b: tensor<8x512xf32>) -> tensor<32x512xf32> {
  %ab = dlvm.dot %a, %b : tensor<512x8xf32>, tensor<8x512xf32>
  %y = dlvm.dot %x, %ab : tensor<32x512xf32>, tensor<512x512xf32>
  return %y : tensor<32x512xf32>
}

// An RNN cell (transposed layout) with a small input and state over a batch: one dot over
// concatenated operands, the transposes moved onto the (small) concatenations.
// CHECK-LABEL: func.func @rnn_cell
// CHECK-SAME: (%[[W:.*]]: tensor<4x256xf32>, %[[X:.*]]: tensor<256x4xf32>, %[[U:.*]]: tensor<4x256xf32>, %[[H:.*]]: tensor<256x4xf32>, %[[B:.*]]: tensor<1x256xf32>)
// CHECK-DAG: %[[WU:.*]] = dlvm.concatenate %[[W]], %[[U]] axis 0 : tensor<4x256xf32>, tensor<4x256xf32>
// CHECK-DAG: %[[WUT:.*]] = dlvm.transpose %[[WU]] : tensor<8x256xf32>
// CHECK-DAG: %[[XH:.*]] = dlvm.concatenate %[[X]], %[[H]] axis 1 : tensor<256x4xf32>, tensor<256x4xf32>
// CHECK-DAG: %[[XHT:.*]] = dlvm.transpose %[[XH]] : tensor<256x8xf32>
// CHECK: %[[D:.*]] = dlvm.dot %[[WUT]], %[[XHT]] : tensor<256x8xf32>, tensor<8x256xf32>
// CHECK: %[[S:.*]] = dlvm.add %[[D]], %[[B]] : tensor<256x256xf32>, tensor<1x256xf32>
// CHECK: %[[R:.*]] = dlvm.tanh %[[S]]
// CHECK: return %[[R]]
func.func @rnn_cell(%w: tensor<4x256xf32>, %x: tensor<256x4xf32>, %u: tensor<4x256xf32>, %h: tensor<256x4xf32>,
                    %b: tensor<1x256xf32>) -> tensor<256x256xf32> {
  %wt = dlvm.transpose %w : tensor<4x256xf32>
  %xt = dlvm.transpose %x : tensor<256x4xf32>
  %wx = dlvm.dot %wt, %xt : tensor<256x4xf32>, tensor<4x256xf32>
  %ut = dlvm.transpose %u : tensor<4x256xf32>
  %ht = dlvm.transpose %h : tensor<256x4xf32>
  %uh = dlvm.dot %ut, %ht : tensor<256x4xf32>, tensor<4x256xf32>
  %bb = dlvm.broadcast_to %b to [256, 256] : tensor<1x256xf32>
  %s0 = dlvm.add %wx, %uh : tensor<256x256xf32>, tensor<256x256xf32>
  %s = dlvm.add %s0, %bb : tensor<256x256xf32>, tensor<256x256xf32>
  %r = dlvm.tanh %s : tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}
