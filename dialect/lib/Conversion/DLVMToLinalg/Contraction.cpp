//===- Contraction.cpp - dot and dot_general to linalg contractions -------===//
//
// dlvm.dot as the named linalg contractions (dot, matvec, vecmat, matmul,
// batch_matmul), reading transposed matrix operands in place; dlvm.dot_general
// rewritten into a dlvm.dot of rank 1 to 3 between permutes and reshapes.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

using namespace mlir;
using namespace mlir::dlvm;
using namespace mlir::dlvm::to_linalg;

namespace {

/// If `v` is a `dlvm.transpose` that swaps the last two dimensions and keeps
/// the others in place (a matrix transpose, batched or not), its operand;
/// null otherwise.
Value matrixTransposeSource(Value v) {
  auto t = v.getDefiningOp<TransposeOp>();
  if (!t || !isStaticTensor(t.getOperand().getType()))
    return {};
  SmallVector<int64_t> perm = t.getPermutation();
  int64_t r = perm.size();
  if (r < 2 || perm[r - 2] != r - 1 || perm[r - 1] != r - 2)
    return {};
  for (int64_t i = 0; i < r - 2; ++i)
    if (perm[i] != i)
      return {};
  return t.getOperand();
}

/// matrix x matrix -> linalg.matmul; batched -> linalg.batch_matmul (batch
/// dimensions collapsed into one when there are several); matrix x vector ->
/// linalg.matvec; vector x matrix -> linalg.vecmat; vector . vector ->
/// linalg.dot. The accumulator starts at zero.
///
/// A matrix operand produced by a `dlvm.transpose` of its last two dimensions
/// (what the AD emits for `dz . transpose(w)` and `transpose(h) . dz`) is not
/// materialized: the matmul / batch_matmul reads the transpose's operand
/// through transposed `indexing_maps`, and `transpose(A) . v` / `v .
/// transpose(A)` become `v . A` (vecmat) / `A . v` (matvec). The transpose
/// itself is lowered as usual; the pass erases it when nothing else uses it.
struct DotLowering : StaticOpLowering<DotOp> {
  using StaticOpLowering::StaticOpLowering;

  template <typename NamedOp>
  static Value contract(OpBuilder &b, Location loc, Value l, Value r,
                        RankedTensorType type) {
    return buildZeroInitNamed<NamedOp>(b, loc, type, ValueRange{l, r});
  }

  /// A (batch_)matmul whose operands are read transposed where `transA` /
  /// `transB` say: over loops (batch?, m, n, k), A reads (k, m) instead of
  /// (m, k) and B reads (n, k) instead of (k, n).
  template <typename NamedOp>
  static Value transposedContract(OpBuilder &b, Location loc, Value l, Value r,
                                  RankedTensorType type, bool transA,
                                  bool transB) {
    if (!transA && !transB)
      return contract<NamedOp>(b, loc, l, r, type);
    MLIRContext *ctx = b.getContext();
    unsigned batch = type.getRank() - 2;
    unsigned nd = batch + 3;
    SmallVector<AffineExpr> bd;
    for (unsigned i = 0; i < batch; ++i)
      bd.push_back(getAffineDimExpr(i, ctx));
    AffineExpr m = getAffineDimExpr(batch, ctx);
    AffineExpr n = getAffineDimExpr(batch + 1, ctx);
    AffineExpr k = getAffineDimExpr(batch + 2, ctx);
    auto map = [&](AffineExpr x, AffineExpr y) {
      SmallVector<AffineExpr> exprs(bd);
      exprs.push_back(x);
      exprs.push_back(y);
      return AffineMapAttr::get(AffineMap::get(nd, 0, exprs, ctx));
    };
    Value result = contract<NamedOp>(b, loc, l, r, type);
    cast<NamedOp>(result.getDefiningOp())
        .setIndexingMapsAttr(b.getArrayAttr({transA ? map(k, m) : map(m, k),
                                             transB ? map(n, k) : map(k, n),
                                             map(m, n)}));
    return result;
  }

