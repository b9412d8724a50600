//===- Convolution.cpp - convolve and reduce_window to linalg -------------===//
//
// The windowed ops: dlvm.convolve (input dilation and padding, then the named
// linalg convolutions, or a linalg.generic for grouped convolutions other
// than 2-D) and dlvm.reduce_window (pooling: a linalg.generic over output and
// window dimensions on the padded operand).
//
//===----------------------------------------------------------------------===//

#include "Common.h"

using namespace mlir;
using namespace mlir::dlvm;
using namespace mlir::dlvm::to_linalg;

namespace {

/// 1. Input dilation and padding: with lhs dilation the input is inserted
///    with strides into a zero tensor of the dilated, padded size; otherwise
///    tensor.pad with zeros. Negative padding (cropping) is an extract_slice.
/// 2. The convolution proper (strides, kernel dilation, no padding):
///    linalg.conv_1d_ncw_fcw / conv_2d_nchw_fchw / conv_3d_ncdhw_fcdhw for one
///    group, conv_2d_ngchw_gfchw for grouped 2-D, else a linalg.generic over
///    (n, g, f, out..., c, window...) on group-expanded tensors.
struct ConvolveLowering : StaticOpLowering<ConvolveOp> {
  using StaticOpLowering::StaticOpLowering;

  static Value padAndDilate(OpBuilder &b, Location loc, Value x,
                            ArrayRef<int64_t> padding,
                            ArrayRef<int64_t> dilation) {
    RankedTensorType type = tensorType(x);
    ArrayRef<int64_t> shape = type.getShape();
    int64_t ns = shape.size() - 2;
    bool dilate = llvm::any_of(dilation, [](int64_t v) { return v != 1; });
    bool grow = llvm::any_of(padding, [](int64_t v) { return v > 0; });
    bool crop = llvm::any_of(padding, [](int64_t v) { return v < 0; });
    if (!dilate && !grow && !crop)
      return x;
    SmallVector<int64_t> lo = {0, 0}, hi = {0, 0}, full = {shape[0], shape[1]};
    for (int64_t i = 0; i < ns; ++i) {
      int64_t n = shape[i + 2];
      int64_t dilated = n == 0 ? 0 : dilation[i] * (n - 1) + 1;
      lo.push_back(std::max<int64_t>(padding[2 * i], 0));
      hi.push_back(std::max<int64_t>(padding[2 * i + 1], 0));
      full.push_back(lo.back() + dilated + hi.back());
    }
    auto fullType = RankedTensorType::get(full, type.getElementType());
    SmallVector<int64_t> offsets = {0, 0}, sizes = {full[0], full[1]};
    for (int64_t i = 0; i < ns; ++i) {
      int64_t cutLo = std::max<int64_t>(-padding[2 * i], 0);
      int64_t cutHi = std::max<int64_t>(-padding[2 * i + 1], 0);
      offsets.push_back(cutLo);
      sizes.push_back(full[i + 2] - cutLo - cutHi);
    }
    auto resultType = RankedTensorType::get(sizes, type.getElementType());
    // An empty input leaves only zero padding. (Building it from slices would
    // also trip memref.subview's verifier on zero-sized dimensions.)
    if (type.getNumElements() == 0)
      return zeroTensor(b, loc, resultType);
    if (dilate) {
      SmallVector<int64_t> strides = {1, 1};
      strides.append(dilation.begin(), dilation.end());
      Value zeros = zeroTensor(b, loc, fullType);
      x = tensor::InsertSliceOp::create(b, loc, x, zeros, indexAttrs(b, lo),
                                        indexAttrs(b, shape),
                                        indexAttrs(b, strides));
    } else if (grow) {
      x = tensor::PadOp::create(b, loc, fullType, x, indexAttrs(b, lo),
                                indexAttrs(b, hi),
                                zeroConst(b, loc, type.getElementType()));
    }
    if (!crop)
      return x;
    return tensor::ExtractSliceOp::create(b, loc, resultType, x,
                                          indexAttrs(b, offsets),
                                          indexAttrs(b, sizes),
                                          unitStrides(b, shape.size()));
  }

