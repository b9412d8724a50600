// Every verifier message of the dlvm dialect, through the stock mlir-opt with
// the plugin and through dlvm-opt.
// RUN: %mlir_opt %s -split-input-file -verify-diagnostics
// RUN: dlvm-opt %s --split-input-file --verify-diagnostics

func.func @add_shapes(%a: tensor<4x8xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{operand shapes are not broadcast-compatible: [4, 8] and [4, 3]}}
  %0 = dlvm.add %a, %b : tensor<4x8xf32>, tensor<4x3xf32>
  return
}

// -----

func.func @add_ranks(%a: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{operand shapes are not broadcast-compatible: [4, 8] and [8]}}
  %0 = dlvm.add %a, %b : tensor<4x8xf32>, tensor<8xf32>
  return
}

// -----

func.func @add_elements(%a: tensor<4xf32>, %b: tensor<4xf64>) {
  // expected-error @+1 {{all of {lhs, rhs, result} have same element type}}
  %0 = dlvm.add %a, %b : tensor<4xf32>, tensor<4xf64>
  return
}

// -----

func.func @exp_int(%a: tensor<4xi32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = dlvm.exp %a : tensor<4xi32>
  return
}

// -----

func.func @pow_int(%a: tensor<4xi32>) {
  // expected-error @+1 {{must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = dlvm.pow %a, %a : tensor<4xi32>, tensor<4xi32>
  return
}

// -----

func.func @and_float(%a: tensor<4xf32>) {
  // expected-error @+1 {{must be ranked tensor of integer (signless, ui8, ui16, ui32 or ui64) values}}
  %0 = dlvm.and %a, %a : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @unranked(%a: tensor<*xf32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor}}
  %0 = "dlvm.neg"(%a) : (tensor<*xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @wrong_result_type(%a: tensor<4xf32>, %b: tensor<1xf32>) {
  // expected-error @+2 {{'dlvm.add' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<1xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = "dlvm.add"(%a, %b) : (tensor<4xf32>, tensor<1xf32>) -> tensor<1xf32>
  return
}

// -----

func.func @cmp_elements(%a: tensor<4xf32>, %b: tensor<4xi32>) {
  // expected-error @+1 {{all of {lhs, rhs} have same element type}}
  %0 = dlvm.cmp lt, %a, %b : tensor<4xf32>, tensor<4xi32>
  return
}

// -----

func.func @select_shapes(%m: tensor<3xi1>, %a: tensor<4xf32>) {
  // expected-error @+1 {{operand shapes are not broadcast-compatible: [3] and [4]}}
  %0 = dlvm.select %m, %a, %a : tensor<3xi1>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @dot_contraction(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{contraction dimensions do not match for matrix x matrix: 'tensor<2x3xf32>' and 'tensor<4x5xf32>'}}
  %0 = dlvm.dot %a, %b : tensor<2x3xf32>, tensor<4x5xf32>
  return
}

// -----

func.func @dot_vector(%a: tensor<3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{contraction dimensions do not match for vector . vector}}
  %0 = dlvm.dot %a, %b : tensor<3xf32>, tensor<4xf32>
  return
}

// -----

func.func @dot_matvec(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{contraction dimensions do not match for matrix x vector}}
  %0 = dlvm.dot %a, %b : tensor<2x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @dot_vecmat(%a: tensor<2xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{contraction dimensions do not match for vector x matrix}}
  %0 = dlvm.dot %a, %b : tensor<2xf32>, tensor<4x3xf32>
  return
}

// -----

func.func @dot_batch(%a: tensor<2x2x3xf32>, %b: tensor<5x3x4xf32>) {
  // expected-error @+1 {{batch dimensions differ: 'tensor<2x2x3xf32>' and 'tensor<5x3x4xf32>'}}
  %0 = dlvm.dot %a, %b : tensor<2x2x3xf32>, tensor<5x3x4xf32>
  return
}

// -----

func.func @dot_ranks(%a: tensor<f32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{unsupported operand ranks 0 and 1}}
  %0 = dlvm.dot %a, %b : tensor<f32>, tensor<3xf32>
  return
}

// -----

func.func @transpose_length(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{permutation [0] has 1 entries but the operand has rank 2}}
  %0 = dlvm.transpose %a perm [0] : tensor<2x3xf32>
  return
}

// -----

func.func @transpose_repeat(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{permutation entry 0 is listed twice}}
  %0 = dlvm.transpose %a perm [0, 0] : tensor<2x3xf32>
  return
}