  LogicalResult lower(DotOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    int64_t lr = tensorType(lhs).getRank(), rr = tensorType(rhs).getRank();
    // Transposed matrix operands, read in place (see above).
    Value lhsT = lr >= 2 ? matrixTransposeSource(op.getLhs()) : Value();
    Value rhsT = rr >= 2 ? matrixTransposeSource(op.getRhs()) : Value();
    if (lhsT && !(lhsT = rewriter.getRemappedValue(lhsT)))
      return rewriter.notifyMatchFailure(op, "unmapped transpose operand");
    if (rhsT && !(rhsT = rewriter.getRemappedValue(rhsT)))
      return rewriter.notifyMatchFailure(op, "unmapped transpose operand");
    bool transA = static_cast<bool>(lhsT), transB = static_cast<bool>(rhsT);
    Value l = transA ? lhsT : lhs, r = transB ? rhsT : rhs;
    // f16 / bf16 products are summed in f32 and rounded once (as numpy's
    // half matmul and XLA on CPU): an f16 sum of hundreds of terms loses
    // most of its digits.
    auto resultType = cast<RankedTensorType>(op.getType());
    Type element = resultType.getElementType();
    bool lowFloat = element.isF16() || element.isBF16();
    if (lowFloat)
      resultType = resultType.clone(rewriter.getF32Type());
    Value result;
    if (lr == 1 && rr == 1)
      result = contract<linalg::DotOp>(rewriter, loc, lhs, rhs, resultType);
    else if (lr == 2 && rr == 1)
      result = transA ? contract<linalg::VecmatOp>(rewriter, loc, rhs, l,
                                                   resultType)
                      : contract<linalg::MatvecOp>(rewriter, loc, lhs, rhs,
                                                   resultType);
    else if (lr == 1 && rr == 2)
      result = transB ? contract<linalg::MatvecOp>(rewriter, loc, r, lhs,
                                                   resultType)
                      : contract<linalg::VecmatOp>(rewriter, loc, lhs, rhs,
                                                   resultType);
    else if (lr == 2 && rr == 2)
      result = transposedContract<linalg::MatmulOp>(rewriter, loc, l, r,
                                                    resultType, transA, transB);
    else if (lr == 3 && rr == 3)
      result = transposedContract<linalg::BatchMatmulOp>(
          rewriter, loc, l, r, resultType, transA, transB);
    else if (lr == rr && lr > 3) {
      // Fold the batch dimensions into one: [B..., X, Y] -> [B, X, Y] (a
      // transposed operand is collapsed before it is read transposed).
      SmallVector<ReassociationIndices> re;
      re.push_back(llvm::to_vector(llvm::seq<int64_t>(0, lr - 2)));
      re.push_back({lr - 2});
      re.push_back({lr - 1});
      auto collapse = [&](Value v) -> Value {
        return tensor::CollapseShapeOp::create(rewriter, loc, v, re);
      };
      Value cl = collapse(l), cr = collapse(r);
      ArrayRef<int64_t> shape = resultType.getShape();
      int64_t batch = productOfDims(shape, re[0]);
      auto flatType = RankedTensorType::get(
          {batch, shape[lr - 2], shape[lr - 1]}, resultType.getElementType());
      Value flat = transposedContract<linalg::BatchMatmulOp>(
          rewriter, loc, cl, cr, flatType, transA, transB);
      result =
          tensor::ExpandShapeOp::create(rewriter, loc, resultType, flat, re);
    } else {
      // The verifier rejects other ranks; nothing has been created yet.
      return rewriter.notifyMatchFailure(op, "unsupported operand ranks");
    }
    if (lowFloat)
      result = buildElementwise(
          rewriter, loc, cast<RankedTensorType>(op.getType()), result,
          [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
            return arith::TruncFOp::create(nb, nl, element, args[0]);
          });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// `dlvm.dot_general` as a `dlvm.dot` of rank 1 to 3 (lowered above): each
/// operand is permuted to [batch, free, contracting] or [batch, contracting,
/// free] (whichever needs no transpose; lhs [B, M, K], rhs [B, K, N] when
/// neither does), its groups collapsed to one dimension each, and the second
/// layout read through a transpose of the last two dimensions, which the dot
/// reads in place. Without batch dimensions a side with no free dimension is
/// a vector (matvec, vecmat, inner product). The result is expanded back.
struct DotGeneralLowering : StaticOpLowering<DotGeneralOp> {
  using StaticOpLowering::StaticOpLowering;

  /// `v` (one operand) as the dot's operand: `groups` are its dimension
  /// groups (batch, then the two others in the order the dot reads them);
  /// `vector`: no batch and no free dimension, a rank-1 operand.
  static Value operand(OpBuilder &b, Location loc, Value v,
                       ArrayRef<SmallVector<int64_t>> groups, bool vector) {
    ArrayRef<int64_t> shape = tensorType(v).getShape();
    auto perm = [&](bool swapped) {
      SmallVector<int64_t> p(groups[0]);
      for (int g : swapped ? std::array{2, 1} : std::array{1, 2})
        p.append(groups[g]);
      return p;
    };
    bool swapped = !isIdentityPermutation(perm(false)) &&
                   isIdentityPermutation(perm(true));
    v = transposeUnlessIdentity(b, loc, v, perm(swapped));
    auto size = [&](ArrayRef<int64_t> dims) {
      return productOfDims(shape, dims);
    };
    SmallVector<int64_t> flat;
    if (!groups[0].empty())
      flat.push_back(size(groups[0]));
    if (vector) {
      flat.push_back(size(groups[1]) * size(groups[2]));
      swapped = false;
    } else if (swapped) {
      flat.append({size(groups[2]), size(groups[1])});
    } else {
      flat.append({size(groups[1]), size(groups[2])});
    }
    if (!llvm::equal(flat, tensorType(v).getShape()))
      v = ReshapeOp::create(b, loc, v, b.getDenseI64ArrayAttr(flat));
    if (swapped) {
      SmallVector<int64_t> last = llvm::to_vector(llvm::seq<int64_t>(0, flat.size()));
      std::swap(last[last.size() - 2], last.back());
      v = TransposeOp::create(b, loc, v, b.getDenseI64ArrayAttr(last));
    }
    return v;
  }

  LogicalResult lower(DotGeneralOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto free = [](int64_t rank, ArrayRef<int64_t> batch, ArrayRef<int64_t> contract) {
      SmallVector<int64_t> dims;
      for (int64_t d = 0; d < rank; ++d)
        if (!llvm::is_contained(batch, d) && !llvm::is_contained(contract, d))
          dims.push_back(d);
      return dims;
    };
    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    ArrayRef<int64_t> lb = op.getLhsBatchingDims(), rb = op.getRhsBatchingDims();
    ArrayRef<int64_t> lc = op.getLhsContractingDims(), rc = op.getRhsContractingDims();
    SmallVector<int64_t> lf = free(tensorType(lhs).getRank(), lb, lc);
    SmallVector<int64_t> rf = free(tensorType(rhs).getRank(), rb, rc);
    bool batched = !lb.empty();
    SmallVector<int64_t> lcv(lc), rcv(rc), lbv(lb), rbv(rb);
    // lhs reads [B, M, K]; rhs reads [B, K, N]
    Value l = operand(rewriter, loc, lhs, {lbv, lf, lcv}, !batched && lf.empty());
    Value r = operand(rewriter, loc, rhs, {rbv, rcv, rf}, !batched && rf.empty());
    Value dot = DotOp::create(rewriter, loc, l, r);
    auto type = cast<RankedTensorType>(op.getType());
    if (tensorType(dot).getShape() != type.getShape())
      dot = ReshapeOp::create(rewriter, loc, dot,
                              rewriter.getDenseI64ArrayAttr(type.getShape()));
    rewriter.replaceOp(op, dot);
    return success();
  }
};
} // namespace

void mlir::dlvm::to_linalg::populateContractionPatterns(
    RewritePatternSet &patterns) {
  patterns.add<DotLowering, DotGeneralLowering>(patterns.getContext());
}
