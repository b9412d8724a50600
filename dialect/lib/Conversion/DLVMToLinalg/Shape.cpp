//===- Shape.cpp - dlvm shape ops to tensor and linalg ops ----------------===//
//
// Ops that move elements without computing: transpose (linalg.transpose),
// reverse, concatenate and slice (tensor.insert_slice / extract_slice), pad,
// the reshapes (tensor.collapse_shape / expand_shape) and broadcast_to
// (linalg.broadcast).
//
//===----------------------------------------------------------------------===//

#include "Common.h"

using namespace mlir;
using namespace mlir::dlvm;
using namespace mlir::dlvm::to_linalg;

namespace {

struct TransposeLowering : StaticOpLowering<TransposeOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(TransposeOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    SmallVector<int64_t> perm = op.getPermutation();
    if (isIdentityPermutation(perm)) {
      rewriter.replaceOp(op, adaptor.getOperand());
      return success();
    }
    auto type = cast<RankedTensorType>(op.getType());
    Value init = emptyTensor(rewriter, op.getLoc(), type);
    rewriter.replaceOp(op, linalg::TransposeOp::create(rewriter, op.getLoc(),
                                                       adaptor.getOperand(),
                                                       init, perm)
                               ->getResult(0));
    return success();
  }
};

/// A generic that reads the operand at index (size - 1 - i) along reversed
/// dims with tensor.extract (a gather the vectorizer handles), not through an
/// input map `size - 1 - d`: upstream tiling asserts on a negative coefficient
/// in an indexing map, so such a generic could be neither tiled, threaded nor
/// vectorized.
struct ReverseLowering : StaticOpLowering<ReverseOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(ReverseOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    Value operand = adaptor.getOperand();
    Value result = buildElementwise(
        rewriter, op.getLoc(), type, ValueRange{},
        [&](OpBuilder &b, Location l, ValueRange) -> Value {
          SmallVector<Value> indices;
          for (int64_t d = 0; d < type.getRank(); ++d) {
            Value i = linalg::IndexOp::create(b, l, d);
            if (llvm::is_contained(op.getDims(), d)) {
              Value last = arith::ConstantIndexOp::create(
                  b, l, type.getDimSize(d) - 1);
              i = arith::SubIOp::create(b, l, last, i);
            }
            indices.push_back(i);
          }
          return tensor::ExtractOp::create(b, l, operand, indices);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// tensor.insert_slice of each operand into an empty result.
struct ConcatenateLowering : StaticOpLowering<ConcatenateOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(ConcatenateOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    int64_t axis = op.getAxis();
    if (adaptor.getOperands().size() == 1) {
      rewriter.replaceOp(op, adaptor.getOperands().front());
      return success();
    }
    Value result = emptyTensor(rewriter, loc, type);
    SmallVector<int64_t> offsets(type.getRank(), 0);
    for (Value v : adaptor.getOperands()) {
      ArrayRef<int64_t> sizes = tensorType(v).getShape();
      // Empty operands contribute nothing (and an insertion at the end of the
      // axis would be out of bounds for memref.subview after bufferization).
      if (tensorType(v).getNumElements() == 0)
        continue;
      result = tensor::InsertSliceOp::create(
          rewriter, loc, v, result, indexAttrs(rewriter, offsets),
          indexAttrs(rewriter, sizes), unitStrides(rewriter, type.getRank()));
      offsets[axis] += sizes[axis];
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct SliceLowering : StaticOpLowering<SliceOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(SliceOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op, tensor::ExtractSliceOp::create(
                rewriter, op.getLoc(), cast<RankedTensorType>(op.getType()),
                adaptor.getOperand(), indexAttrs(rewriter, op.getOffsets()),
                indexAttrs(rewriter, op.getSizes()),
                indexAttrs(rewriter, op.getStrideValues())));
    return success();
  }
};

/// pad: the result filled with the value, then the operand elements that land
/// inside it (a window of the operand) inserted with stride interior + 1.
struct PadLowering : StaticOpLowering<PadOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(PadOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    int64_t rank = type.getRank();
    Value value = tensor::ExtractOp::create(rewriter, loc, adaptor.getValue(), ValueRange{});
    Value result = filledTensor(rewriter, loc, type, value);
    SmallVector<int64_t> first, count, at, step;
    for (int64_t d = 0; d < rank; ++d) {
      PadOp::Kept k = op.kept(d);
      first.push_back(k.first);
      count.push_back(k.count);
      at.push_back(k.at);
      step.push_back(op.getInterior()[d] + 1);
    }
    if (llvm::any_of(count, [](int64_t c) { return c == 0; })) {
      rewriter.replaceOp(op, result);
      return success();
    }
    auto windowType = RankedTensorType::get(count, type.getElementType());
    Value window = tensor::ExtractSliceOp::create(
        rewriter, loc, windowType, adaptor.getOperand(), indexAttrs(rewriter, first),
        indexAttrs(rewriter, count), unitStrides(rewriter, rank));
    rewriter.replaceOp(op, tensor::InsertSliceOp::create(
                               rewriter, loc, window, result, indexAttrs(rewriter, at),
                               indexAttrs(rewriter, count), indexAttrs(rewriter, step)));
    return success();
  }
};

/// reshape, pad_shape and squeeze_shape: row-major reinterpretation through
/// tensor.collapse_shape / tensor.expand_shape.
template <typename OpT>
struct ReshapeLikeLowering : StaticOpLowering<OpT> {
  using StaticOpLowering<OpT>::StaticOpLowering;

  LogicalResult lower(OpT op, typename OpT::Adaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op,
                       reshapeTo(rewriter, op.getLoc(), adaptor.getOperand(),
                                 cast<RankedTensorType>(op.getType())));
    return success();
  }
};

/// Collapses away the broadcast unit dimensions, then linalg.broadcast adds
/// them back at the target sizes.
struct BroadcastToLowering : StaticOpLowering<BroadcastToOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(BroadcastToOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getOperand();
    RankedTensorType inType = tensorType(input);
    auto type = cast<RankedTensorType>(op.getType());
    SmallVector<int64_t> dims;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (inType.getRank() == 0 ||
          (inType.getDimSize(d) == 1 && type.getDimSize(d) != 1))
        dims.push_back(d);
    if (dims.empty()) {
      rewriter.replaceOp(op, input);
      return success();
    }
    if (inType.getRank() != 0) {
      SmallVector<int64_t> kept = dropDims(inType.getShape(), dims);
      input = tensor::CollapseShapeOp::create(
          rewriter, loc, RankedTensorType::get(kept, inType.getElementType()),
          input, dropUnitDimsReassociation(inType.getRank(), dims));
    }
    Value init = emptyTensor(rewriter, loc, type);
    rewriter.replaceOp(
        op, linalg::BroadcastOp::create(rewriter, loc, input, init, dims)
                ->getResult(0));
    return success();
  }
};

} // namespace

void mlir::dlvm::to_linalg::populateShapePatterns(RewritePatternSet &patterns) {
  patterns.add<TransposeLowering, ReverseLowering, ConcatenateLowering,
               SliceLowering, PadLowering, ReshapeLikeLowering<ReshapeOp>,
               ReshapeLikeLowering<PadShapeOp>,
               ReshapeLikeLowering<SqueezeShapeOp>, BroadcastToLowering>(
      patterns.getContext());
}