// -----

func.func @transpose_range(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{permutation entry 2 is out of range for an operand of rank 2}}
  %0 = dlvm.transpose %a perm [0, 2] : tensor<2x3xf32>
  return
}

// -----

func.func @reverse_range(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{reversed dimension 2 is out of range for an operand of rank 2}}
  %0 = dlvm.reverse %a dims [2] : tensor<2x3xf32>
  return
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 2 is out of range for operands of rank 2}}
  %0 = dlvm.concatenate %a, %a axis 2 : tensor<2x3xf32>, tensor<2x3xf32>
  return
}

// -----

func.func @concat_shapes(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) {
  // expected-error @+1 {{operand 1 has shape [3, 3] but operand 0 has [2, 3] (sizes must agree except along axis 1)}}
  %0 = dlvm.concatenate %a, %b axis 1 : tensor<2x3xf32>, tensor<3x3xf32>
  return
}

// -----

func.func @concat_elements(%a: tensor<2x3xf32>, %b: tensor<2x3xf64>) {
  // expected-error @+1 {{operand 1 has element type 'f64' but operand 0 has 'f32'}}
  %0 = dlvm.concatenate %a, %b axis 1 : tensor<2x3xf32>, tensor<2x3xf64>
  return
}

// -----

func.func @concat_ranks(%a: tensor<2x3xf32>, %b: tensor<6xf32>) {
  // expected-error @+1 {{operand 1 has rank 1 but operand 0 has rank 2}}
  %0 = dlvm.concatenate %a, %b axis 0 : tensor<2x3xf32>, tensor<6xf32>
  return
}

// -----

func.func @concat_none() {
  // expected-error @+2 {{expected at least one operand}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = "dlvm.concatenate"() {axis = 0 : i64} : () -> tensor<2xf32>
  return
}

// -----

func.func @pad_interior(%a: tensor<4x8xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{dimension 1: interior padding -1 is negative}}
  %0 = dlvm.pad %a, %s low [0, 0] high [0, 0] interior [0, -1] : tensor<4x8xf32>, tensor<f32>
  return
}

// -----

func.func @pad_crops_too_much(%a: tensor<4x8xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{dimension 0: the padded size -1 is negative (more is cropped than there is)}}
  %0 = dlvm.pad %a, %s low [-3, 0] high [-2, 0] interior [0, 0] : tensor<4x8xf32>, tensor<f32>
  return
}

// -----

func.func @pad_overflow(%a: tensor<4x8xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{dimension 1: the padded size does not fit in 62 bits}}
  %0 = dlvm.pad %a, %s low [0, 1] high [0, 1] interior [0, 9223372036854775807] : tensor<4x8xf32>, tensor<f32>
  return
}

// -----

func.func @pad_value(%a: tensor<4x8xf32>, %s: tensor<1xf32>) {
  // expected-error @+1 {{the padding value must be a rank-0 tensor, got 'tensor<1xf32>'}}
  %0 = dlvm.pad %a, %s low [0, 0] high [0, 0] interior [0, 0] : tensor<4x8xf32>, tensor<1xf32>
  return
}

// -----

func.func @pad_count(%a: tensor<4x8xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{expected 2 low, high and interior paddings (one per dimension), got 1, 2 and 2}}
  %0 = dlvm.pad %a, %s low [0] high [0, 0] interior [0, 0] : tensor<4x8xf32>, tensor<f32>
  return
}

// -----

func.func @slice_count(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{expected 2 offsets, sizes and strides (one per dimension), got 1, 2 and 2}}
  %0 = dlvm.slice %a offsets [0] sizes [2, 2] : tensor<4x8xf32>
  return
}

// -----

func.func @slice_bounds(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{dimension 1: the slice reads index 9 but the operand's size is 8}}
  %0 = dlvm.slice %a offsets [0, 6] sizes [2, 4] : tensor<4x8xf32>
  return
}

// -----

func.func @slice_stride(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{dimension 0: offsets and sizes must be non-negative and strides positive}}
  %0 = dlvm.slice %a offsets [0, 0] sizes [2, 2] strides [0, 1] : tensor<4x8xf32>
  return
}

// -----

func.func @reshape_count(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{cannot reshape 'tensor<4x8xf32>' (32 elements) to [5, 6] (30 elements)}}
  %0 = dlvm.reshape %a to [5, 6] : tensor<4x8xf32>
  return
}

// -----

func.func @reshape_negative(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{target shape [-1, 32] has a negative dimension}}
  %0 = dlvm.reshape %a to [-1, 32] : tensor<4x8xf32>
  return
}

