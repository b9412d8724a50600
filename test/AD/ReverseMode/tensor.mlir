// RUN: dlvm-opt %s --split-input-file --dlvm-differentiate | FileCheck %s

// Reverse mode of tensor ops: each adjoint moves g back to where the value came from.

// tensor.extract: dt = insert(g into zeros at the same indices)
// CHECK-LABEL: func.func @extract_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x3xf32>, %[[ARG1:.*]]: index, %[[ARG2:.*]]: f32) -> tensor<2x3xf32>
// CHECK:      %[[C1:.*]] = arith.constant 1 : index
// CHECK:      %[[EXTRACTED:.*]] = tensor.extract %[[ARG0]][%[[ARG1]], %[[C1]]] : tensor<2x3xf32>
// CHECK:      %[[V0:.*]] = dlvm.constant dense<0.000000e+00> : tensor<2x3xf32>
// CHECK:      %[[INSERTED:.*]] = tensor.insert %[[ARG2]] into %[[V0]][%[[ARG1]], %[[C1]]] : tensor<2x3xf32>
// CHECK:      return %[[INSERTED]] : tensor<2x3xf32>
func.func @extract(%t: tensor<2x3xf32>, %i: index) -> f32 {
  %c1 = arith.constant 1 : index
  %e = tensor.extract %t[%i, %c1] : tensor<2x3xf32>
  return %e : f32
}
func.func private @extract_grad(tensor<2x3xf32>, index, f32) -> tensor<2x3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @extract wrt [0] seedable>}

// -----

// tensor.insert: dscalar = extract(g), ddest = insert(0 into g)
// CHECK-LABEL: func.func @insert_grad(
// CHECK-SAME:    %[[ARG0:.*]]: f32, %[[ARG1:.*]]: tensor<3xf32>, %[[ARG2:.*]]: index, %[[ARG3:.*]]: tensor<3xf32>) -> (f32, tensor<3xf32>)
// CHECK:      %[[INSERTED:.*]] = tensor.insert %[[ARG0]] into %[[ARG1]][%[[ARG2]]] : tensor<3xf32>
// CHECK:      %[[EXTRACTED:.*]] = tensor.extract %[[ARG3]][%[[ARG2]]] : tensor<3xf32>
// CHECK:      %[[CST:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:      %[[INSERTED_0:.*]] = tensor.insert %[[CST]] into %[[ARG3]][%[[ARG2]]] : tensor<3xf32>
// CHECK:      return %[[EXTRACTED]], %[[INSERTED_0]] : f32, tensor<3xf32>
func.func @insert(%s: f32, %t: tensor<3xf32>, %i: index) -> tensor<3xf32> {
  %r = tensor.insert %s into %t[%i] : tensor<3xf32>
  return %r : tensor<3xf32>
}
func.func private @insert_grad(f32, tensor<3xf32>, index, tensor<3xf32>) -> (f32, tensor<3xf32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @insert wrt [0, 1] seedable>}

// -----

// tensor.extract_slice (dynamic offset): dt = insert_slice(g into zeros, same offsets/sizes/strides)
// CHECK-LABEL: func.func @extract_slice_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4x3xf32>, %[[ARG1:.*]]: index, %[[ARG2:.*]]: tensor<3xf32>) -> tensor<4x3xf32>
// CHECK:      %[[EXTRACTED_SLICE:.*]] = tensor.extract_slice %[[ARG0]][%[[ARG1]], 0] [1, 3] [1, 1] : tensor<4x3xf32> to tensor<3xf32>
// CHECK:      %[[V0:.*]] = dlvm.constant dense<0.000000e+00> : tensor<4x3xf32>
// CHECK:      %[[INSERTED_SLICE:.*]] = tensor.insert_slice %[[ARG2]] into %[[V0]][%[[ARG1]], 0] [1, 3] [1, 1] : tensor<3xf32> into tensor<4x3xf32>
// CHECK:      return %[[INSERTED_SLICE]] : tensor<4x3xf32>
func.func @extract_slice(%t: tensor<4x3xf32>, %i: index) -> tensor<3xf32> {
  %s = tensor.extract_slice %t[%i, 0] [1, 3] [1, 1] : tensor<4x3xf32> to tensor<3xf32>
  return %s : tensor<3xf32>
}
func.func private @extract_slice_grad(tensor<4x3xf32>, index, tensor<3xf32>) -> tensor<4x3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @extract_slice wrt [0] seedable>}

// -----