  /// Splits dimension `dim` of `v` into (groups, size / groups).
  static Value splitGroups(OpBuilder &b, Location loc, Value v, int64_t dim,
                           int64_t groups) {
    RankedTensorType type = tensorType(v);
    SmallVector<int64_t> shape;
    SmallVector<ReassociationIndices> re;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      int64_t next = shape.size();
      if (d == dim) {
        shape.push_back(groups);
        shape.push_back(type.getDimSize(d) / groups);
        re.push_back({next, next + 1});
      } else {
        shape.push_back(type.getDimSize(d));
        re.push_back({next});
      }
    }
    return tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), v, re);
  }

  /// Grouped convolution as a linalg.generic on x: N x G x Cg x D...,
  /// k: G x Og x Cg x K..., acc: N x G x Og x P....
  static Value genericConv(OpBuilder &b, Location loc, Value x, Value k,
                           Value acc, ArrayRef<int64_t> strides,
                           ArrayRef<int64_t> dilation) {
    MLIRContext *ctx = b.getContext();
    int64_t ns = strides.size();
    int64_t numLoops = 4 + 2 * ns;
    auto dim = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
    AffineExpr n = dim(0), g = dim(1), f = dim(2), c = dim(3 + ns);
    SmallVector<AffineExpr> xe = {n, g, c}, ke = {g, f, c}, oe = {n, g, f};
    for (int64_t i = 0; i < ns; ++i) {
      AffineExpr o = dim(3 + i), w = dim(4 + ns + i);
      xe.push_back(o * strides[i] + w * dilation[i]);
      ke.push_back(w);
      oe.push_back(o);
    }
    SmallVector<AffineMap> maps = {AffineMap::get(numLoops, 0, xe, ctx),
                                   AffineMap::get(numLoops, 0, ke, ctx),
                                   AffineMap::get(numLoops, 0, oe, ctx)};
    SmallVector<utils::IteratorType> iterators = parallelIterators(3 + ns);
    iterators.append(1 + ns, utils::IteratorType::reduction);
    return linalg::GenericOp::create(
               b, loc, TypeRange{acc.getType()}, ValueRange{x, k},
               ValueRange{acc}, maps, iterators,
               [&](OpBuilder &nb, Location l, ValueRange a) {
                 // i1: AND products, OR sum (as linalg's named convolutions
                 // and dot do)
                 bool i1 = isBool(a[0]);
                 Value p = combine(nb, l, i1 ? ReductionKind::min : ReductionKind::mul,
                                   a[0], a[1]);
                 linalg::YieldOp::create(
                     nb, l, combine(nb, l, i1 ? ReductionKind::max : ReductionKind::add,
                                    a[2], p));
               })
        .getResult(0);
  }

  LogicalResult lower(ConvolveOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    int64_t ns = op.getNumSpatialDims();
    int64_t groups = op.getGroups();
    SmallVector<int64_t> strides = op.getStrideValues();
    SmallVector<int64_t> rhsDilation = op.getRhsDilationValues();
    // f16 / bf16 convolutions sum in f32 and round once, as dlvm.dot does: an
    // f16 sum of the 576 products of a 3x3, 64-channel window lost 1.4% of its
    // value (dlvm-fuzz seed 2828). The operands are extended first (each f16
    // product is exact in f32), so every convolution path computes in f32.
    Type element = type.getElementType();
    bool lowFloat = element.isF16() || element.isBF16();
    auto widen = [&](Value v) -> Value {
      if (!lowFloat)
        return v;
      auto wide = tensorType(v).clone(rewriter.getF32Type());
      return buildElementwise(
          rewriter, loc, wide, v,
          [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
            return arith::ExtFOp::create(nb, nl, nb.getF32Type(), args[0]);
          });
    };
    RankedTensorType finalType = type;
    if (lowFloat)
      type = type.clone(rewriter.getF32Type());
    Value x = padAndDilate(rewriter, loc, widen(adaptor.getInput()),
                           op.getPaddingValues(), op.getLhsDilationValues());
    Value k = widen(adaptor.getKernel());
    Attribute stridesAttr = rewriter.getI64TensorAttr(strides);
    Attribute dilationAttr = rewriter.getI64TensorAttr(rhsDilation);

    auto named = [&](auto opTag, Value in, Value kernel,
                     RankedTensorType outType) -> Value {
      using NamedOp = decltype(opTag);
      return buildZeroInitNamed<NamedOp>(rewriter, loc, outType,
                                         ValueRange{in, kernel}, stridesAttr,
                                         dilationAttr);
    };

    Value result;
    if (groups == 1 && ns == 1) {
      result = named(linalg::Conv1DNcwFcwOp(), x, k, type);
    } else if (groups == 1 && ns == 2) {
      result = named(linalg::Conv2DNchwFchwOp(), x, k, type);
    } else if (groups == 1 && ns == 3) {
      result = named(linalg::Conv3DNcdhwFcdhwOp(), x, k, type);
    } else {
      Value xg = splitGroups(rewriter, loc, x, 1, groups);
      Value kg = splitGroups(rewriter, loc, k, 0, groups);
      SmallVector<int64_t> outShape = {type.getDimSize(0), groups,
                                       type.getDimSize(1) / groups};
      outShape.append(type.getShape().begin() + 2, type.getShape().end());
      auto outType = RankedTensorType::get(outShape, type.getElementType());
      Value grouped;
      if (ns == 2)
        grouped = named(linalg::Conv2DNgchwGfchwOp(), xg, kg, outType);
      else
        grouped = genericConv(rewriter, loc, xg, kg,
                              zeroTensor(rewriter, loc, outType), strides,
                              rhsDilation);
      SmallVector<ReassociationIndices> re = {{0}, {1, 2}};
      for (int64_t i = 0; i < ns; ++i)
        re.push_back({3 + i});
      result =
          tensor::CollapseShapeOp::create(rewriter, loc, type, grouped, re);
    }
    if (lowFloat)
      result = buildElementwise(
          rewriter, loc, finalType, result,
          [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
            return arith::TruncFOp::create(nb, nl, element, args[0]);
          });
    rewriter.replaceOp(op, result);
    return success();
  }
};


