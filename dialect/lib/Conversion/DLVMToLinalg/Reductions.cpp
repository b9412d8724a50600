//===- Reductions.cpp - dlvm reductions to linalg -------------------------===//
//
// Ops that combine elements along dimensions: reduce (linalg.reduce; mean
// divides the sum), scan (an scf.for over the scanned dimension), softmax and
// log_softmax (max, exp, sum), argmax and argmin (a linalg.generic carrying
// the best value and its index).
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::dlvm;
using namespace mlir::dlvm::to_linalg;

namespace {

/// An arith.constant holding the identity of `kind` on `t` (which must have
/// one: see identityAttr).
Value identityConst(OpBuilder &b, Location loc, ReductionKind kind, Type t) {
  return arith::ConstantOp::create(b, loc, identityAttr(b, kind, t));
}

/// linalg.reduce of `input` along `dims` into `resultType`, starting from the
/// scalar `init`.
Value buildReduce(OpBuilder &b, Location loc, ReductionKind kind, Value input,
                  ArrayRef<int64_t> dims, RankedTensorType resultType,
                  Value init) {
  Value acc = filledTensor(b, loc, resultType, init);
  SmallVector<int64_t> sorted(dims);
  llvm::sort(sorted);
  auto reduce = linalg::ReduceOp::create(
      b, loc, ValueRange{input}, ValueRange{acc}, sorted,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc,
                                combine(nb, nloc, kind, args[0], args[1]));
      });
  return reduce.getResult(0);
}

