//===- Sort.cpp - dlvm.sort and dlvm.top_k to a merge sort ----------------===//
//
// sort and top_k: the stable sorting permutation of each row (a bottom-up
// merge sort of positions in scf.for loops), then the operands read through
// it. The sorted dimension is moved last and the others collapsed into rows
// with dlvm ops, which the conversion lowers in turn.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::dlvm;
using namespace mlir::dlvm::to_linalg;

namespace {

/// Whether key `a` goes strictly before key `b`: ascending puts NaN last,
/// descending puts it first; i1 is false < true.
Value sortsBefore(OpBuilder &b, Location l, Value a, Value c, bool descending) {
  return strictlyBefore(b, l, a, c, /*greater=*/descending,
                        /*nanFirst=*/descending);
}

/// The stable sorting permutation of each row of `keys` ([rows, n]): a
/// tensor<rows x n x index> whose row r lists the positions of row r's keys
/// in sorted order. A bottom-up merge sort: pass p merges runs of 2^p
/// positions into a new tensor; a merge step takes the right run's head only
/// when it sorts strictly before the left's (stability), branch-free.
Value sortedPositions(OpBuilder &b, Location loc, Value keys, bool descending) {
  RankedTensorType keyType = tensorType(keys);
  int64_t rows = keyType.getDimSize(0), n = keyType.getDimSize(1);
  Type index = b.getIndexType();
  auto permType = RankedTensorType::get({rows, n}, index);
  Value perm = buildElementwise(b, loc, permType, ValueRange{},
                                [](OpBuilder &nb, Location l, ValueRange) -> Value {
                                  return linalg::IndexOp::create(nb, l, 1);
                                });
  int64_t passes = llvm::Log2_64_Ceil(static_cast<uint64_t>(n));
  if (n <= 1)
    return perm;
  Value c0 = indexConst(b, loc, 0), c1 = indexConst(b, loc, 1);
  Value cn = indexConst(b, loc, n), last = indexConst(b, loc, n - 1);
  auto minIndex = [](OpBuilder &nb, Location l, Value x, Value y) -> Value {
    return arith::MinSIOp::create(nb, l, x, y);
  };
  auto sorted = scf::ForOp::create(
      b, loc, c0, indexConst(b, loc, passes), c1, ValueRange{perm},
      [&](OpBuilder &b1, Location l, Value pass, ValueRange src) {
        Value width = arith::ShLIOp::create(b1, l, c1, pass);
        Value step = arith::ShLIOp::create(b1, l, width, c1);
        Value dst = emptyTensor(b1, l, {rows, n}, index);
        auto rowLoop = scf::ForOp::create(
            b1, l, c0, indexConst(b1, l, rows), c1, ValueRange{dst},
            [&](OpBuilder &b2, Location l2, Value row, ValueRange rowDst) {
              auto runLoop = scf::ForOp::create(
                  b2, l2, c0, cn, step, ValueRange{rowDst[0]},
                  [&](OpBuilder &b3, Location l3, Value lo, ValueRange runDst) {
                    Value mid = minIndex(b3, l3, arith::AddIOp::create(b3, l3, lo, width), cn);
                    Value hi = minIndex(b3, l3, arith::AddIOp::create(b3, l3, lo, step), cn);
                    auto merge = scf::ForOp::create(
                        b3, l3, lo, hi, c1, ValueRange{lo, mid, runDst[0]},
                        [&](OpBuilder &b4, Location l4, Value out, ValueRange st) {
                          Value i = st[0], j = st[1];
                          Value pi = tensor::ExtractOp::create(
                              b4, l4, src[0], ValueRange{row, minIndex(b4, l4, i, last)});
                          Value pj = tensor::ExtractOp::create(
                              b4, l4, src[0], ValueRange{row, minIndex(b4, l4, j, last)});
                          Value ki = tensor::ExtractOp::create(b4, l4, keys, ValueRange{row, pi});
                          Value kj = tensor::ExtractOp::create(b4, l4, keys, ValueRange{row, pj});
                          Value leftDone = arith::CmpIOp::create(b4, l4, arith::CmpIPredicate::sge, i, mid);
                          Value rightLeft = arith::CmpIOp::create(b4, l4, arith::CmpIPredicate::slt, j, hi);
                          Value right = arith::OrIOp::create(
                              b4, l4, leftDone,
                              arith::AndIOp::create(b4, l4, rightLeft, sortsBefore(b4, l4, kj, ki, descending)));
                          Value taken = arith::SelectOp::create(b4, l4, right, pj, pi);
                          Value written = tensor::InsertOp::create(b4, l4, taken, st[2], ValueRange{row, out});
                          Value i1 = arith::AddIOp::create(b4, l4, i, c1);
                          Value j1 = arith::AddIOp::create(b4, l4, j, c1);
                          scf::YieldOp::create(b4, l4, ValueRange{arith::SelectOp::create(b4, l4, right, i, i1),
                                                                  arith::SelectOp::create(b4, l4, right, j1, j),
                                                                  written});
                        });
                    scf::YieldOp::create(b3, l3, merge.getResult(2));
                  });
              scf::YieldOp::create(b2, l2, runLoop.getResult(0));
            });
        scf::YieldOp::create(b1, l, rowLoop.getResult(0));
      });
  return sorted.getResult(0);
}

/// `x` ([rows, n]) read at `positions` ([rows, m], index): x[r, positions[r, i]],
/// or the positions themselves cast to `castTo` when `x` is null.
Value readAtPositions(OpBuilder &b, Location loc, Value x, Value positions, Type castTo = {}) {
  RankedTensorType pt = tensorType(positions);
  Type element = x ? tensorType(x).getElementType() : castTo;
  auto type = RankedTensorType::get(pt.getShape(), element);
  return buildElementwise(
      b, loc, type, ValueRange{positions}, [&](OpBuilder &nb, Location l, ValueRange a) {
        return x ? Value(tensor::ExtractOp::create(
                       nb, l, x, ValueRange{linalg::IndexOp::create(nb, l, 0), a[0]}))
                 : Value(arith::IndexCastOp::create(nb, l, castTo, a[0]));
      });
}

/// Moves dimension `dim` of tensors of `shape` last and collapses the others
/// into rows ([rows, n]), and back (dlvm ops, lowered by their patterns).
struct RowsAlong {
  SmallVector<int64_t> perm, inverse, moved;
  int64_t rows = 1, n;