// tensor.insert_slice: dsource = extract_slice(g), ddest = insert_slice(zeros into g)
// CHECK-LABEL: func.func @insert_slice_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<3xf32>, %[[ARG1:.*]]: tensor<4x3xf32>, %[[ARG2:.*]]: index, %[[ARG3:.*]]: tensor<4x3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>)
// CHECK:      %[[INSERTED_SLICE:.*]] = tensor.insert_slice %[[ARG0]] into %[[ARG1]][%[[ARG2]], 0] [1, 3] [1, 1] : tensor<3xf32> into tensor<4x3xf32>
// CHECK:      %[[EXTRACTED_SLICE:.*]] = tensor.extract_slice %[[ARG3]][%[[ARG2]], 0] [1, 3] [1, 1] : tensor<4x3xf32> to tensor<3xf32>
// CHECK:      %[[V0:.*]] = dlvm.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK:      %[[INSERTED_SLICE_0:.*]] = tensor.insert_slice %[[V0]] into %[[ARG3]][%[[ARG2]], 0] [1, 3] [1, 1] : tensor<3xf32> into tensor<4x3xf32>
// CHECK:      return %[[EXTRACTED_SLICE]], %[[INSERTED_SLICE_0]] : tensor<3xf32>, tensor<4x3xf32>
func.func @insert_slice(%s: tensor<3xf32>, %t: tensor<4x3xf32>, %i: index) -> tensor<4x3xf32> {
  %r = tensor.insert_slice %s into %t[%i, 0] [1, 3] [1, 1] : tensor<3xf32> into tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}
func.func private @insert_slice_grad(tensor<3xf32>, tensor<4x3xf32>, index, tensor<4x3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @insert_slice wrt [0, 1] seedable>}

// -----

// tensor.from_elements: each element's adjoint is extracted from g
// CHECK-LABEL: func.func @from_elements_grad(
// CHECK-SAME:    %[[ARG0:.*]]: f32, %[[ARG1:.*]]: f32, %[[ARG2:.*]]: tensor<2xf32>) -> (f32, f32)
// CHECK:      %[[FROM_ELEMENTS:.*]] = tensor.from_elements %[[ARG0]], %[[ARG1]] : tensor<2xf32>
// CHECK:      %[[C0:.*]] = arith.constant 0 : index
// CHECK:      %[[EXTRACTED:.*]] = tensor.extract %[[ARG2]][%[[C0]]] : tensor<2xf32>
// CHECK:      %[[C1:.*]] = arith.constant 1 : index
// CHECK:      %[[EXTRACTED_0:.*]] = tensor.extract %[[ARG2]][%[[C1]]] : tensor<2xf32>
// CHECK:      return %[[EXTRACTED]], %[[EXTRACTED_0]] : f32, f32
func.func @from_elements(%a: f32, %b: f32) -> tensor<2xf32> {
  %r = tensor.from_elements %a, %b : tensor<2xf32>
  return %r : tensor<2xf32>
}
func.func private @from_elements_grad(f32, f32, tensor<2xf32>) -> (f32, f32)
    attributes {dlvm.gradient = #dlvm.gradient<of @from_elements seedable>}

// -----

// tensor.splat: dscalar = the sum of g
// CHECK-LABEL: func.func @splat_grad(
// CHECK-SAME:    %[[ARG0:.*]]: f32, %[[ARG1:.*]]: tensor<2x2xf32>) -> f32
// CHECK:      %[[SPLAT:.*]] = tensor.splat %[[ARG0]] : tensor<2x2xf32>
// CHECK:      %[[V0:.*]] = dlvm.reduce add %[[ARG1]] dims [0, 1] : tensor<2x2xf32>
// CHECK:      %[[EXTRACTED:.*]] = tensor.extract %[[V0]][] : tensor<f32>
// CHECK:      return %[[EXTRACTED]] : f32
func.func @splat(%a: f32) -> tensor<2x2xf32> {
  %r = tensor.splat %a : tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}
func.func private @splat_grad(f32, tensor<2x2xf32>) -> f32
    attributes {dlvm.gradient = #dlvm.gradient<of @splat seedable>}

// -----

// tensor.collapse_shape: dt = reshape(g) to the source shape
// CHECK-LABEL: func.func @collapse_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<2x3xf32>, %[[ARG1:.*]]: tensor<6xf32>) -> tensor<2x3xf32>
// CHECK:      %[[COLLAPSED:.*]] = tensor.collapse_shape %[[ARG0]] {{\[\[}}0, 1]] : tensor<2x3xf32> into tensor<6xf32>
// CHECK:      %[[V0:.*]] = dlvm.reshape %[[ARG1]] to [2, 3] : tensor<6xf32>
// CHECK:      return %[[V0]] : tensor<2x3xf32>
func.func @collapse(%t: tensor<2x3xf32>) -> tensor<6xf32> {
  %r = tensor.collapse_shape %t [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  return %r : tensor<6xf32>
}
func.func private @collapse_grad(tensor<2x3xf32>, tensor<6xf32>) -> tensor<2x3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @collapse seedable>}
