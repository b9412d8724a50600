// The pack stage's convolution rewrites (docs/cpu.md, "Convolutions"): direct
// convolutions (conv_direct.py), strided ones by phases, kernel gradients along
// the filters or as lane-wise partial sums (conv_kernel_grad.py) and pooling windows that tile
// their input (pooling.py); direct-conv=false keeps the im2col path.
// RUN: dlvm-opt %s --dlvm-cpu-pipeline="stop-at=pack vector-bits=512 threads=2" | FileCheck %s
// RUN: dlvm-opt %s --dlvm-cpu-pipeline="stop-at=pack vector-bits=512 threads=2 direct-conv=false" | FileCheck %s --check-prefix=OFF

// The strided convolutions' input map (row stride 2 kept; see @conv_stride2 below).
// CHECK: #[[STRIDED:map[0-9]*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 * 2 + d5, d3 + d6)>

// A unit-stride 3x3 convolution: the filter re-laid out as [f, kh, kw, c] and one
// generic reading the input at the tap's offset; no im2col copy.
// CHECK-LABEL: func.func @dlvm_conv3x3
// CHECK: linalg.transpose {{.*}} permutation = [0, 2, 3, 1]
// CHECK: linalg.generic {indexing_maps = [#[[X:map[0-9]*]], #[[W:map[0-9]*]], #{{map[0-9]*}}]
// CHECK-SAME: ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
// CHECK: arith.mulf
// CHECK-NOT: tensor<2x64x3x3x32x32xf32>
// OFF-LABEL: func.func @dlvm_conv3x3
// OFF: tensor<2x64x3x3x32x32xf32>
func.func @conv3x3(%x: tensor<2x64x32x32xf32>, %k: tensor<64x64x3x3xf32>) -> tensor<2x64x32x32xf32> {
  %y = dlvm.convolve %x, %k padding [1, 1, 1, 1] : tensor<2x64x32x32xf32>, tensor<64x64x3x3xf32>
  return %y : tensor<2x64x32x32xf32>
}

// Stride 2: two convolutions, one per column phase of the input (every other
// column) with that phase's 3x2 and 3x1 taps, each reading rows 2*oh + kh (the
// row stride stays in the indexing map). One copy writes both phases, reading
// the input viewed as [n, c, h, 1, w/2, 2].
// CHECK-LABEL: func.func @dlvm_conv_stride2
// CHECK: tensor.expand_shape %arg0 {{.*}} into tensor<2x16x34x1x17x2xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<2x16x34x1x17x2xf32>) outs(%{{.*}} : tensor<1x2x2x16x34x17xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[STRIDED]], {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x16x33x17xf32>, tensor<32x3x2x16xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[STRIDED]], {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x16x33x16xf32>, tensor<32x3x1x16xf32>)
func.func @conv_stride2(%x: tensor<2x16x34x34xf32>, %k: tensor<32x16x3x3xf32>) -> tensor<2x32x16x16xf32> {
  %y = dlvm.convolve %x, %k strides [2, 2] : tensor<2x16x34x34xf32>, tensor<32x16x3x3xf32>
  return %y : tensor<2x32x16x16xf32>
}

// Padded by 1, an argument nothing else reads: one parallel task per image
// (conv_direct.py, PER_IMAGE_PADS) copies its image's phases from the unpadded
// input into the interior of a zeroed tensor whose left padding is rounded up to
// the stride (2 columns, one per phase), with no pad of the input, and convolves
// them; the phases swap places.
// CHECK-LABEL: func.func @dlvm_conv_stride2_padded
// CHECK-NOT: tensor.pad
// CHECK: scf.forall (%[[IMAGE:.*]]) in (2)
// CHECK: %[[PICTURE:.*]] = tensor.extract_slice %arg0[%[[IMAGE]], 0, 0, 0] [1, 16, 32, 32]
// CHECK-NOT: alloc_tensor
// CHECK: %[[ZEROS:.*]] = linalg.fill {{.*}} -> tensor<1x2x1x16x34x18xf32>
// CHECK: %[[WINDOW:.*]] = tensor.extract_slice %[[ZEROS]][0, 0, 0, 0, 1, 1] [1, 2, 1, 16, 32, 16]
// CHECK: tensor.expand_shape %[[PICTURE]] {{.*}} into tensor<1x16x32x1x16x2xf32>
// CHECK: linalg.generic {{.*}} outs(%[[WINDOW]] : tensor<1x2x1x16x32x16xf32>)
// CHECK: %[[PHASES:.*]] = tensor.insert_slice
// CHECK: tensor.extract_slice %[[PHASES]][0, 1, 0, 0, 0, 0] [1, 1, 1, 16, 33, 17]
// CHECK: tensor.extract_slice %[[PHASES]][0, 0, 0, 0, 0, 1] [1, 1, 1, 16, 33, 16]
// CHECK: tensor.parallel_insert_slice
func.func @conv_stride2_padded(%x: tensor<2x16x32x32xf32>, %k: tensor<32x16x3x3xf32>) -> tensor<2x32x16x16xf32> {
  %y = dlvm.convolve %x, %k strides [2, 2] padding [1, 1, 1, 1] : tensor<2x16x32x32xf32>, tensor<32x16x3x3xf32>
  return %y : tensor<2x32x16x16xf32>
}

