// A two-layer perceptron in DLVM IR with a gradient declaration, as in the
// DLVM paper: `dlvm-opt --dlvm-differentiate` synthesizes @loss_grad's body.
func.func @loss(%x: tensor<32x784xf32>, %w1: tensor<784x128xf32>, %b1: tensor<1x128xf32>,
                %w2: tensor<128x10xf32>, %b2: tensor<1x10xf32>, %y: tensor<32x10xf32>) -> tensor<f32> {
  %h0 = dlvm.dot %x, %w1 : tensor<32x784xf32>, tensor<784x128xf32>
  %h1 = dlvm.add %h0, %b1 : tensor<32x128xf32>, tensor<1x128xf32>
  %h = dlvm.tanh %h1 : tensor<32x128xf32>
  %o0 = dlvm.dot %h, %w2 : tensor<32x128xf32>, tensor<128x10xf32>
  %o = dlvm.add %o0, %b2 : tensor<32x10xf32>, tensor<1x10xf32>
  %logp = dlvm.log_softmax %o axis 1 : tensor<32x10xf32>
  %ylogp = dlvm.mul %y, %logp : tensor<32x10xf32>, tensor<32x10xf32>
  %s = dlvm.reduce add %ylogp dims [0, 1] : tensor<32x10xf32>
  // Mean over the batch: multiply by -1/32 (written as a foldable expression).
  %one = dlvm.constant dense<1.0> : tensor<f32>
  %n = dlvm.constant dense<-32.0> : tensor<f32>
  %scale = dlvm.div %one, %n : tensor<f32>, tensor<f32>
  %l = dlvm.mul %s, %scale : tensor<f32>, tensor<f32>
  return %l : tensor<f32>
}

// Gradient wrt the parameters, also returning the loss.
func.func private @loss_grad(tensor<32x784xf32>, tensor<784x128xf32>, tensor<1x128xf32>,
                             tensor<128x10xf32>, tensor<1x10xf32>, tensor<32x10xf32>)
    -> (tensor<784x128xf32>, tensor<1x128xf32>, tensor<128x10xf32>, tensor<1x10xf32>, tensor<f32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @loss wrt [1, 2, 3, 4] keeping [0]>}
