// dlvm-checkpoint on the gradient of a two-layer MLP: which forward values the reverse sweep
// saves, which it recomputes (copies marked {dlvm.recompute}, placed in the reverse sweep).
// RUN: dlvm-opt %s --dlvm-differentiate --dlvm-optimize --dlvm-checkpoint=policy=save-everything | FileCheck %s --check-prefix=ALL
// RUN: dlvm-opt %s --dlvm-differentiate --dlvm-optimize --dlvm-checkpoint=policy=save-dots | FileCheck %s --check-prefix=DOTS
// RUN: dlvm-opt %s --dlvm-differentiate --dlvm-optimize --dlvm-checkpoint=policy=save-nothing | FileCheck %s --check-prefix=NONE
// RUN: dlvm-opt %s --dlvm-differentiate --dlvm-optimize --dlvm-checkpoint='budget=2KiB' | FileCheck %s --check-prefix=BUDGET
// The pipeline form: dlvm-optimize runs dlvm-checkpoint before its last clean-up; CSE keeps the copies.
// RUN: dlvm-opt %s --dlvm-differentiate --dlvm-optimize=checkpoint=save-dots | FileCheck %s --check-prefix=DOTS

func.func @loss(%x: tensor<32x784xf32>, %w1: tensor<784x128xf32>, %b1: tensor<1x128xf32>,
                %w2: tensor<128x10xf32>, %y: tensor<32x10xf32>) -> tensor<f32> {
  %h0 = dlvm.dot %x, %w1 : tensor<32x784xf32>, tensor<784x128xf32>
  %h1 = dlvm.add %h0, %b1 : tensor<32x128xf32>, tensor<1x128xf32>
  %h = dlvm.tanh %h1 : tensor<32x128xf32>
  %o = dlvm.dot %h, %w2 : tensor<32x128xf32>, tensor<128x10xf32>
  %logp = dlvm.log_softmax %o axis 1 : tensor<32x10xf32>
  %ylogp = dlvm.mul %y, %logp : tensor<32x10xf32>, tensor<32x10xf32>
  %s = dlvm.reduce add %ylogp dims [0, 1] : tensor<32x10xf32>
  return %s : tensor<f32>
}
func.func private @loss_grad(tensor<32x784xf32>, tensor<784x128xf32>, tensor<1x128xf32>,
                             tensor<128x10xf32>, tensor<32x10xf32>)
    -> (tensor<784x128xf32>, tensor<1x128xf32>, tensor<128x10xf32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @loss wrt [1, 2, 3]>}

// save-everything is the AD's own output: tanh and log_softmax are held for the reverse sweep.
// ALL-LABEL: func.func @loss_grad
// ALL-NOT: dlvm.recompute
// ALL: %[[H:.*]] = dlvm.tanh
// ALL: %[[LOGP:.*]] = dlvm.log_softmax
// ALL: dlvm.exp %[[LOGP]]
// ALL: dlvm.transpose %[[H]]
// ALL-NOT: dlvm.recompute

// save-dots: the two dot results are saved; the ops after them are recomputed from them, each
// right before the first reverse-sweep op that reads it. Nothing of the forward sweep but the
// dots is left.
// DOTS-LABEL: func.func @loss_grad
// DOTS-SAME: (%[[X:[^:]*]]: tensor<32x784xf32>, %[[W1:[^:]*]]: tensor<784x128xf32>, %[[B1:[^:]*]]: tensor<1x128xf32>, %[[W2:[^:]*]]: tensor<128x10xf32>
// DOTS: %[[H0:.*]] = dlvm.dot %[[X]], %[[W1]]
// DOTS-NEXT: %[[H1F:.*]] = dlvm.add %[[H0]], %[[B1]]
// DOTS-NEXT: %[[HF:.*]] = dlvm.tanh %[[H1F]]
// DOTS-NEXT: %[[O:.*]] = dlvm.dot %[[HF]], %[[W2]]
// DOTS-NOT: dlvm.tanh
// DOTS: dlvm.log_softmax %[[O]] axis 1 {dlvm.recompute}
// DOTS: %[[H1:.*]] = dlvm.add %[[H0]], %[[B1]] {dlvm.recompute}
// DOTS-NEXT: %[[H:.*]] = dlvm.tanh %[[H1]] {dlvm.recompute}
// DOTS: dlvm.transpose %[[H]]

// save-nothing: even the dots are recomputed, from the arguments; the first reverse-sweep op
// (d log_softmax) needs the whole forward chain, so it is rebuilt there, in order.
// NONE-LABEL: func.func @loss_grad
// NONE: dlvm.dot %{{.*}}, %{{.*}} {dlvm.recompute} : tensor<32x784xf32>, tensor<784x128xf32>
// NONE-NEXT: dlvm.add {{.*}} {dlvm.recompute}
// NONE-NEXT: dlvm.tanh {{.*}} {dlvm.recompute}
// NONE-NEXT: dlvm.dot %{{.*}}, %{{.*}} {dlvm.recompute} : tensor<32x128xf32>, tensor<128x10xf32>
// NONE-NEXT: dlvm.log_softmax {{.*}} {dlvm.recompute}
// NONE-NOT: dlvm.recompute

// A 2 KiB budget holds the 1280-byte log_softmax but not the 16 KiB hidden layer, which is the
// cheaper of the two to rebuild per byte: tanh and its inputs are recomputed, log_softmax saved.
// BUDGET-LABEL: func.func @loss_grad
// BUDGET: %[[LOGP:.*]] = dlvm.log_softmax
// BUDGET: dlvm.exp %[[LOGP]]
// BUDGET: dlvm.dot %{{.*}}, %{{.*}} {dlvm.recompute} : tensor<32x784xf32>, tensor<784x128xf32>
// BUDGET: dlvm.tanh %{{.*}} {dlvm.recompute}
