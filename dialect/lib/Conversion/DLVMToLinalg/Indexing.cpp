//===- Indexing.cpp - dlvm indexing ops to tensor and linalg ops ----------===//
//
// Ops that read or write at run-time positions: dynamic_slice and
// dynamic_update_slice (tensor slices at clamped starts), gather (a
// linalg.generic that reads the operand with tensor.extract) and scatter (an
// scf.for nest of tensor.extract / tensor.insert on a carried tensor).
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::dlvm;
using namespace mlir::dlvm::to_linalg;

namespace {

//===----------------------------------------------------------------------===//
// dynamic_slice, dynamic_update_slice
//===----------------------------------------------------------------------===//

/// The start offsets of a window of `sizes` at run-time indices (rank-0
/// integer tensors), clamped as XLA does: clamp(index, 0, dim - size).
SmallVector<OpFoldResult> clampedStarts(OpBuilder &b, Location loc, ValueRange indices,
                                        ArrayRef<int64_t> shape, ArrayRef<int64_t> sizes) {
  SmallVector<OpFoldResult> starts;
  for (auto [d, index] : llvm::enumerate(indices)) {
    Value scalar = tensor::ExtractOp::create(b, loc, index, ValueRange{});
    Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), scalar);
    Value high = indexConst(b, loc, shape[d] - sizes[d]);
    Value low = indexConst(b, loc, 0);
    i = arith::MinSIOp::create(b, loc, i, high);
    starts.push_back(arith::MaxSIOp::create(b, loc, i, low).getResult());
  }
  return starts;
}

struct DynamicSliceLowering : StaticOpLowering<DynamicSliceOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(DynamicSliceOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType t = tensorType(adaptor.getOperand());
    ArrayRef<int64_t> sizes = op.getSizes();
    SmallVector<OpFoldResult> starts =
        clampedStarts(rewriter, loc, adaptor.getStartIndices(), t.getShape(), sizes);
    rewriter.replaceOp(op, tensor::ExtractSliceOp::create(
                               rewriter, loc, cast<RankedTensorType>(op.getType()),
                               adaptor.getOperand(), starts, indexAttrs(rewriter, sizes),
                               unitStrides(rewriter, sizes.size())));
    return success();
  }
};