// -----

func.func @pad_shape_range(%a: tensor<4xf32>) {
  // expected-error @+1 {{cannot insert a unit dimension at 2 into a tensor of rank 1 (expected 0 to 1)}}
  %0 = dlvm.pad_shape %a at 2 : tensor<4xf32>
  return
}

// -----

func.func @squeeze_size(%a: tensor<4x1xf32>) {
  // expected-error @+1 {{dimension 0 has size 4; only a unit dimension can be squeezed}}
  %0 = dlvm.squeeze_shape %a at 0 : tensor<4x1xf32>
  return
}

// -----

func.func @squeeze_range(%a: tensor<4x1xf32>) {
  // expected-error @+1 {{dimension 2 is out of range for a tensor of rank 2}}
  %0 = dlvm.squeeze_shape %a at 2 : tensor<4x1xf32>
  return
}

// -----

func.func @broadcast_to(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{cannot broadcast 'tensor<2x3xf32>' to [4, 3]}}
  %0 = dlvm.broadcast_to %a to [4, 3] : tensor<2x3xf32>
  return
}

// -----

func.func @reduce_dims(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{reduced dimension 2 is out of range for an operand of rank 2}}
  %0 = dlvm.reduce add %a dims [2] : tensor<2x3xf32>
  return
}

// -----

func.func @reduce_dims_twice(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{reduced dimension 1 is listed twice}}
  %0 = dlvm.reduce add %a dims [1, 1] : tensor<2x3xf32>
  return
}

// -----

func.func @reduce_and_float(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'and' needs integer or i1 elements, got 'f32'}}
  %0 = dlvm.reduce and %a dims [1] : tensor<2x3xf32>
  return
}

// -----

func.func @reduce_mean_int(%a: tensor<2x3xi32>) {
  // expected-error @+1 {{'mean' needs float elements, got 'i32'}}
  %0 = dlvm.reduce mean %a dims [1] : tensor<2x3xi32>
  return
}

// -----

func.func @reduce_init(%a: tensor<2x3xf32>, %i: tensor<1xf32>) {
  // expected-error @+1 {{init must be a rank-0 tensor of 'f32', got 'tensor<1xf32>'}}
  %0 = dlvm.reduce add %a init %i dims [1] : tensor<2x3xf32>, tensor<1xf32>
  return
}

// -----

func.func @scan_dim(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{dimension 2 is out of range for an operand of rank 2}}
  %0 = dlvm.scan add %a dim 2 : tensor<2x3xf32>
  return
}

// -----

func.func @scan_mean(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'mean' is not a valid combinator here}}
  %0 = dlvm.scan mean %a dim 1 : tensor<2x3xf32>
  return
}

// -----

func.func @window_count(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{expected 2 window sizes and strides (one per dimension), got 1 and 2}}
  %0 = dlvm.reduce_window max %a window [2] strides [1, 1] padding none : tensor<2x3xf32>
  return
}

// -----

func.func @window_too_big(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{window size 4 exceeds dimension 1 of size 3 with padding none}}
  %0 = dlvm.reduce_window max %a window [1, 4] strides [1, 1] padding none : tensor<2x3xf32>
  return
}

// -----

func.func @window_positive(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{window sizes and strides must be positive}}
  %0 = dlvm.reduce_window max %a window [1, 1] strides [1, 0] padding half : tensor<2x3xf32>
  return
}

// -----

func.func @softmax_axis(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 2 is out of range for an operand of rank 2}}
  %0 = dlvm.softmax %a axis 2 : tensor<2x3xf32>
  return
}

// -----

func.func @log_softmax_axis(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 5 is out of range for an operand of rank 2}}
  %0 = dlvm.log_softmax %a axis 5 : tensor<2x3xf32>
  return
}

// -----

func.func @conv_rank(%x: tensor<2x3xf32>, %k: tensor<2x3xf32>) {
  // expected-error @+1 {{expected input (N x C x spatial...) and kernel (O x C/groups x window...) of equal rank >= 3}}
  %0 = dlvm.convolve %x, %k : tensor<2x3xf32>, tensor<2x3xf32>
  return
}

// -----

func.func @conv_channels(%x: tensor<2x3x8x8xf32>, %k: tensor<4x2x3x3xf32>) {
  // expected-error @+1 {{channel mismatch: input has 3 channels, kernel expects 2 x 1 group(s) with 4 output channels}}
  %0 = dlvm.convolve %x, %k : tensor<2x3x8x8xf32>, tensor<4x2x3x3xf32>
  return
}