/// linalg.reduce starting from the combinator's identity or from `init`.
/// mean = sum / count (+ init when given).
struct ReduceLowering : StaticOpLowering<ReduceOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(ReduceOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ReductionKind kind = op.getKind();
    Value input = adaptor.getOperand(), init = adaptor.getInit();
    RankedTensorType inType = tensorType(input);
    auto type = cast<RankedTensorType>(op.getType());
    Type elt = type.getElementType();
    TypedAttr identity = identityAttr(rewriter, kind, elt);
    if (!identity)
      return rewriter.notifyMatchFailure(op, "combinator invalid for the type");
    bool mean = kind == ReductionKind::mean;
    ArrayRef<int64_t> dims = op.getDims();

    if (dims.empty()) {
      // Nothing is reduced: combine(x, init) elementwise (the mean of one
      // element is the element).
      if (!init) {
        rewriter.replaceOp(op, input);
        return success();
      }
      rewriter.replaceOp(
          op, buildElementwise(rewriter, loc, type, ValueRange{input, init},
                               [&](OpBuilder &b, Location l, ValueRange a) {
                                 return combine(b, l, kind, a[0], a[1]);
                               }));
      return success();
    }

    Value start =
        init && !mean
            ? Value(tensor::ExtractOp::create(rewriter, loc, init, ValueRange{}))
            : Value(arith::ConstantOp::create(rewriter, loc, identity));
    Value result = buildReduce(rewriter, loc, kind, input, dims, type, start);
    if (mean) {
      int64_t count = productOfDims(inType.getShape(), dims);
      SmallVector<Value> ins = {result};
      if (init)
        ins.push_back(init);
      result = buildElementwise(
          rewriter, loc, type, ins,
          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
            Value r = arith::DivFOp::create(
                b, l, a[0], floatConst(b, l, elt, (double)count));
            return a.size() > 1 ? Value(arith::AddFOp::create(b, l, r, a[1]))
                                : r;
          });
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Scan: an scf.for over the scanned dimension (backwards when `reverse`)
/// carrying the running value (a unit-thick slice) and the result; each step
/// combines the next input slice into the running value in place and inserts
/// it (exclusive: inserts the running value before combining, after a first
/// slice of the combinator's identity).
struct ScanLowering : StaticOpLowering<ScanOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(ScanOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getOperand();
    auto type = cast<RankedTensorType>(op.getType());
    int64_t dim = op.getDim(), rank = type.getRank();
    int64_t n = type.getDimSize(dim);
    ReductionKind kind = op.getKind();
    bool exclusive = op.getExclusive(), reverse = op.getReverse();
    if (type.getNumElements() == 0 || (n == 1 && !exclusive)) {
      rewriter.replaceOp(op, input);
      return success();
    }
    SmallVector<int64_t> sliceShape(type.getShape());
    sliceShape[dim] = 1;
    auto sliceType = RankedTensorType::get(sliceShape, type.getElementType());
    SmallVector<OpFoldResult> sizes = indexAttrs(rewriter, sliceShape);
    SmallVector<OpFoldResult> strides = unitStrides(rewriter, rank);
    auto offsetsAt = [&](OpFoldResult pos) {
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
      offsets[dim] = pos;
      return offsets;
    };
    // step i of the scan reads and writes position n - 1 - i when reversed
    OpFoldResult start = rewriter.getIndexAttr(reverse ? n - 1 : 0);
    auto position = [&](OpBuilder &b, Location l, Value i) -> OpFoldResult {
      if (!reverse)
        return i;
      return arith::SubIOp::create(b, l, indexConst(b, l, n - 1), i).getResult();
    };

    Value first = tensor::ExtractSliceOp::create(
        rewriter, loc, sliceType, input, offsetsAt(start), sizes, strides);
    Value result = emptyTensor(rewriter, loc, type);
    Value head = first;
    if (exclusive) {
      TypedAttr identity = identityAttr(rewriter, kind, type.getElementType());
      if (!identity)
        return rewriter.notifyMatchFailure(op, "combinator invalid for the type");
      Value value = arith::ConstantOp::create(rewriter, loc, identity);
      head = filledTensor(rewriter, loc, sliceType, value);
    }
    result = tensor::InsertSliceOp::create(rewriter, loc, head, result,
                                           offsetsAt(start), sizes, strides);
    if (n == 1) {
      rewriter.replaceOp(op, result);
      return success();
    }
    // The running value is updated in place: give it its own buffer rather
    // than a view of the input.
    Value running = buildElementwise(
        rewriter, loc, sliceType, first,
        [](OpBuilder &, Location, ValueRange a) { return a[0]; });

    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, rewriter.getContext());
    auto loop = scf::ForOp::create(
        rewriter, loc, indexConst(rewriter, loc, 1),
        indexConst(rewriter, loc, n), indexConst(rewriter, loc, 1),
        ValueRange{running, result},
        [&](OpBuilder &b, Location l, Value iv, ValueRange iterArgs) {
          OpFoldResult at = position(b, l, iv);
          Value res = iterArgs[1];
          if (exclusive)
            res = tensor::InsertSliceOp::create(b, l, iterArgs[0], res,
                                                offsetsAt(at), sizes, strides);
          Value next = tensor::ExtractSliceOp::create(
              b, l, sliceType, input, offsetsAt(at), sizes, strides);
          Value acc =
              linalg::GenericOp::create(
                  b, l, TypeRange{sliceType}, ValueRange{next},
                  ValueRange{iterArgs[0]}, ArrayRef<AffineMap>{id, id},
                  parallelIterators(rank),
                  [&](OpBuilder &nb, Location nl, ValueRange args) {
                    linalg::YieldOp::create(
                        nb, nl, combine(nb, nl, kind, args[1], args[0]));
                  })
                  .getResult(0);
          if (!exclusive)
            res = tensor::InsertSliceOp::create(b, l, acc, res, offsetsAt(at),
                                                sizes, strides);
          scf::YieldOp::create(b, l, ValueRange{acc, res});
        });
    rewriter.replaceOp(op, loop.getResult(1));
    return success();
  }
};

/// softmax: e = exp(x - max), e / sum(e). log_softmax: (x - max) - ln(sum(e)).
/// The maximum along the axis is subtracted first, so exp never overflows.
template <typename OpT, bool IsLog>
struct SoftmaxLowering : StaticOpLowering<OpT> {
  using StaticOpLowering<OpT>::StaticOpLowering;