// The kernel gradient's convolution (3x3 output, 32-wide filter rows): partial
// sums over 16 lanes, an explicit fma, then a sum over the lanes.
// CHECK-LABEL: func.func @dlvm_dk
// CHECK: tensor.expand_shape {{.*}} into tensor<2x8x32x2x16xf32>
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<8x8x3x3x16xf32>)
// CHECK: math.fma
// CHECK: linalg.generic {{.*}}["parallel", "parallel", "parallel", "parallel", "reduction"]{{.*}} outs(%{{.*}} : tensor<8x8x3x3xf32>)
func.func @seeded(%x: tensor<2x8x32x32xf32>, %k: tensor<8x8x3x3xf32>, %dy: tensor<2x8x32x32xf32>) -> tensor<f32> {
  %y = dlvm.convolve %x, %k padding [1, 1, 1, 1] : tensor<2x8x32x32xf32>, tensor<8x8x3x3xf32>
  %p = dlvm.mul %y, %dy : tensor<2x8x32x32xf32>, tensor<2x8x32x32xf32>
  %s = dlvm.reduce add %p dims [0, 1, 2, 3] : tensor<2x8x32x32xf32>
  return %s : tensor<f32>
}
func.func private @dk(tensor<2x8x32x32xf32>, tensor<8x8x3x3xf32>, tensor<2x8x32x32xf32>) -> tensor<8x8x3x3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @seeded wrt [1]>}

// With 32 filters (two vectors), the kernel gradient is computed along the
// filters: the cotangent transposed to [image, row, column, filter] once, one
// generic with an explicit fma into [channel, tap row, tap column, filter],
// transposed to the filter's layout.
// CHECK-LABEL: func.func @dlvm_dk32
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<2x8x8x32xf32>)
// CHECK: linalg.generic {{.*}}["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]{{.*}} outs(%{{.*}} : tensor<4x3x3x32xf32>) attrs = {dlvm.schedule_hint = "kernel-gradient-filters"}
// CHECK: math.fma
// CHECK-NOT: tensor<4x32x3x3x16xf32>
func.func @seeded32(%x: tensor<2x4x8x8xf32>, %k: tensor<32x4x3x3xf32>, %dy: tensor<2x32x8x8xf32>) -> tensor<f32> {
  %y = dlvm.convolve %x, %k padding [1, 1, 1, 1] : tensor<2x4x8x8xf32>, tensor<32x4x3x3xf32>
  %p = dlvm.mul %y, %dy : tensor<2x32x8x8xf32>, tensor<2x32x8x8xf32>
  %s = dlvm.reduce add %p dims [0, 1, 2, 3] : tensor<2x32x8x8xf32>
  return %s : tensor<f32>
}
func.func private @dk32(tensor<2x4x8x8xf32>, tensor<32x4x3x3xf32>, tensor<2x32x8x8xf32>) -> tensor<32x4x3x3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @seeded32 wrt [1]>}

// With 4 images on 2 threads, the images are split in two parts (a reshape of
// the padded input and of the transposed cotangent), each summed into its own
// partial gradient by a leading parallel loop; the transpose to the filter's
// layout adds the parts.
// CHECK-LABEL: func.func @dlvm_dk_parts
// CHECK: tensor.expand_shape {{.*}} into tensor<2x2x4x10x10xf32>
// CHECK: tensor.expand_shape {{.*}} into tensor<2x2x8x8x32xf32>
// CHECK: linalg.generic {{.*}}["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]{{.*}} outs(%{{.*}} : tensor<2x4x3x3x32xf32>) attrs = {dlvm.schedule_hint = "kernel-gradient-filters"}
// CHECK: math.fma
// CHECK: linalg.generic {{.*}}["parallel", "parallel", "parallel", "parallel", "reduction"]{{.*}} ins(%{{.*}} : tensor<2x4x3x3x32xf32>)
// CHECK: arith.addf
func.func @seeded_parts(%x: tensor<4x4x8x8xf32>, %k: tensor<32x4x3x3xf32>, %dy: tensor<4x32x8x8xf32>) -> tensor<f32> {
  %y = dlvm.convolve %x, %k padding [1, 1, 1, 1] : tensor<4x4x8x8xf32>, tensor<32x4x3x3xf32>
  %p = dlvm.mul %y, %dy : tensor<4x32x8x8xf32>, tensor<4x32x8x8xf32>
  %s = dlvm.reduce add %p dims [0, 1, 2, 3] : tensor<4x32x8x8xf32>
  return %s : tensor<f32>
}
func.func private @dk_parts(tensor<4x4x8x8xf32>, tensor<32x4x3x3xf32>, tensor<4x32x8x8xf32>) -> tensor<32x4x3x3xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @seeded_parts wrt [1]>}

// 2x2/2 max pooling reads its input reshaped to [n, 1, c, 1, oh, 2, ow, 2].
// CHECK-LABEL: func.func @dlvm_pool
// CHECK: tensor.expand_shape {{.*}} into tensor<2x1x8x1x16x2x16x2xf32>
// CHECK: arith.maximumf
func.func @pool(%x: tensor<2x8x32x32xf32>) -> tensor<2x8x16x16xf32> {
  %y = dlvm.reduce_window max %x window [1, 1, 2, 2] strides [1, 1, 2, 2] padding none : tensor<2x8x32x32xf32>
  return %y : tensor<2x8x16x16xf32>
}