// -----

func.func @conv_padding(%x: tensor<2x3x8x8xf32>, %k: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{expected 4 padding values (low and high per spatial dimension), got 2}}
  %0 = dlvm.convolve %x, %k padding [1, 1] : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>
  return
}

// -----

func.func @conv_strides(%x: tensor<2x3x8x8xf32>, %k: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{expected 2 strides and dilations (one per spatial dimension)}}
  %0 = dlvm.convolve %x, %k strides [1] : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>
  return
}

// -----

func.func @conv_window(%x: tensor<2x3x2x2xf32>, %k: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{spatial dimension 0: the dilated window (3) is larger than the padded, dilated input (2)}}
  %0 = dlvm.convolve %x, %k : tensor<2x3x2x2xf32>, tensor<4x3x3x3xf32>
  return
}

// -----

func.func @conv_groups(%x: tensor<2x4x8x8xf32>, %k: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{groups must be positive, got 0}}
  %0 = dlvm.convolve %x, %k groups 0 : tensor<2x4x8x8xf32>, tensor<4x4x3x3xf32>
  return
}

// -----

func.func @conv_dilation(%x: tensor<2x4x8x8xf32>, %k: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{strides and dilations must be positive}}
  %0 = dlvm.convolve %x, %k rhs_dilation [0, 1] : tensor<2x4x8x8xf32>, tensor<4x4x3x3xf32>
  return
}

// -----

func.func @constant_type() {
  // expected-error @+1 {{result #0 must be ranked tensor}}
  %0 = "dlvm.constant"() {value = dense<1.0> : vector<2xf32>} : () -> vector<2xf32>
  return
}

// -----

func.func @bitcast_width(%a: tensor<4xf32>) {
  // expected-error @+1 {{cannot bitcast 'f32' (32 bits) to 'i16' (16 bits): widths must match}}
  %0 = dlvm.bitcast %a to i16 : tensor<4xf32>
  return
}

// -----

func.func @random_bounds() {
  // expected-error @+1 {{expected low < high, got 1.000000e+00 and 0.000000e+00}}
  %0 = dlvm.random [2] from 1.0 upto 0.0 seed 0 : f32
  return
}

// -----

func.func @random_shape() {
  // expected-error @+1 {{shape [-2] has a negative dimension}}
  %0 = dlvm.random [-2] from 0.0 upto 1.0 seed 0 : f32
  return
}

// -----

func.func @random_int() {
  // expected-error @+1 {{attribute 'dtype' failed to satisfy constraint}}
  %0 = dlvm.random [2] from 0.0 upto 1.0 seed 0 : i32
  return
}

// -----

func.func @cast_type(%a: tensor<4xf32>) {
  // expected-error @+1 {{attribute 'dtype' failed to satisfy constraint}}
  %0 = dlvm.cast %a to index : tensor<4xf32>
  return
}

// -----
// Type inference runs while an op is parsed, before its attributes are
// verified: out-of-range attributes and overflowing sizes are located errors
// (never a crash, never a type with a negative or overflowing size).

func.func @squeeze_negative(%a: tensor<4x1xf32>) {
  // expected-error @+1 {{dimension -2 is out of range for a tensor of rank 2}}
  %0 = dlvm.squeeze_shape %a at -2 : tensor<4x1xf32>
  return
}

// -----

func.func @squeeze_dynamic(%a: tensor<4x?xf32>) {
  // expected-error @+1 {{dimension 1 has size ?; only a unit dimension can be squeezed}}
  %0 = dlvm.squeeze_shape %a at 1 : tensor<4x?xf32>
  return
}

// -----

func.func @pad_shape_negative(%a: tensor<4xf32>) {
  // expected-error @+1 {{cannot insert a unit dimension at -1 into a tensor of rank 1 (expected 0 to 1)}}
  %0 = dlvm.pad_shape %a at -1 : tensor<4xf32>
  return
}

// -----

func.func @concatenate_negative_axis(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{axis -2 is out of range for operands of rank 2}}
  %0 = dlvm.concatenate %a, %a axis -2 : tensor<2x3xf32>, tensor<2x3xf32>
  return
}

// -----

func.func @concatenate_overflow(%a: tensor<9223372036854775807xf32>) {
  // expected-error @+1 {{the concatenated size along axis 0 overflows a 64-bit integer}}
  %0 = dlvm.concatenate %a, %a axis 0 : tensor<9223372036854775807xf32>, tensor<9223372036854775807xf32>
  return
}