  LogicalResult lower(OpT op, typename OpT::Adaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getOperand();
    auto type = cast<RankedTensorType>(op.getType());
    Type elt = type.getElementType();
    int64_t axis = op.getAxis(), rank = type.getRank();
    auto redType = RankedTensorType::get(dropDims(type.getShape(), {axis}), elt);
    MLIRContext *ctx = rewriter.getContext();
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap red = dropDimsMap(rank, {axis}, ctx);

    Value negInf = identityConst(rewriter, loc, ReductionKind::max, elt);
    Value max = buildReduce(rewriter, loc, ReductionKind::max, x, {axis},
                            redType, negInf);
    Value exps = buildElementwise(
        rewriter, loc, type, ValueRange{x, max},
        [](OpBuilder &b, Location l, ValueRange a) -> Value {
          return math::ExpOp::create(b, l,
                                     arith::SubFOp::create(b, l, a[0], a[1]));
        },
        {id, red});
    Value sum = buildReduce(rewriter, loc, ReductionKind::add, exps, {axis},
                            redType, zeroConst(rewriter, loc, elt));
    Value result;
    if (IsLog)
      result = buildElementwise(
          rewriter, loc, type, ValueRange{x, max, sum},
          [](OpBuilder &b, Location l, ValueRange a) -> Value {
            Value shifted = arith::SubFOp::create(b, l, a[0], a[1]);
            return arith::SubFOp::create(b, l, shifted,
                                         math::LogOp::create(b, l, a[2]));
          },
          {id, red, red});
    else
      result = buildElementwise(
          rewriter, loc, type, ValueRange{exps, sum},
          [](OpBuilder &b, Location l, ValueRange a) -> Value {
            return arith::DivFOp::create(b, l, a[0], a[1]);
          },
          {id, red});
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// A reduction carrying (best value, its index): a candidate replaces the
/// best when it is strictly larger (smaller), or a NaN facing a number, so
/// ties keep the first position and the first NaN wins. i1 compares as a
/// boolean (false < true).
template <typename OpT, bool IsMax>
struct ArgExtremumLowering : StaticOpLowering<OpT> {
  using StaticOpLowering<OpT>::StaticOpLowering;

  LogicalResult lower(OpT op, typename OpT::Adaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getOperand();
    RankedTensorType in = tensorType(x);
    auto out = cast<RankedTensorType>(op.getType());
    Type element = in.getElementType();
    int64_t axis = op.getAxis(), rank = in.getRank();
    MLIRContext *ctx = rewriter.getContext();
    // the worst value, the identity of max / min: -inf / +inf, MIN / MAX,
    // false / true
    Value worst = identityConst(
        rewriter, loc, IsMax ? ReductionKind::max : ReductionKind::min, element);
    auto bestType = RankedTensorType::get(out.getShape(), element);
    Value best = filledTensor(rewriter, loc, bestType, worst);
    Value where = zeroTensor(rewriter, loc, out);
    AffineMap inMap = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap outMap = dropDimsMap(rank, {axis}, ctx);
    SmallVector<utils::IteratorType> iterators = parallelIterators(rank);
    iterators[axis] = utils::IteratorType::reduction;
    Type indexType = out.getElementType();
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{bestType, out}, ValueRange{x}, ValueRange{best, where},
        SmallVector<AffineMap>{inMap, outMap, outMap}, iterators,
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value v = a[0], current = a[1], position = a[2];
          Value better = strictlyBefore(b, l, v, current, /*greater=*/IsMax,
                                        /*nanFirst=*/true);
          Value i = linalg::IndexOp::create(b, l, axis);
          Value index = arith::IndexCastOp::create(b, l, indexType, i);
          linalg::YieldOp::create(b, l, ValueRange{arith::SelectOp::create(b, l, better, v, current),
                                                   arith::SelectOp::create(b, l, better, index, position)});
        });
    rewriter.replaceOp(op, generic.getResult(1));
    return success();
  }
};

} // namespace

void mlir::dlvm::to_linalg::populateReductionPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ReduceLowering, ScanLowering, SoftmaxLowering<SoftmaxOp, false>,
               SoftmaxLowering<LogSoftmaxOp, true>,
               ArgExtremumLowering<ArgMaxOp, true>,
               ArgExtremumLowering<ArgMinOp, false>>(patterns.getContext());
}
