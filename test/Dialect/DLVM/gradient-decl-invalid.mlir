// Malformed derivative declarations are verifier errors.
// RUN: dlvm-opt %s --split-input-file --verify-diagnostics
// RUN: %mlir_opt %s --split-input-file --verify-diagnostics

func.func @f(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %0 = dlvm.mul %x, %y : tensor<3xf32>, tensor<3xf32>
  return %0 : tensor<3xf32>
}
// expected-error @+1 {{'func.func' op has type '(tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>' but dlvm.gradient of @f '(tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>' must have type '(tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)'}}
func.func private @f_grad(tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @f>}

// -----

func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}
// expected-error @+1 {{'wrt' index 1 is out of range: @f has 1 argument(s)}}
func.func private @f_grad(tensor<3xf32>) -> tensor<3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @f wrt [1]>}

// -----

func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}
// expected-error @+1 {{'keeping' index 2 is out of range: @f has 1 result(s)}}
func.func private @f_grad(tensor<3xf32>) -> tensor<3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @f keeping [2]>}

// -----

func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}
// expected-error @+1 {{'from' index 1 is out of range: @f has 1 result(s)}}
func.func private @f_grad(tensor<3xf32>) -> tensor<3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @f from 1>}

// -----

// expected-error @+1 {{'dlvm.gradient' refers to @missing, which is not a function in scope}}
func.func private @g(tensor<3xf32>) -> tensor<3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @missing>}

// -----

// expected-error @+1 {{'dlvm.gradient' cannot refer to the function itself}}
func.func private @g(tensor<3xf32>) -> tensor<3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @g>}

// -----

func.func @f(%x: tensor<3xf32>) {
  return
}
// expected-error @+1 {{@f has no result to differentiate}}
func.func private @f_grad(tensor<3xf32>) -> tensor<3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @f>}

// -----

func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}
// expected-error @+2 {{'wrt' index 0 is listed twice}}
func.func private @f_grad(tensor<3xf32>) -> tensor<3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @f wrt [0, 0]>}

// -----

func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}
// expected-error @+2 {{'keeping' index -1 is negative}}
func.func private @f_grad(tensor<3xf32>) -> tensor<3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @f keeping [-1]>}

// -----

func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}
// expected-error @+2 {{duplicate clause 'wrt'}}
func.func private @f_grad(tensor<3xf32>) -> tensor<3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @f wrt [0] wrt [0]>}

// -----

func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}
// expected-error @+2 {{expected one of 'wrt', 'keeping', 'from' or '>', got 'seedable'}}
func.func private @f_jvp(tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    attributes {dlvm.tangent = #dlvm.tangent<of @f seedable>}

// -----

func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}
// expected-error @+2 {{expected one of 'wrt', 'keeping', 'from', 'seedable' or '>', got 'by'}}
func.func private @f_grad(tensor<3xf32>) -> tensor<3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @f by [0]>}

// -----

func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}
// expected-error @+1 {{'func.func' op 'dlvm.gradient' must be a #dlvm.gradient<...> attribute}}
func.func private @f_grad(tensor<3xf32>) -> tensor<3xf32>
    attributes {dlvm.gradient = "f"}

// -----

func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}
// expected-error @+1 {{'dlvm.tangent' must be a #dlvm.tangent<...> attribute}}
func.func private @f_jvp(tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    attributes {dlvm.tangent = #dlvm.gradient<of @f>}

// -----

func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'dlvm.gradient' may only be attached to a function}}
  %0 = dlvm.neg %x {dlvm.gradient = #dlvm.gradient<of @f>} : tensor<3xf32>
  return %0 : tensor<3xf32>
}