// -----

func.func @concatenate_dynamic_other_dim(%a: tensor<3x?xf32>, %b: tensor<3x4xf32>) {
  // expected-error @+1 {{operand 1 has shape [3, 4] but operand 0 has [3, ?] (sizes must agree except along axis 0)}}
  %0 = dlvm.concatenate %a, %b axis 0 : tensor<3x?xf32>, tensor<3x4xf32>
  return
}

// -----

func.func @broadcast_negative(%s: tensor<f32>) {
  // expected-error @+1 {{target shape [-6, 10] has a negative dimension}}
  %0 = dlvm.broadcast_to %s to [-6, 10] : tensor<f32>
  return
}

// -----

func.func @broadcast_overflow(%s: tensor<f32>) {
  // expected-error @+1 {{target shape [4611686018427387904, 4] has more elements than fit in a 64-bit integer}}
  %0 = dlvm.broadcast_to %s to [4611686018427387904, 4] : tensor<f32>
  return
}

// -----

func.func @broadcast_generic_negative(%a: tensor<4xf32>) {
  // expected-error @+2 {{target shape [-4] has a negative dimension}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = "dlvm.broadcast_to"(%a) <{shape = array<i64: -4>}> : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @reshape_dynamic(%a: tensor<?xf32>) {
  // expected-error @+1 {{cannot reshape the dynamically shaped 'tensor<?xf32>': its element count is unknown}}
  %0 = dlvm.reshape %a to [4] : tensor<?xf32>
  return
}

// -----

func.func @reshape_overflow(%a: tensor<0xf32>) {
  // expected-error @+1 {{target shape [4611686018427387904, 4] has more elements than fit in a 64-bit integer}}
  %0 = dlvm.reshape %a to [4611686018427387904, 4] : tensor<0xf32>
  return
}

// -----

func.func @slice_stride_overflow(%a: tensor<4xf32>) {
  // expected-error @+1 {{dimension 0: the slice reads index > 2^63 - 1 but the operand's size is 4}}
  %0 = dlvm.slice %a offsets [1] sizes [3] strides [4611686018427387904] : tensor<4xf32>
  return
}

// -----

func.func @slice_offset_overflow(%a: tensor<4xf32>) {
  // expected-error @+1 {{dimension 0: the slice reads index > 2^63 - 1 but the operand's size is 4}}
  %0 = dlvm.slice %a offsets [9223372036854775807] sizes [2] : tensor<4xf32>
  return
}

// -----

func.func @slice_empty_past_end(%a: tensor<4xf32>) {
  // expected-error @+1 {{dimension 0: offset 5 is past the end of the operand's size 4}}
  %0 = dlvm.slice %a offsets [5] sizes [0] : tensor<4xf32>
  return
}

// -----

func.func @slice_dynamic(%a: tensor<?xf32>) {
  // expected-error @+1 {{dimension 0 of the operand is dynamic: the slice cannot be checked to be in bounds}}
  %0 = dlvm.slice %a offsets [0] sizes [2] : tensor<?xf32>
  return
}

// -----

func.func @reduce_window_overflow(%a: tensor<4xf32>) {
  // expected-error @+1 {{dimension 0: the window size 9223372036854775807 overflows a 64-bit size when padded}}
  %0 = dlvm.reduce_window max %a window [9223372036854775807] strides [1] padding full : tensor<4xf32>
  return
}

// -----

func.func @reduce_window_dynamic_none(%a: tensor<?xf32>) {
  // expected-error @+1 {{dimension 0 is dynamic: a window of 2 cannot be checked to fit with padding none}}
  %0 = dlvm.reduce_window max %a window [2] strides [2] padding none : tensor<?xf32>
  return
}

// -----

func.func @convolve_padding_overflow(%x: tensor<1x2x5x5xf32>, %k: tensor<4x2x3x3xf32>) {
  // expected-error @+1 {{spatial dimension 0: the padded, dilated input or the dilated window overflows a 64-bit size}}
  %0 = dlvm.convolve %x, %k padding [9223372036854775807, 9223372036854775807, 0, 0] : tensor<1x2x5x5xf32>, tensor<4x2x3x3xf32>
  return
}

// -----