/// Pads with the combinator's identity (a fill, the operand inserted with
/// stride base_dilation at the low padding), then a linalg.generic over
/// (output dims, window dims) reads input[o*s + w*window_dilation]; a
/// window-shaped tensor.empty operand gives the window loops their bounds (as
/// linalg's pooling ops do). mean divides the sum by the number of operand
/// elements in each window, a product of per-dimension counts (constants).
struct ReduceWindowLowering : StaticOpLowering<ReduceWindowOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(ReduceWindowOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ReductionKind kind = op.getKind();
    Value input = adaptor.getOperand();
    RankedTensorType inType = tensorType(input);
    auto type = cast<RankedTensorType>(op.getType());
    Type elt = type.getElementType();
    TypedAttr identity = identityAttr(rewriter, kind, elt);
    if (!identity)
      return rewriter.notifyMatchFailure(op, "combinator invalid for the type");
    int64_t rank = type.getRank();
    SmallVector<int64_t> window(op.getWindow()), strides(op.getStrides());
    SmallVector<int64_t> wd = op.getWindowDilationValues(), bd = op.getBaseDilationValues();
    SmallVector<int64_t> in(inType.getShape()), out(type.getShape());
    SmallVector<int64_t> low = op.getLowPadding(), dilated, padded;
    for (int64_t d = 0; d < rank; ++d) {
      dilated.push_back(in[d] > 0 ? (in[d] - 1) * bd[d] + 1 : 0);
      int64_t reach = (out[d] - 1) * strides[d] + (window[d] - 1) * wd[d] + 1;
      padded.push_back(std::max(low[d] + dilated[d], reach));
    }

    Value ident = arith::ConstantOp::create(rewriter, loc, identity);
    if (padded != in) {
      auto paddedType = RankedTensorType::get(padded, elt);
      bool dilatedBase = llvm::any_of(bd, [](int64_t b) { return b != 1; });
      SmallVector<int64_t> high;
      for (int64_t d = 0; d < rank; ++d)
        high.push_back(padded[d] - low[d] - dilated[d]);
      if (inType.getNumElements() == 0) // windows over an empty input see padding only
        input = filledTensor(rewriter, loc, paddedType, ident);
      else if (!dilatedBase)
        input = tensor::PadOp::create(rewriter, loc, paddedType, input, indexAttrs(rewriter, low),
                                      indexAttrs(rewriter, high), ident);
      else
        input = tensor::InsertSliceOp::create(
            rewriter, loc, input, filledTensor(rewriter, loc, paddedType, ident),
            indexAttrs(rewriter, low), indexAttrs(rewriter, in), indexAttrs(rewriter, bd));
    }

    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> inExprs, winExprs, outExprs;
    for (int64_t d = 0; d < rank; ++d) {
      AffineExpr o = getAffineDimExpr(d, ctx);
      AffineExpr w = getAffineDimExpr(rank + d, ctx);
      inExprs.push_back(o * strides[d] + w * wd[d]);
      winExprs.push_back(w);
      outExprs.push_back(o);
    }
    SmallVector<AffineMap> maps = {AffineMap::get(2 * rank, 0, inExprs, ctx),
                                   AffineMap::get(2 * rank, 0, winExprs, ctx),
                                   AffineMap::get(2 * rank, 0, outExprs, ctx)};
    SmallVector<utils::IteratorType> iterators = parallelIterators(rank);
    iterators.append(rank, utils::IteratorType::reduction);
    Value windowShape = emptyTensor(rewriter, loc, window, elt);
    Value acc = filledTensor(rewriter, loc, type, ident);
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{type}, ValueRange{input, windowShape},
            ValueRange{acc}, maps, iterators,
            [&](OpBuilder &b, Location l, ValueRange args) {
              linalg::YieldOp::create(b, l,
                                      combine(b, l, kind, args[2], args[0]));
            })
            .getResult(0);

    if (kind == ReductionKind::mean && type.getNumElements() > 0) {
      // counts[d][o]: the operand elements that window o reads along d
      SmallVector<Value> inputs{result};
      SmallVector<AffineMap> countMaps{AffineMap::getMultiDimIdentityMap(rank, ctx)};
      for (int64_t d = 0; d < rank; ++d) {
        SmallVector<double> counts;
        for (int64_t o = 0; o < out[d]; ++o) {
          int64_t c = 0;
          for (int64_t k = 0; k < window[d]; ++k) {
            int64_t p = o * strides[d] + k * wd[d] - low[d];
            c += p >= 0 && p < dilated[d] && p % bd[d] == 0;
          }
          counts.push_back((double)c);
        }
        if (llvm::all_of(counts, [](double c) { return c == 1.0; }))
          continue;
        auto countType = RankedTensorType::get({out[d]}, elt);
        SmallVector<Attribute> values;
        for (double c : counts)
          values.push_back(FloatAttr::get(elt, c));
        inputs.push_back(arith::ConstantOp::create(
            rewriter, loc, DenseElementsAttr::get(countType, values)));
        countMaps.push_back(AffineMap::get(rank, 0, {getAffineDimExpr(d, ctx)}, ctx));
      }
      if (inputs.size() > 1)
        result = buildElementwise(
            rewriter, loc, type, inputs,
            [&](OpBuilder &b, Location l, ValueRange args) -> Value {
              // one division by the (exact, integer) product of the counts
              Value count = args[1];
              for (size_t i = 2; i < args.size(); ++i)
                count = arith::MulFOp::create(b, l, count, args[i]);
              return arith::DivFOp::create(b, l, args[0], count);
            },
            countMaps);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::dlvm::to_linalg::populateConvolutionPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ConvolveLowering, ReduceWindowLowering>(patterns.getContext());
}
