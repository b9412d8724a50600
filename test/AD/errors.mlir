// RUN: dlvm-opt %s --split-input-file --verify-diagnostics --dlvm-differentiate

// An op without a derivative rule on an active path is an error at that op. The message goes on
// with notes (folded into it: the bindings cannot attach notes) naming the differentiated argument
// it depends on and the ops in between.

func.func @no_adjoint(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<6xf32> {
  %a = dlvm.exp %x : tensor<4xf32>
  %b = dlvm.mul %a, %y : tensor<4xf32>, tensor<4xf32>
  %z = arith.constant 0.0 : f32
  // expected-error @+1 {{cannot differentiate 'tensor.pad': it has no adjoint rule (reverse mode)}}
  %p = tensor.pad %b low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %z : f32
  } : tensor<4xf32> to tensor<6xf32>
  return %p : tensor<6xf32>
}
func.func private @no_adjoint_grad(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @no_adjoint wrt [0]>}

// -----

func.func @note_argument(%x: tensor<4xf32>) -> tensor<6xf32> {
  %z = arith.constant 0.0 : f32
  // expected-error-re @+1 {{note: {{.*}}errors.mlir:{{[0-9]+}}:1: it is active: it depends on argument #0 of @note_argument}}
  %p = tensor.pad %x low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %z : f32
  } : tensor<4xf32> to tensor<6xf32>
  return %p : tensor<6xf32>
}
func.func private @note_argument_grad(tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @note_argument>}

// -----

func.func @note_path(%x: tensor<4xf32>) -> tensor<6xf32> {
  %a = dlvm.exp %x : tensor<4xf32>
  %b = dlvm.sin %a : tensor<4xf32>
  %z = arith.constant 0.0 : f32
  // expected-error-re @+1 {{through 'dlvm.exp' ({{.*}}errors.mlir:{{[0-9]+}}:8) -> 'dlvm.sin' ({{.*}}errors.mlir:{{[0-9]+}}:8)}}
  %p = tensor.pad %b low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %z : f32
  } : tensor<4xf32> to tensor<6xf32>
  return %p : tensor<6xf32>
}
func.func private @note_path_grad(tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @note_path>}

// -----

func.func @no_tangent(%x: tensor<4xf32>) -> tensor<6xf32> {
  %z = arith.constant 0.0 : f32
  // expected-error @+1 {{cannot differentiate 'tensor.pad': it has no tangent rule (forward mode)}}
  %p = tensor.pad %x low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %z : f32
  } : tensor<4xf32> to tensor<6xf32>
  return %p : tensor<6xf32>
}
func.func private @no_tangent_jvp(tensor<4xf32>, tensor<4xf32>) -> tensor<6xf32>
    attributes {dlvm.tangent = #dlvm.tangent<of @no_tangent>}

// -----

// expected-error @+1 {{cyclic derivative declarations: @a -> @b -> @a}}
func.func private @a(tensor<f32>) -> tensor<f32> attributes {dlvm.gradient = #dlvm.gradient<of @b>}
func.func private @b(tensor<f32>) -> tensor<f32> attributes {dlvm.gradient = #dlvm.gradient<of @a>}

// -----

func.func private @external(tensor<f32>) -> tensor<f32>
func.func @calls_external(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{cannot differentiate @external: it is a declaration without a body}}
  %y = func.call @external(%x) : (tensor<f32>) -> tensor<f32>
  return %y : tensor<f32>
}
func.func private @calls_external_grad(tensor<f32>) -> tensor<f32>
    attributes {dlvm.gradient = #dlvm.gradient<of @calls_external>}

// -----

func.func @primal(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}
// expected-error @+1 {{derivative declaration @has_body must not have a body}}
func.func @has_body(%x: tensor<f32>) -> tensor<f32> attributes {dlvm.gradient = #dlvm.gradient<of @primal>} {
  return %x : tensor<f32>
}

// -----

// A derivative would be lost through memory: rejected rather than silently zero.
func.func @through_memory(%x: f32) -> f32 {
  %m = memref.alloca() : memref<f32>
  // expected-error @+1 {{cannot differentiate through 'memref.store': it consumes a value that depends on a differentiated argument but has no derivative rule}}
  memref.store %x, %m[] : memref<f32>
  %y = memref.load %m[] : memref<f32>
  return %y : f32
}
func.func private @through_memory_grad(f32) -> f32
    attributes {dlvm.gradient = #dlvm.gradient<of @through_memory>}