func.func @convolve_dilation_overflow(%x: tensor<1x2x5x5xf32>, %k: tensor<4x2x3x3xf32>) {
  // expected-error @+1 {{spatial dimension 0: the padded, dilated input or the dilated window overflows a 64-bit size}}
  %0 = dlvm.convolve %x, %k rhs_dilation [9223372036854775807, 1] : tensor<1x2x5x5xf32>, tensor<4x2x3x3xf32>
  return
}

// -----

func.func @convolve_groups_overflow(%x: tensor<1x0x5x5xf32>, %k: tensor<0x1099511627776x3x3xf32>) {
  // expected-error @+1 {{channel mismatch: input has 0 channels, kernel expects 1099511627776 x 1099511627776 group(s)}}
  %0 = dlvm.convolve %x, %k groups 1099511627776 : tensor<1x0x5x5xf32>, tensor<0x1099511627776x3x3xf32>
  return
}

// -----

func.func @convolve_empty_dilated_input(%x: tensor<1x2x0x0xf32>, %k: tensor<4x2x3x3xf32>) {
  // expected-error @+1 {{spatial dimension 0: the dilated window (3) is larger than the padded, dilated input (0)}}
  %0 = dlvm.convolve %x, %k lhs_dilation [3, 3] : tensor<1x2x0x0xf32>, tensor<4x2x3x3xf32>
  return
}

// -----

func.func @convolve_dynamic_channels(%x: tensor<1x?x5x5xf32>, %k: tensor<4x2x3x3xf32>) {
  // expected-error @+1 {{only the batch dimension may be dynamic, got 'tensor<1x?x5x5xf32>' and 'tensor<4x2x3x3xf32>'}}
  %0 = dlvm.convolve %x, %k : tensor<1x?x5x5xf32>, tensor<4x2x3x3xf32>
  return
}

// -----

func.func @bitcast_to_index(%a: tensor<4xf32>) {
  // expected-error @+1 {{attribute 'dtype' failed to satisfy constraint: expected f16, bf16, f32, f64, a signless integer type or ui8/ui16/ui32/ui64, got 'index'}}
  %0 = dlvm.bitcast %a to index : tensor<4xf32>
  return
}

// -----

func.func @bitcast_from_index(%a: tensor<4xindex>) {
  // expected-error @+1 {{cannot bitcast elements of type 'index'}}
  %0 = dlvm.bitcast %a to i64 : tensor<4xindex>
  return
}

// -----

func.func @cast_to_tensor(%a: tensor<4xf32>) {
  // expected-error @+1 {{attribute 'dtype' failed to satisfy constraint: expected f16, bf16, f32, f64, a signless integer type or ui8/ui16/ui32/ui64, got 'tensor<f32>'}}
  %0 = dlvm.cast %a to tensor<f32> : tensor<4xf32>
  return
}

// -----

func.func @random_tensor_dtype() {
  // expected-error @+1 {{attribute 'dtype' failed to satisfy constraint: expected f16, bf16, f32 or f64, got 'tensor<f32>'}}
  %0 = dlvm.random [2] from 0.0 upto 1.0 seed 0 : tensor<f32>
  return
}

// -----

func.func @random_overflow() {
  // expected-error @+1 {{shape [4611686018427387904, 4] has more elements than fit in a 64-bit integer}}
  %0 = dlvm.random [4611686018427387904, 4] from 0.0 upto 1.0 seed 0 : f32
  return
}

// -----

func.func @reduce_init_not_a_tensor(%a: tensor<3x4xf32>, %x: f32) {
  // expected-error @+1 {{operand #1 must be a ranked tensor, got 'f32'}}
  %0 = dlvm.reduce add %a init %x dims [0] : tensor<3x4xf32>, f32
  return
}

// -----

func.func @add_result_overflow(%a: tensor<4294967296x1xf32>, %b: tensor<1x4294967296xf32>) {
  // expected-error @+1 {{result shape [4294967296, 4294967296] has more elements than fit in a 64-bit integer}}
  %0 = dlvm.add %a, %b : tensor<4294967296x1xf32>, tensor<1x4294967296xf32>
  return
}

// -----

func.func @dot_result_overflow(%a: tensor<4294967296x1xf32>, %b: tensor<1x4294967296xf32>) {
  // expected-error @+1 {{result shape [4294967296, 4294967296] has more elements than fit in a 64-bit integer}}
  %0 = dlvm.dot %a, %b : tensor<4294967296x1xf32>, tensor<1x4294967296xf32>
  return
}

// -----

func.func @element_count_overflow(%a: tensor<9223372036854775807x2xf32>) {
  // expected-error @+1 {{'dlvm.neg' op operand #0 has type 'tensor<9223372036854775807x2xf32>', whose element count overflows a 64-bit integer}}
  %0 = dlvm.neg %a : tensor<9223372036854775807x2xf32>
  return
}