struct DynamicUpdateSliceLowering : StaticOpLowering<DynamicUpdateSliceOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(DynamicUpdateSliceOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType t = tensorType(adaptor.getOperand());
    ArrayRef<int64_t> sizes = tensorType(adaptor.getUpdate()).getShape();
    SmallVector<OpFoldResult> starts =
        clampedStarts(rewriter, loc, adaptor.getStartIndices(), t.getShape(), sizes);
    rewriter.replaceOp(op, tensor::InsertSliceOp::create(
                               rewriter, loc, adaptor.getUpdate(), adaptor.getOperand(),
                               starts, indexAttrs(rewriter, sizes),
                               unitStrides(rewriter, sizes.size())));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// gather, scatter
//===----------------------------------------------------------------------===//

/// The clamped window starts of one gather/scatter batch position: element k
/// of the start vector (read from `indices` at `batch` with k at
/// `indexVectorDim`) starts operand dimension `toOperand[k]`, clamped to
/// [0, dim - windowSize]; the other dimensions start at 0.
SmallVector<Value> gatherStarts(OpBuilder &b, Location loc, Value indices, ValueRange batch,
                                int64_t indexVectorDim, ArrayRef<int64_t> toOperand,
                                ArrayRef<int64_t> operandShape, ArrayRef<int64_t> windowSizes) {
  SmallVector<Value> starts(operandShape.size(), indexConst(b, loc, 0));
  int64_t indicesRank = tensorType(indices).getRank();
  for (auto [k, d] : llvm::enumerate(toOperand)) {
    SmallVector<Value> at(batch.begin(), batch.end());
    if (indexVectorDim < indicesRank)
      at.insert(at.begin() + indexVectorDim, indexConst(b, loc, k));
    Value raw = tensor::ExtractOp::create(b, loc, indices, at);
    Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
    i = arith::MinSIOp::create(b, loc, i, indexConst(b, loc, operandShape[d] - windowSizes[d]));
    starts[d] = arith::MaxSIOp::create(b, loc, i, indexConst(b, loc, 0));
  }
  return starts;
}

/// The operand position that the gather result / scatter update element at
/// `positions` reads / writes: `positions` split into batch dimensions and
/// the window dimensions `windowDims`; the window start of the batch position
/// (gatherStarts) plus the window offsets along the operand dimensions not in
/// `dropped` (collapsed / inserted, of window size 1).
SmallVector<Value> windowElement(OpBuilder &b, Location l, ValueRange positions,
                                 ArrayRef<int64_t> windowDims, ArrayRef<int64_t> dropped,
                                 Value indices, int64_t indexVectorDim,
                                 ArrayRef<int64_t> toOperand, ArrayRef<int64_t> operandShape,
                                 ArrayRef<int64_t> windowSizes) {
  SmallVector<Value> batch, window;
  for (auto [i, p] : llvm::enumerate(positions))
    (llvm::is_contained(windowDims, (int64_t)i) ? window : batch).push_back(p);
  SmallVector<Value> at =
      gatherStarts(b, l, indices, batch, indexVectorDim, toOperand, operandShape, windowSizes);
  auto next = window.begin();
  for (int64_t d = 0; d < (int64_t)operandShape.size(); ++d)
    if (!llvm::is_contained(dropped, d))
      at[d] = arith::AddIOp::create(b, l, at[d], *next++);
  return at;
}

/// A linalg.generic over the result: each element reads the operand at its
/// window start (read from the indices in the body) plus its window offset.
struct GatherLowering : StaticOpLowering<GatherOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(GatherOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto out = cast<RankedTensorType>(op.getType());
    Value operand = adaptor.getOperand(), indices = adaptor.getIndices();
    ArrayRef<int64_t> shape = tensorType(operand).getShape();
    ArrayRef<int64_t> offsetDims = op.getOffsetDims(), collapsed = op.getCollapsedSliceDims();
    Value result = buildElementwise(
        rewriter, loc, out, ValueRange{}, [&](OpBuilder &b, Location l, ValueRange) -> Value {
          SmallVector<Value> positions;
          for (int64_t i = 0; i < out.getRank(); ++i)
            positions.push_back(linalg::IndexOp::create(b, l, i));
          SmallVector<Value> at =
              windowElement(b, l, positions, offsetDims, collapsed, indices,
                            op.getIndexVectorDim(), op.getStartIndexMap(), shape,
                            op.getSliceSizes());
          return tensor::ExtractOp::create(b, l, operand, at);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// A loop nest over the updates (in row-major order, so a later update of
/// the same element is applied after an earlier one) combining each into the
/// operand element it reaches: tensor.extract / tensor.insert on a carried
/// tensor, which bufferizes in place.
struct ScatterLowering : StaticOpLowering<ScatterOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(ScatterOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value operand = adaptor.getOperand(), indices = adaptor.getIndices(),
          updates = adaptor.getUpdates();
    ArrayRef<int64_t> shape = tensorType(operand).getShape();
    RankedTensorType updatesType = tensorType(updates);
    ArrayRef<int64_t> windowDims = op.getUpdateWindowDims(), inserted = op.getInsertedWindowDims();
    // the window's size along each operand dimension (1 for the inserted ones)
    SmallVector<int64_t> windowSizes(shape.size(), 1);
    auto nextWindow = windowDims.begin();
    for (int64_t d = 0; d < (int64_t)shape.size(); ++d)
      if (!llvm::is_contained(inserted, d))
        windowSizes[d] = updatesType.getDimSize(*nextWindow++);
    ScatterKind kind = op.getKind();
    SmallVector<Value> lbs, ubs, steps;
    for (int64_t n : updatesType.getShape()) {
      lbs.push_back(indexConst(rewriter, loc, 0));
      ubs.push_back(indexConst(rewriter, loc, n));
      steps.push_back(indexConst(rewriter, loc, 1));
    }
    scf::LoopNest nest = scf::buildLoopNest(
        rewriter, loc, lbs, ubs, steps, ValueRange{operand},
        [&](OpBuilder &b, Location l, ValueRange ivs, ValueRange carried) -> scf::ValueVector {
          SmallVector<Value> at = windowElement(
              b, l, ivs, windowDims, inserted, indices, op.getIndexVectorDim(),
              op.getScatterDimsToOperandDims(), shape, windowSizes);
          Value update = tensor::ExtractOp::create(b, l, updates, ivs);
          Value value = update;
          if (kind != ScatterKind::replace) {
            Value current = tensor::ExtractOp::create(b, l, carried[0], at);
            ReductionKind combinator = kind == ScatterKind::add ? ReductionKind::add
                                       : kind == ScatterKind::max ? ReductionKind::max
                                                                  : ReductionKind::min;
            value = combine(b, l, combinator, current, update);
          }
          return {tensor::InsertOp::create(b, l, value, carried[0], at)};
        });
    rewriter.replaceOp(op, nest.results.empty() ? operand : nest.results[0]);
    return success();
  }
};

} // namespace

void mlir::dlvm::to_linalg::populateIndexingPatterns(
    RewritePatternSet &patterns) {
  patterns.add<DynamicSliceLowering, DynamicUpdateSliceLowering,
               GatherLowering, ScatterLowering>(patterns.getContext());
}