  RowsAlong(ArrayRef<int64_t> shape, int64_t dim) : n(shape[dim]) {
    for (int64_t d = 0; d < (int64_t)shape.size(); ++d)
      if (d != dim) {
        perm.push_back(d);
        rows *= shape[d];
      }
    perm.push_back(dim);
    inverse.resize(perm.size());
    for (auto [i, p] : llvm::enumerate(perm))
      inverse[p] = i;
    moved = llvm::map_to_vector(perm, [&](int64_t d) { return shape[d]; });
  }

  Value to(OpBuilder &b, Location loc, Value v) const {
    v = transposeUnlessIdentity(b, loc, v, perm);
    return ReshapeOp::create(b, loc, v, b.getDenseI64ArrayAttr({rows, n}));
  }

  /// `v` ([rows, m]) back to the operand layout, with `m` along `dim`.
  Value from(OpBuilder &b, Location loc, Value v, int64_t m) const {
    SmallVector<int64_t> shape(moved);
    shape.back() = m;
    v = ReshapeOp::create(b, loc, v, b.getDenseI64ArrayAttr(shape));
    return transposeUnlessIdentity(b, loc, v, inverse);
  }
};

/// dlvm.sort: the sorting permutation of the keys' rows, then every operand
/// read through it.
struct SortLowering : StaticOpLowering<SortOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(SortOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ValueRange operands = adaptor.getOperands();
    RowsAlong rows(tensorType(operands[0]).getShape(), op.getDim());
    Value perm = sortedPositions(rewriter, loc, rows.to(rewriter, loc, operands[0]), op.getDescending());
    SmallVector<Value> results;
    for (Value v : operands)
      results.push_back(rows.from(rewriter, loc,
                                  readAtPositions(rewriter, loc, rows.to(rewriter, loc, v), perm), rows.n));
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// dlvm.top_k: the first k positions of a stable descending sort.
struct TopKLowering : StaticOpLowering<TopKOp> {
  using StaticOpLowering::StaticOpLowering;

  LogicalResult lower(TopKOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getOperand();
    ArrayRef<int64_t> shape = tensorType(x).getShape();
    RowsAlong rows(shape, shape.size() - 1);
    int64_t k = op.getK();
    Value xr = rows.to(rewriter, loc, x);
    Value perm = sortedPositions(rewriter, loc, xr, /*descending=*/true);
    Value first = tensor::ExtractSliceOp::create(
        rewriter, loc, RankedTensorType::get({rows.rows, k}, rewriter.getIndexType()), perm,
        ValueRange{}, ValueRange{}, ValueRange{}, rewriter.getDenseI64ArrayAttr({0, 0}),
        rewriter.getDenseI64ArrayAttr({rows.rows, k}), rewriter.getDenseI64ArrayAttr({1, 1}));
    Type i32 = tensorType(op.getIndices()).getElementType();
    rewriter.replaceOp(op, {rows.from(rewriter, loc, readAtPositions(rewriter, loc, xr, first), k),
                            rows.from(rewriter, loc, readAtPositions(rewriter, loc, Value(), first, i32), k)});
    return success();
  }
};

} // namespace

void mlir::dlvm::to_linalg::populateSortPatterns(RewritePatternSet &patterns) {
  patterns.add<SortLowering, TopKLowering>(patterns.getContext());
}