// -----

func.func @dynamic_slice_indices(%x: tensor<4x8xf32>, %t: tensor<i32>) {
  // expected-error @+1 {{expected 2 start indices (one per dimension), got 1}}
  %0 = dlvm.dynamic_slice %x at [%t] sizes [1, 8] : tensor<4x8xf32>, tensor<i32>
  return
}

// -----

func.func @dynamic_slice_size(%x: tensor<4x8xf32>, %t: tensor<i32>) {
  // expected-error @+1 {{dimension 1: size 9 must be between 0 and the operand's size 8}}
  %0 = dlvm.dynamic_slice %x at [%t, %t] sizes [1, 9] : tensor<4x8xf32>, tensor<i32>, tensor<i32>
  return
}

// -----

func.func @dynamic_slice_index_rank(%x: tensor<4xf32>, %t: tensor<2xi32>) {
  // expected-error @+1 {{start index #0 must be a rank-0 integer tensor, got 'tensor<2xi32>'}}
  %0 = dlvm.dynamic_slice %x at [%t] sizes [1] : tensor<4xf32>, tensor<2xi32>
  return
}

// -----

func.func @dynamic_update_slice_size(%x: tensor<4x8xf32>, %u: tensor<5x1xf32>, %t: tensor<i32>) {
  // expected-error @+1 {{dimension 0: the update's size 5 exceeds the operand's 4}}
  %0 = dlvm.dynamic_update_slice %x, %u at [%t, %t] : tensor<4x8xf32>, tensor<5x1xf32>, tensor<i32>, tensor<i32>
  return
}

// -----

func.func @iota_dim() {
  // expected-error @+1 {{dim 2 is not a dimension of 'tensor<4x8xi32>'}}
  %0 = dlvm.iota dim 2 : tensor<4x8xi32>
  return
}

// -----

func.func @argmax_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{expected a result of shape [4], got 'tensor<8xi32>'}}
  %0 = dlvm.argmax %x axis 1 : tensor<4x8xf32> -> tensor<8xi32>
  return
}

// -----

func.func @argmin_axis(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{axis 2 is not a dimension of 'tensor<4x8xf32>'}}
  %0 = dlvm.argmin %x axis 2 : tensor<4x8xf32> -> tensor<4xi32>
  return
}

// -----

func.func @is_finite_int(%x: tensor<4xi32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = dlvm.is_finite %x : tensor<4xi32>
  return
}

// -----

func.func @gather_collapsed(%x: tensor<10x4xf32>, %i: tensor<3xi32>) {
  // expected-error @+1 {{collapsed dimension 0 has slice size 2, expected at most 1}}
  %0 = dlvm.gather %x[%i] offset_dims [1] collapsed_slice_dims [0] start_index_map [0] index_vector_dim 1 slice_sizes [2, 4] : tensor<10x4xf32>, tensor<3xi32>
  return
}

// -----

func.func @gather_offsets(%x: tensor<10x4xf32>, %i: tensor<3xi32>) {
  // expected-error @+1 {{expected 1 offset_dims (the uncollapsed operand dimensions), got 2}}
  %0 = dlvm.gather %x[%i] offset_dims [1, 2] collapsed_slice_dims [0] start_index_map [0] index_vector_dim 1 slice_sizes [1, 4] : tensor<10x4xf32>, tensor<3xi32>
  return
}

// -----

func.func @scatter_batch(%x: tensor<10x4xf32>, %i: tensor<3xi32>, %u: tensor<2x4xf32>) {
  // expected-error @+1 {{the update dimensions outside the window [2] must be those of the indices without index_vector_dim [3]}}
  %0 = dlvm.scatter add %x[%i], %u update_window_dims [1] inserted_window_dims [0] scatter_dims_to_operand_dims [0] index_vector_dim 1 : tensor<10x4xf32>, tensor<3xi32>, tensor<2x4xf32>
  return
}

// -----

func.func @dot_general_counts(%x: tensor<2x3xf32>, %y: tensor<3x2xf32>) {
  // expected-error @+1 {{lhs and rhs have different numbers of contracting dimensions (1 and 2)}}
  %0 = dlvm.dot_general %x, %y batch [] x [] contract [1] x [0, 1] : tensor<2x3xf32>, tensor<3x2xf32>
  return
}

// -----

