// Linear regression trained by SGD, for examples/c/main.c: dlvm-compile
// synthesizes @loss_grad (dlvm-differentiate) and compiles @sgd_step into a
// shared object; the C program calls it through the generated header.
func.func private @loss(%x: tensor<64x8xf32>, %y: tensor<64x1xf32>, %w: tensor<8x1xf32>, %b: tensor<1x1xf32>) -> tensor<f32> {
  %p0 = dlvm.dot %x, %w : tensor<64x8xf32>, tensor<8x1xf32>
  %p = dlvm.add %p0, %b : tensor<64x1xf32>, tensor<1x1xf32>
  %e = dlvm.sub %p, %y : tensor<64x1xf32>, tensor<64x1xf32>
  %e2 = dlvm.mul %e, %e : tensor<64x1xf32>, tensor<64x1xf32>
  %s = dlvm.reduce add %e2 dims [0, 1] : tensor<64x1xf32>
  %n = dlvm.constant dense<64.0> : tensor<f32>
  %l = dlvm.div %s, %n : tensor<f32>, tensor<f32>
  return %l : tensor<f32>
}

// d loss / d w, d loss / d b, and the loss itself.
func.func private @loss_grad(tensor<64x8xf32>, tensor<64x1xf32>, tensor<8x1xf32>, tensor<1x1xf32>)
    -> (tensor<8x1xf32>, tensor<1x1xf32>, tensor<f32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @loss wrt [2, 3] keeping [0]>}

// One step: the updated parameters and the loss before the update.
func.func @sgd_step(%x: tensor<64x8xf32>, %y: tensor<64x1xf32>, %w: tensor<8x1xf32>, %b: tensor<1x1xf32>, %lr: f32)
    -> (tensor<8x1xf32>, tensor<1x1xf32>, f32) {
  %gw, %gb, %l = func.call @loss_grad(%x, %y, %w, %b)
      : (tensor<64x8xf32>, tensor<64x1xf32>, tensor<8x1xf32>, tensor<1x1xf32>) -> (tensor<8x1xf32>, tensor<1x1xf32>, tensor<f32>)
  %rate = tensor.from_elements %lr : tensor<f32>
  %dw = dlvm.mul %rate, %gw : tensor<f32>, tensor<8x1xf32>
  %w2 = dlvm.sub %w, %dw : tensor<8x1xf32>, tensor<8x1xf32>
  %db = dlvm.mul %rate, %gb : tensor<f32>, tensor<1x1xf32>
  %b2 = dlvm.sub %b, %db : tensor<1x1xf32>, tensor<1x1xf32>
  %loss = tensor.extract %l[] : tensor<f32>
  return %w2, %b2, %loss : tensor<8x1xf32>, tensor<1x1xf32>, f32
}