func.func @dot_general_range(%x: tensor<2x3xf32>, %y: tensor<3x2xf32>) {
  // expected-error @+1 {{lhs batch and contracting dimensions has 2, not in [0, 2)}}
  %0 = dlvm.dot_general %x, %y batch [] x [] contract [2] x [0] : tensor<2x3xf32>, tensor<3x2xf32>
  return
}

// -----

func.func @dot_general_repeat(%x: tensor<3x3xf32>, %y: tensor<3x3xf32>) {
  // expected-error @+1 {{rhs batch and contracting dimensions must be without repeats}}
  %0 = dlvm.dot_general %x, %y batch [0] x [1] contract [1] x [1] : tensor<3x3xf32>, tensor<3x3xf32>
  return
}

// -----

func.func @dot_general_sizes(%x: tensor<2x3xf32>, %y: tensor<4x2xf32>) {
  // expected-error @+1 {{contracting dimensions differ in size: lhs dimension 1 has 3, rhs dimension 0 has 4}}
  %0 = dlvm.dot_general %x, %y batch [] x [] contract [1] x [0] : tensor<2x3xf32>, tensor<4x2xf32>
  return
}

// -----

func.func @dot_general_types(%x: tensor<2x3xf32>, %y: tensor<3x2xf64>) {
  // expected-error @+1 {{all of {lhs, rhs, result} have same element type}}
  %0 = dlvm.dot_general %x, %y batch [] x [] contract [1] x [0] : tensor<2x3xf32>, tensor<3x2xf64>
  return
}

// -----

func.func @sort_dim(%x: tensor<4x5xf32>) {
  // expected-error @+1 {{dim 2 is out of range for 'tensor<4x5xf32>'}}
  %0 = dlvm.sort %x dim 2 : tensor<4x5xf32>
  return
}

// -----

func.func @sort_shapes(%x: tensor<4x5xf32>, %y: tensor<5x4xf32>) {
  // expected-error @+1 {{every operand must have the keys' shape: 'tensor<5x4xf32>' and 'tensor<4x5xf32>'}}
  %0:2 = dlvm.sort %x, %y dim 0 : tensor<4x5xf32>, tensor<5x4xf32>
  return
}

// -----

func.func @top_k_k(%x: tensor<4x5xf32>) {
  // expected-error @+1 {{k = 6 is not in [0, 5] (the last dimension of 'tensor<4x5xf32>')}}
  %0:2 = dlvm.top_k %x k 6 : tensor<4x5xf32>
  return
}

// -----

func.func @top_k_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{expected an operand of rank 1 or more, got 'tensor<f32>'}}
  %0:2 = dlvm.top_k %x k 0 : tensor<f32>
  return
}

// -----

func.func @window_low_without_high(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{explicit padding needs both low and high}}
  %0 = dlvm.reduce_window max %x window [2, 2] strides [1, 1] padding none low [1, 1] : tensor<4x8xf32>
  return
}

// -----

func.func @window_explicit_with_half(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{explicit low/high padding goes with 'padding none'}}
  %0 = dlvm.reduce_window max %x window [2, 2] strides [1, 1] padding half low [1, 1] high [0, 0] : tensor<4x8xf32>
  return
}

// -----

func.func @window_dilation_zero(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{window_dilation values must be positive and at most 2^40, got 0}}
  %0 = dlvm.reduce_window max %x window [2, 2] strides [1, 1] padding none window_dilation [1, 0] : tensor<4x8xf32>
  return
}

// -----

func.func @window_dilated_too_wide(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{window size 2 exceeds dimension 0 of size 4 with padding none}}
  %0 = dlvm.reduce_window max %x window [2, 2] strides [1, 1] padding none window_dilation [4, 1] : tensor<4x8xf32>
  return
}

// -----

// dlvm-fuzz seed 1414: the interpreter raised numpy's "argmax of an empty sequence".
func.func @argmax_empty_axis(%x: tensor<0x8xf32>) {
  // expected-error @+1 {{'dlvm.argmax' op axis 0 is empty: there is no position of an extremum of 'tensor<0x8xf32>'}}
  %0 = dlvm.argmax %x axis 0 : tensor<0x8xf32> -> tensor<8xi32>
  return
}

// -----

// An empty result needs no extremum.
func.func @argmin_empty_result(%x: tensor<0x0xf32>) -> tensor<0xi32> {
  %0 = dlvm.argmin %x axis 0 : tensor<0x0xf32> -> tensor<0xi32>
  return %0 : tensor<0xi32>
}
