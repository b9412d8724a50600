//===- DLVMOps.td - dlvm operations ------------------------*- tablegen -*-===//

#ifndef DLVM_OPS_TD
#define DLVM_OPS_TD

include "dlvm/DLVMDialect.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def DLVM_FloatElement : AnyTypeOf<[F16, BF16, F32, F64]>;
// Integers: signless ones are signed (i1 is a boolean); the unsigned types
// ui8/ui16/ui32/ui64 order, divide, compare, convert and saturate as unsigned.
def DLVM_Unsigned : AnyTypeOf<[UI8, UI16, UI32, UI64]>;
def DLVM_Integer : AnyTypeOf<[AnySignlessInteger, DLVM_Unsigned],
                             "integer (signless, ui8, ui16, ui32 or ui64)">;
def DLVM_Element : AnyTypeOf<[F16, BF16, F32, F64, DLVM_Integer],
    "f16, bf16, f32, f64 or integer (signless, ui8, ui16, ui32 or ui64)">;
def DLVM_Tensor : RankedTensorOf<[DLVM_Element]>;
def DLVM_FloatTensor : RankedTensorOf<[DLVM_FloatElement]>;
def DLVM_IntTensor : RankedTensorOf<[DLVM_Integer]>;
// Positions (indices of gather/scatter/dynamic slices, argmax, top_k):
// signless integers, read as signed.
def DLVM_IndexTensor : RankedTensorOf<[AnySignlessInteger]>;
def DLVM_BoolTensor : RankedTensorOf<[I1]>;

// Every tensor operand and result has an element count that fits in int64
// (`tensor<9223372036854775807x2xf32>` is a valid builtin type, but no code
// can compute its size).
def DLVM_ElementCountFits : NativeOpTrait<"ElementCountFits"> {
  let cppNamespace = "::mlir::dlvm";
}

class DLVM_Op<string mnemonic, list<Trait> traits = []>
    : Op<DLVM_Dialect, mnemonic, !listconcat(traits, [DLVM_ElementCountFits])>;

//===----------------------------------------------------------------------===//
// Elementwise unary ops
//===----------------------------------------------------------------------===//

class DLVM_UnaryOp<string mnemonic, TypeConstraint type, string formula,
                   list<Trait> traits = [], string notes = "">
    : DLVM_Op<mnemonic, !listconcat([Pure, Elementwise,
                                     SameOperandsAndResultType], traits)> {
  let summary = "elementwise " # formula;
  let description = "Computes `" # formula # "` for every element of the "
    # "operand; the result has the operand's type."
    # !if(!empty(notes), "", " " # notes) # "\n\n"
    # "Example:\n\n```mlir\n%y = dlvm." # mnemonic # " %x : tensor<4x8xf32>\n```";
  let arguments = (ins type:$operand);
  let results = (outs type:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand)";
  let hasFolder = 1;
}

def DLVM_NegOp : DLVM_UnaryOp<"neg", DLVM_Tensor, "-x">;
def DLVM_ExpOp : DLVM_UnaryOp<"exp", DLVM_FloatTensor, "e^x">;
def DLVM_LogOp : DLVM_UnaryOp<"log", DLVM_FloatTensor, "ln(x)">;
def DLVM_TanhOp : DLVM_UnaryOp<"tanh", DLVM_FloatTensor, "tanh(x)">;
def DLVM_SigmoidOp : DLVM_UnaryOp<"sigmoid", DLVM_FloatTensor, "1 / (1 + e^-x)">;
def DLVM_ReluOp : DLVM_UnaryOp<"relu", DLVM_Tensor, "max(x, 0)", [],
    "Floats: NaN stays NaN, -0.0 gives +0.0; on `i1` (false < true) the "
    # "identity. Derivative (as JAX): 1 where x > 0, 0 elsewhere, also at 0.">;
def DLVM_SqrtOp : DLVM_UnaryOp<"sqrt", DLVM_FloatTensor, "sqrt(x)">;
def DLVM_RsqrtOp : DLVM_UnaryOp<"rsqrt", DLVM_FloatTensor, "1 / sqrt(x)">;
def DLVM_SquareOp : DLVM_UnaryOp<"square", DLVM_Tensor, "x * x">;
def DLVM_SignOp : DLVM_UnaryOp<"sign", DLVM_Tensor, "sign(x) (-1, 0 or 1)", [],
    "Floats: +-0.0 and NaN are returned unchanged; on `i1` the identity; "
    # "unsigned types give 0 or 1. Not differentiable (the derivative is 0).">;
def DLVM_AbsOp : DLVM_UnaryOp<"abs", DLVM_Tensor, "|x|", [],
    "Integers: |MIN| wraps to MIN; on `i1` and unsigned types the identity. Derivative (as "
    # "JAX): 1 where x >= 0 (also at -0.0 and 0), -1 elsewhere (also NaN).">;
def DLVM_SinOp : DLVM_UnaryOp<"sin", DLVM_FloatTensor, "sin(x)">;
def DLVM_CosOp : DLVM_UnaryOp<"cos", DLVM_FloatTensor, "cos(x)">;
def DLVM_TanOp : DLVM_UnaryOp<"tan", DLVM_FloatTensor, "tan(x)">;
def DLVM_AsinOp : DLVM_UnaryOp<"asin", DLVM_FloatTensor, "asin(x)">;
def DLVM_AcosOp : DLVM_UnaryOp<"acos", DLVM_FloatTensor, "acos(x)">;
def DLVM_AtanOp : DLVM_UnaryOp<"atan", DLVM_FloatTensor, "atan(x)">;
def DLVM_SinhOp : DLVM_UnaryOp<"sinh", DLVM_FloatTensor, "sinh(x)">;
def DLVM_CoshOp : DLVM_UnaryOp<"cosh", DLVM_FloatTensor, "cosh(x)">;
def DLVM_FloorOp : DLVM_UnaryOp<"floor", DLVM_FloatTensor, "floor(x)">;
def DLVM_CeilOp : DLVM_UnaryOp<"ceil", DLVM_FloatTensor, "ceil(x)">;
def DLVM_RoundOp : DLVM_UnaryOp<"round", DLVM_FloatTensor,
                                "round(x) (halfway cases away from zero)">;
def DLVM_RintOp : DLVM_UnaryOp<"rint", DLVM_FloatTensor,
                               "rint(x) (halfway cases to even)">;
def DLVM_ErfOp : DLVM_UnaryOp<"erf", DLVM_FloatTensor, "erf(x)">;
def DLVM_ErfcOp : DLVM_UnaryOp<"erfc", DLVM_FloatTensor, "erfc(x) = 1 - erf(x)">;
def DLVM_LgammaOp : DLVM_UnaryOp<"lgamma", DLVM_FloatTensor, "ln|Gamma(x)|">;
def DLVM_DigammaOp : DLVM_UnaryOp<"digamma", DLVM_FloatTensor,
                                  "digamma(x) = d/dx ln Gamma(x)">;
def DLVM_Log1pOp : DLVM_UnaryOp<"log1p", DLVM_FloatTensor, "ln(1 + x)">;
def DLVM_Expm1Op : DLVM_UnaryOp<"expm1", DLVM_FloatTensor, "e^x - 1">;
def DLVM_NotOp : DLVM_UnaryOp<"not", DLVM_IntTensor,
                              "bitwise not (logical not on i1)">;
def DLVM_AsinhOp : DLVM_UnaryOp<"asinh", DLVM_FloatTensor, "asinh(x)">;
def DLVM_AcoshOp : DLVM_UnaryOp<"acosh", DLVM_FloatTensor, "acosh(x)", [],
    "NaN for x < 1.">;
def DLVM_AtanhOp : DLVM_UnaryOp<"atanh", DLVM_FloatTensor, "atanh(x)", [],
    "+-inf at +-1, NaN for |x| > 1.">;
def DLVM_Exp2Op : DLVM_UnaryOp<"exp2", DLVM_FloatTensor, "2^x">;
def DLVM_Log2Op : DLVM_UnaryOp<"log2", DLVM_FloatTensor, "log2(x)">;
def DLVM_Log10Op : DLVM_UnaryOp<"log10", DLVM_FloatTensor, "log10(x)">;
def DLVM_CbrtOp : DLVM_UnaryOp<"cbrt", DLVM_FloatTensor, "x^(1/3)", [],
    "Defined for negative x (cbrt(-8) = -2). Derivative: infinite at 0.">;
def DLVM_PopcountOp : DLVM_UnaryOp<"popcount", DLVM_IntTensor,
    "the number of set bits of x", [],
    "The result has the operand's type (on `i1`: the identity).">;

def DLVM_IsFiniteOp : DLVM_Op<"is_finite", [Pure, Elementwise,
    InferTypeOpAdaptor]> {
  let summary = "elementwise test: neither infinite nor NaN";
  let description = [{
    True where the element is a finite number, false where it is +-inf or
    NaN. The result is an `i1` tensor of the operand's shape. Not
    differentiable (its derivative is 0).

    ```mlir
    %ok = dlvm.is_finite %x : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins DLVM_FloatTensor:$operand);
  let results = (outs DLVM_BoolTensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise binary ops with DLVM broadcasting
//===----------------------------------------------------------------------===//

class DLVM_BinaryOp<string mnemonic, TypeConstraint type, string formula,
                    list<Trait> traits = [], string notes = "">
    : DLVM_Op<mnemonic, !listconcat([Pure, AllElementTypesMatch<["lhs", "rhs", "result"]>,
        InferTypeOpAdaptor], traits)> {
  let summary = "elementwise " # formula # " with broadcasting";
  let description = "Computes `" # formula # "` elementwise after "
    # "broadcasting the operands to a common shape: a rank-0 operand "
    # "broadcasts to anything; otherwise the ranks are equal and each pair of "
    # "dimensions is equal or one of them is 1."
    # !if(!empty(notes), "", "\n\n" # notes) # "\n\n"
    # "Example:\n\n```mlir\n%z = dlvm." # mnemonic
    # " %x, %y : tensor<4x8xf32>, tensor<1x8xf32>\n```";
  let arguments = (ins type:$lhs, type:$rhs);
  let results = (outs type:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
  let hasFolder = 1;
}

def DLVM_AddOp : DLVM_BinaryOp<"add", DLVM_Tensor, "x + y", [Commutative]>;
def DLVM_SubOp : DLVM_BinaryOp<"sub", DLVM_Tensor, "x - y">;
def DLVM_MulOp : DLVM_BinaryOp<"mul", DLVM_Tensor, "x * y", [Commutative]>;
// Integer division is never undefined (XLA's choices).
defvar DLVM_IntDivNotes =
    "Nothing is undefined or traps (as in XLA): x / 0 is -1 (all bits set) "
    # "and MIN / -1 wraps to MIN. On `i1` (one bit): x / true is x, "
    # "x / false is true. Unsigned types divide unsigned: x / 0 is the "
    # "maximum value (all bits set).";
def DLVM_DivOp : DLVM_BinaryOp<"div", DLVM_Tensor, "x / y", [],
    !strconcat("Floats: IEEE division. Integers: truncated toward zero. ",
               DLVM_IntDivNotes)>;
def DLVM_PowOp : DLVM_BinaryOp<"pow", DLVM_FloatTensor, "x ^ y">;
defvar DLVM_MinMaxNotes =
    "Floats: IEEE 754-2019 minimum/maximum: NaN in either operand gives NaN, "
    # "and -0.0 < +0.0. Integers compare signed (unsigned types unsigned); "
    # "`i1` is a boolean with "
    # "false < true (min is `and`, max is `or`). Derivative (JAX's rule): the "
    # "operand equal to the result gets the whole adjoint, each gets half at a "
    # "tie (x == y), neither where the result is NaN.";
def DLVM_MinOp : DLVM_BinaryOp<"min", DLVM_Tensor, "min(x, y)", [Commutative],
    DLVM_MinMaxNotes>;
def DLVM_MaxOp : DLVM_BinaryOp<"max", DLVM_Tensor, "max(x, y)", [Commutative],
    DLVM_MinMaxNotes>;
def DLVM_ModOp : DLVM_BinaryOp<"mod", DLVM_Tensor,
    "x mod y (floored: the result has the sign of y)", [],
    "Floats: `fmod(x, y)`, plus y when the signs differ. Integers: x mod 0 "
    # "is x and MIN mod -1 is 0 (XLA's rem, floored; unsigned types: the "
    # "unsigned remainder), so "
    # "`floor_div(x, y) * y + mod(x, y) == x` for every pair. On `i1`: "
    # "`x and not y`.">;
def DLVM_FloorDivOp : DLVM_BinaryOp<"floor_div", DLVM_Tensor, "floor(x / y)", [],
    !strconcat("Floats: the IEEE quotient, then rounded. Integers: rounded "
               "toward -inf. ", DLVM_IntDivNotes)>;
def DLVM_TruncDivOp : DLVM_BinaryOp<"trunc_div", DLVM_Tensor, "trunc(x / y)", [],
    !strconcat("Floats: the IEEE quotient, then rounded. Integers: as `div`. ",
               DLVM_IntDivNotes)>;
def DLVM_RemOp : DLVM_BinaryOp<"rem", DLVM_Tensor,
    "x rem y (truncated: the result has the sign of x, as C's % and fmod)", [],
    "Floats: `fmod(x, y)` (NaN for y = 0). Integers: x rem 0 is x and "
    # "MIN rem -1 is 0 (XLA's rem), so `trunc_div(x, y) * y + rem(x, y) == x` "
    # "wherever y is not 0. On `i1`: `x and not y`. Derivative: 1 for x, "
    # "`-trunc(x / y)` for y.">;
def DLVM_Atan2Op : DLVM_BinaryOp<"atan2", DLVM_FloatTensor,
    "atan2(x, y) (the angle of the point (y, x), in [-pi, pi])", [],
    "As C's `atan2(x, y)`: signed zeros and infinities pick the quadrant.">;
def DLVM_AndOp : DLVM_BinaryOp<"and", DLVM_IntTensor, "x & y", [Commutative]>;
def DLVM_OrOp : DLVM_BinaryOp<"or", DLVM_IntTensor, "x | y", [Commutative]>;
def DLVM_XorOp : DLVM_BinaryOp<"xor", DLVM_IntTensor, "x ^ y", [Commutative]>;
defvar DLVM_ShiftNotes =
    "The shift amount is read as an unsigned number; an amount of the bit "
    # "width or more shifts every bit out (as XLA): ";
def DLVM_ShiftLeftOp : DLVM_BinaryOp<"shift_left", DLVM_IntTensor, "x << y", [],
    !strconcat(DLVM_ShiftNotes, "the result is 0.")>;
def DLVM_ShiftRightArithmeticOp : DLVM_BinaryOp<"shift_right_arithmetic",
    DLVM_IntTensor, "x >> y, filling with the sign bit", [],
    !strconcat(DLVM_ShiftNotes, "the result is -1 for negative x, else 0. "
               "On unsigned types too, the top bit is the one copied in.")>;
def DLVM_ShiftRightLogicalOp : DLVM_BinaryOp<"shift_right_logical",
    DLVM_IntTensor, "x >> y, filling with zeros", [],
    !strconcat(DLVM_ShiftNotes, "the result is 0.")>;

def DLVM_ClampOp : DLVM_Op<"clamp", [Pure,
    AllElementTypesMatch<["min", "operand", "max", "result"]>,
    InferTypeOpAdaptor]> {
  let summary = "elementwise min(max(x, lo), hi), with broadcasting";
  let description = [{
    `clamp %lo, %x, %hi` computes `min(max(x, lo), hi)` elementwise after
    broadcasting the three operands to a common shape (as XLA's clamp; the
    bounds are usually rank 0). Floats: NaN in any operand gives NaN.
    Derivative (as JAX): `x` gets the adjoint where `lo < x < hi`, `lo`
    where `x < lo` (and `lo < hi`), `hi` where `hi < x`.

    ```mlir
    %y = dlvm.clamp %lo, %x, %hi : tensor<f32>, tensor<4x8xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins DLVM_Tensor:$min, DLVM_Tensor:$operand, DLVM_Tensor:$max);
  let results = (outs DLVM_Tensor:$result);
  let assemblyFormat = "$min `,` $operand `,` $max attr-dict `:` "
                       "type($min) `,` type($operand) `,` type($max)";
  let hasFolder = 1;
}

def DLVM_CmpOp : DLVM_Op<"cmp", [Pure, AllElementTypesMatch<["lhs", "rhs"]>,
    InferTypeOpAdaptor]> {
  let summary = "elementwise comparison with broadcasting";
  let description = [{
    Compares the broadcast operands elementwise with the predicate `lt`, `le`,
    `gt`, `ge`, `eq` or `ne` and yields an `i1` tensor. Floats compare ordered
    (a comparison with NaN is false, except `ne`; -0.0 equals +0.0); integers
    compare signed, unsigned types (`ui8` ... `ui64`) unsigned; `i1` operands
    are booleans with false < true (as numpy and JAX), so `ge(true, false)`
    is true.

    ```mlir
    %m = dlvm.cmp lt, %x, %y : tensor<4x8xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins DLVM_CmpPredicateAttr:$predicate, DLVM_Tensor:$lhs,
                   DLVM_Tensor:$rhs);
  let results = (outs DLVM_BoolTensor:$result);
  let assemblyFormat =
      "$predicate `,` $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
  let hasFolder = 1;
}

def DLVM_SelectOp : DLVM_Op<"select", [Pure,
    AllElementTypesMatch<["on_true", "on_false", "result"]>,
    InferTypeOpAdaptor]> {
  let summary = "elementwise choice by a boolean mask, with broadcasting";
  let description = [{
    DLVM's `select %a, %b by %mask`: picks `on_true` where `mask` is true and
    `on_false` elsewhere. All three operands broadcast to a common shape.

    ```mlir
    %r = dlvm.select %mask, %a, %b : tensor<4xi1>, tensor<4xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins DLVM_BoolTensor:$mask, DLVM_Tensor:$on_true,
                   DLVM_Tensor:$on_false);
  let results = (outs DLVM_Tensor:$result);
  let assemblyFormat = "$mask `,` $on_true `,` $on_false attr-dict `:` "
                       "type($mask) `,` type($on_true) `,` type($on_false)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Linear algebra and shape
//===----------------------------------------------------------------------===//

def DLVM_DotOp : DLVM_Op<"dot", [Pure, AllElementTypesMatch<["lhs", "rhs", "result"]>,
    InferTypeOpAdaptor]> {
  let summary = "matrix product, batched matrix product or inner product";
  let description = [{
    - matrix x matrix: `MxK . KxN -> MxN`
    - batched: `B...xMxK . B...xKxN -> B...xMxN` (equal batch dimensions)
    - matrix x vector: `MxK . K -> M`; vector x matrix: `K . KxN -> N`
    - vector . vector: `K . K -> scalar` (rank 0)

    Integers wrap. On `i1` the products are ANDs and the sum is an OR (a
    boolean matrix product, as numpy's `matmul` and XLA's `dot` on PRED).
    `f16` and `bf16` products are summed in `f32` and rounded once.

    ```mlir
    %y = dlvm.dot %x, %w : tensor<32x784xf32>, tensor<784x512xf32>
    ```
  }];
  let arguments = (ins DLVM_Tensor:$lhs, DLVM_Tensor:$rhs);
  let results = (outs DLVM_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
}

def DLVM_DotGeneralOp : DLVM_Op<"dot_general", [Pure,
    AllElementTypesMatch<["lhs", "rhs", "result"]>, InferTypeOpAdaptor]> {
  let summary = "contraction over any dimensions, with batch dimensions (XLA's dot_general)";
  let description = [{
    `lax.dot_general`: the sum of products over the contracting dimension
    pairs (`lhs_contracting_dims[i]` with `rhs_contracting_dims[i]`), element
    by element along the batch dimension pairs. The result's dimensions are
    the batch dimensions (in the order given), then the remaining dimensions
    of `lhs`, then those of `rhs`, each in their order. Paired dimensions
    must have equal sizes. Element types and their arithmetic are `dot`'s
    (wrapping integers, boolean `i1`, `f16`/`bf16` summed in `f32`); the
    lowering transposes and reshapes the operands into a `dot`, so both take
    the same code path (a transpose of the last two dimensions is read in
    place).

    Attention scores `q . k^T` per batch and head, and a product over the
    last dimension of a rank-3 activation:

    ```mlir
    %s = dlvm.dot_general %q, %k batch [0, 1] x [0, 1] contract [3] x [3]
        : tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>   // tensor<2x4x16x16xf32>
    %y = dlvm.dot_general %x, %w batch [] x [] contract [2] x [0]
        : tensor<8x10x64xf32>, tensor<64x32xf32>          // tensor<8x10x32xf32>
    ```
  }];
  let arguments = (ins DLVM_Tensor:$lhs, DLVM_Tensor:$rhs,
                   DenseI64ArrayAttr:$lhs_batching_dims,
                   DenseI64ArrayAttr:$rhs_batching_dims,
                   DenseI64ArrayAttr:$lhs_contracting_dims,
                   DenseI64ArrayAttr:$rhs_contracting_dims);
  let results = (outs DLVM_Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `batch` $lhs_batching_dims `x` $rhs_batching_dims `contract`
    $lhs_contracting_dims `x` $rhs_contracting_dims attr-dict `:` type($lhs) `,` type($rhs)
  }];
}

def DLVM_TransposeOp : DLVM_Op<"transpose", [Pure,
    AllElementTypesMatch<["operand", "result"]>,
    InferTypeOpAdaptor]> {
  let summary = "permutes the dimensions (default: reverses them)";
  let description = [{
    Result dimension `i` is operand dimension `perm[i]`. Without `perm` the
    dimensions are reversed (a matrix transpose for rank 2).

    ```mlir
    %t = dlvm.transpose %x : tensor<2x3xf32>
    %u = dlvm.transpose %y perm [0, 2, 1] : tensor<4x2x3xf32>
    ```
  }];
  let arguments = (ins DLVM_Tensor:$operand,
                   OptionalAttr<DenseI64ArrayAttr>:$perm);
  let results = (outs DLVM_Tensor:$result);
  let assemblyFormat = "$operand (`perm` $perm^)? attr-dict `:` type($operand)";
  let hasFolder = 1;
  let extraClassDeclaration = [{
    /// The permutation, with the default (reversal) made explicit.
    ::llvm::SmallVector<int64_t> getPermutation();
  }];
}

def DLVM_ReverseOp : DLVM_Op<"reverse", [Pure, SameOperandsAndResultType]> {
  let summary = "reverses the order of elements along the given dimensions";
  let description = [{
    ```mlir
    %r = dlvm.reverse %x dims [1] : tensor<2x3xf32>
    ```
  }];
  let arguments = (ins DLVM_Tensor:$operand, DenseI64ArrayAttr:$dims);
  let results = (outs DLVM_Tensor:$result);
  let assemblyFormat = "$operand `dims` $dims attr-dict `:` type($operand)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def DLVM_ConcatenateOp : DLVM_Op<"concatenate", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "joins tensors along an axis";
  let description = [{
    All operands have the same rank and element type and equal sizes except
    along `axis`. A dynamic size along `axis` makes the result's size there
    dynamic; the other sizes must be equal (`?` only equals `?`).

    ```mlir
    %c = dlvm.concatenate %a, %b axis 1 : tensor<2x3xf32>, tensor<2x5xf32>
    ```
  }];
  let arguments = (ins Variadic<DLVM_Tensor>:$operands,
                   ConfinedAttr<I64Attr, [IntNonNegative]>:$axis);
  let results = (outs DLVM_Tensor:$result);
  let assemblyFormat = "$operands `axis` $axis attr-dict `:` type($operands)";
  let hasFolder = 1;
}

def DLVM_SliceOp : DLVM_Op<"slice", [Pure,
    AllElementTypesMatch<["operand", "result"]>,
    InferTypeOpAdaptor]> {
  let summary = "extracts a strided window";
  let description = [{
    DLVM's `slice ... from a upto b`, generalized: per dimension an offset, a
    size (the result's size) and a positive stride (default 1). Every selected
    index `offset + i * stride` must be in bounds (an empty slice's offset at
    most the size), so the operand's shape must be static.

    ```mlir
    %s = dlvm.slice %x offsets [0, 2] sizes [4, 3] : tensor<4x8xf32>
    %t = dlvm.slice %x offsets [0, 0] sizes [2, 4] strides [2, 2] : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins DLVM_Tensor:$operand, DenseI64ArrayAttr:$offsets,
                   DenseI64ArrayAttr:$sizes,
                   OptionalAttr<DenseI64ArrayAttr>:$strides);
  let results = (outs DLVM_Tensor:$result);
  let assemblyFormat = "$operand `offsets` $offsets `sizes` $sizes "
                       "(`strides` $strides^)? attr-dict `:` type($operand)";
  let hasFolder = 1;
  let extraClassDeclaration = [{
    ::llvm::SmallVector<int64_t> getStrideValues();
  }];
}

def DLVM_PadOp : DLVM_Op<"pad", [Pure,
    AllElementTypesMatch<["operand", "value", "result"]>,
    InferTypeOpAdaptor]> {
  let summary = "pads with a value: low, high and interior padding (negative crops)";
  let description = [{
    XLA's pad: along each dimension, `low` copies of `value` before the
    first element, `interior` copies between neighbouring elements and
    `high` after the last; a negative `low`/`high` removes that many
    elements (padding or operand) from that end instead. The result's size
    is `low + n + (n - 1) * interior + high` (`low + high` for `n = 0`),
    which must not be negative. `value` is a rank-0 tensor; both operands
    are differentiable (the operand's adjoint is the strided window of the
    result's adjoint that it lands on, the value's the sum of the rest).
    Static shapes only.

    ```mlir
    %p = dlvm.pad %x, %zero low [1, 0] high [2, -1] interior [0, 1]
        : tensor<4x5xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins DLVM_Tensor:$operand, DLVM_Tensor:$value,
                   DenseI64ArrayAttr:$low, DenseI64ArrayAttr:$high,
                   DenseI64ArrayAttr:$interior);
  let results = (outs DLVM_Tensor:$result);
  let assemblyFormat = "$operand `,` $value `low` $low `high` $high `interior` $interior attr-dict "
                       "`:` type($operand) `,` type($value)";
  let hasFolder = 1;
  let extraClassDeclaration = [{
    /// Along dimension `d`: the first operand element that lands inside the
    /// result, how many do, and the result position of the first.
    struct Kept { int64_t first, count, at; };
    Kept kept(int64_t d);
  }];
}

def DLVM_DynamicSliceOp : DLVM_Op<"dynamic_slice", [Pure,
    AllElementTypesMatch<["operand", "result"]>,
    InferTypeOpAdaptor]> {
  let summary = "extracts a window at run-time start indices";
  let description = [{
    XLA's dynamic_slice: a window of the static `sizes` whose start along
    each dimension is a rank-0 integer tensor (one per dimension, signed),
    clamped as XLA does so that the window lies inside the operand:
    `start = clamp(index, 0, dim - size)`. Out-of-range indices therefore
    never read out of bounds. Differentiable in the operand (the adjoint is
    added into the same window); the indices are not.

    ```mlir
    %row = dlvm.dynamic_slice %xs at [%t, %zero] sizes [1, 128]
        : tensor<64x128xf32>, tensor<i32>, tensor<i32>
    ```
  }];
  let arguments = (ins DLVM_Tensor:$operand,
                   Variadic<DLVM_IndexTensor>:$start_indices,
                   DenseI64ArrayAttr:$sizes);
  let results = (outs DLVM_Tensor:$result);
  let assemblyFormat = "$operand `at` ` ` `[` $start_indices `]` `sizes` $sizes "
                       "attr-dict `:` type($operand) (`,` type($start_indices)^)?";
  let hasFolder = 1;
}

def DLVM_DynamicUpdateSliceOp : DLVM_Op<"dynamic_update_slice", [Pure,
    AllTypesMatch<["operand", "result"]>,
    AllElementTypesMatch<["operand", "update"]>]> {
  let summary = "writes a window at run-time start indices";
  let description = [{
    XLA's dynamic_update_slice: `operand` with the window of `update`'s shape
    starting at the indices replaced by `update`. One rank-0 integer index per
    dimension, clamped as in `dynamic_slice` (`clamp(index, 0, dim - size)`).
    Differentiable in both tensors (the operand's adjoint is zero inside the
    window, the update's is the window of the adjoint); not in the indices.

    ```mlir
    %y = dlvm.dynamic_update_slice %xs, %row at [%t, %zero]
        : tensor<64x128xf32>, tensor<1x128xf32>, tensor<i32>, tensor<i32>
    ```
  }];
  let arguments = (ins DLVM_Tensor:$operand, DLVM_Tensor:$update,
                   Variadic<DLVM_IndexTensor>:$start_indices);
  let results = (outs DLVM_Tensor:$result);
  let assemblyFormat = "$operand `,` $update `at` ` ` `[` $start_indices `]` attr-dict `:` "
                       "type($operand) `,` type($update) (`,` type($start_indices)^)?";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def DLVM_GatherOp : DLVM_Op<"gather", [Pure,
    AllElementTypesMatch<["operand", "result"]>,
    InferTypeOpAdaptor]> {
  let summary = "XLA's gather: windows of the operand at positions read from a tensor";
  let description = [{
    XLA's gather with its dimension numbers. `indices` holds one start vector
    per batch position, along `index_vector_dim` (equal to the rank of
    `indices`: one implicit trailing dimension of size 1). Start element `k`
    is the start along operand dimension `start_index_map[k]`; starts are
    clamped as XLA does, `clamp(s, 0, dim - slice_size)`. Each batch position
    reads a window of `slice_sizes`; the dimensions in `collapsed_slice_dims`
    (of size 1) are dropped, the others appear at the result's `offset_dims`,
    and the batch dimensions (those of `indices` but `index_vector_dim`) fill
    the remaining result dimensions in order. Differentiable in the operand
    (the adjoint is a scatter-add), not in the indices.

    An embedding lookup, rows of `table` by token:

    ```mlir
    %e = dlvm.gather %table[%tokens] offset_dims [1] collapsed_slice_dims [0]
        start_index_map [0] index_vector_dim 1 slice_sizes [1, 64]
        : tensor<1000x64xf32>, tensor<32xi32>        // tensor<32x64xf32>
    ```
  }];
  let arguments = (ins DLVM_Tensor:$operand, DLVM_IndexTensor:$indices,
                   DenseI64ArrayAttr:$offset_dims,
                   DenseI64ArrayAttr:$collapsed_slice_dims,
                   DenseI64ArrayAttr:$start_index_map,
                   I64Attr:$index_vector_dim,
                   DenseI64ArrayAttr:$slice_sizes);
  let results = (outs DLVM_Tensor:$result);
  let assemblyFormat = [{
    $operand `[` $indices `]` `offset_dims` $offset_dims `collapsed_slice_dims`
    $collapsed_slice_dims `start_index_map` $start_index_map `index_vector_dim`
    $index_vector_dim `slice_sizes` $slice_sizes attr-dict `:` type($operand) `,` type($indices)
  }];
}

def DLVM_ScatterOp : DLVM_Op<"scatter", [Pure,
    AllTypesMatch<["operand", "result"]>,
    AllElementTypesMatch<["operand", "updates"]>]> {
  let summary = "XLA's scatter: combines windows of updates into the operand";
  let description = [{
    XLA's scatter with its dimension numbers, the inverse layout of
    `gather`: the dimensions of `updates` at `update_window_dims` form a
    window (the operand's dimensions but `inserted_window_dims`, in order);
    the other update dimensions follow the batch dimensions of `indices`,
    whose start vectors (along `index_vector_dim`) give the window's start
    along the operand dimensions `scatter_dims_to_operand_dims`, clamped as in
    `gather`. Each update element is combined with its operand element by
    `kind`: `add` (on `i1` the sum of `dlvm.add`, a xor), `replace`, `max` or
    `min` (those of `dlvm.max`/`min`). Updates that reach the same element are
    applied in the order of the update tensor's elements (row-major), so with
    `replace` the last one stays. Differentiable for `add` (operand: the
    adjoint; updates: its gather) and `replace` (the overwritten positions get
    no adjoint); not for `max`/`min`, nor in the indices.

    The adjoint of an embedding lookup, rows of `grads` added into a table:

    ```mlir
    %t = dlvm.scatter add %zeros[%tokens], %grads update_window_dims [1]
        inserted_window_dims [0] scatter_dims_to_operand_dims [0] index_vector_dim 1
        : tensor<1000x64xf32>, tensor<32xi32>, tensor<32x64xf32>
    ```
  }];
  let arguments = (ins DLVM_ScatterKindAttr:$kind, DLVM_Tensor:$operand,
                   DLVM_IndexTensor:$indices, DLVM_Tensor:$updates,
                   DenseI64ArrayAttr:$update_window_dims,
                   DenseI64ArrayAttr:$inserted_window_dims,
                   DenseI64ArrayAttr:$scatter_dims_to_operand_dims,
                   I64Attr:$index_vector_dim);
  let results = (outs DLVM_Tensor:$result);
  let assemblyFormat = [{
    $kind $operand `[` $indices `]` `,` $updates `update_window_dims` $update_window_dims
    `inserted_window_dims` $inserted_window_dims `scatter_dims_to_operand_dims`
    $scatter_dims_to_operand_dims `index_vector_dim` $index_vector_dim attr-dict
    `:` type($operand) `,` type($indices) `,` type($updates)
  }];
  let hasVerifier = 1;
}

def DLVM_IotaOp : DLVM_Op<"iota", [Pure]> {
  let summary = "counts along one dimension";
  let description = [{
    XLA's iota: the element at index `(i0, i1, ...)` is `i_dim`, converted to
    the element type as `dlvm.cast` converts an `i64` (integers wrap, `i1` is
    `i != 0`).

    ```mlir
    %positions = dlvm.iota dim 1 : tensor<8x64xi32>
    ```
  }];
  let arguments = (ins I64Attr:$dim);
  let results = (outs DLVM_Tensor:$result);
  let assemblyFormat = "`dim` $dim attr-dict `:` type($result)";
  let hasVerifier = 1;
}

class DLVM_ArgExtremumOp<string mnemonic, string which> : DLVM_Op<mnemonic, [Pure]> {
  let summary = "the index of the " # which # " along an axis";
  let description = "The position of the " # which # " element along `axis` "
    # "(the result drops that dimension; its integer type is the result "
    # "type's). Ties go to the first position; a NaN counts as the " # which
    # " (as numpy and JAX); on `i1` false < true. Not differentiable.\n\n"
    # "```mlir\n%i = dlvm." # mnemonic
    # " %x axis 1 : tensor<32x10xf32> -> tensor<32xi32>\n```";
  let arguments = (ins DLVM_Tensor:$operand, I64Attr:$axis);
  let results = (outs DLVM_IndexTensor:$result);
  let assemblyFormat = "$operand `axis` $axis attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
}
def DLVM_ArgMaxOp : DLVM_ArgExtremumOp<"argmax", "largest">;
def DLVM_ArgMinOp : DLVM_ArgExtremumOp<"argmin", "smallest">;

def DLVM_SortOp : DLVM_Op<"sort", [Pure, InferTypeOpAdaptor]> {
  let summary = "stable sort along a dimension; further operands follow the first";
  let description = [{
    Sorts the first operand along `dim`, ascending (or `descending`), and
    permutes the other operands (of the same shape) the same way, as
    `lax.sort` with one key. The sort is stable: equal keys keep their order.
    Ascending puts NaN last, descending puts it first (NaN is the largest, as
    in `top_k`); `-0.0` and `0.0` are equal; `i1` is false < true. The
    results have the operands' types. Differentiable in every float operand
    (the adjoint is the inverse permutation of the cotangent). The lowering
    is a bottom-up merge sort of positions along `dim` (log2(n) passes),
    then a gather of each operand.

    ```mlir
    %s = dlvm.sort %x dim 1 : tensor<4x100xf32>
    %k, %v = dlvm.sort %keys, %values dim 0 descending : tensor<16xi32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins Variadic<DLVM_Tensor>:$operands, I64Attr:$dim, UnitAttr:$descending);
  let results = (outs Variadic<DLVM_Tensor>:$results);
  let assemblyFormat = "$operands `dim` $dim (`descending` $descending^)? attr-dict `:` type($operands)";
}

def DLVM_TopKOp : DLVM_Op<"top_k", [Pure, InferTypeOpAdaptor]> {
  let summary = "the k largest elements along the last dimension and their positions";
  let description = [{
    `lax.top_k`: along the last dimension, the `k` largest elements in
    descending order and their positions (`i32`); equal elements come in
    order of position, NaN is the largest. Differentiable in the operand (the
    adjoint scatters the cotangent back to the positions).

    ```mlir
    %v, %i = dlvm.top_k %logits k 5 : tensor<32x1000xf32>   // tensor<32x5xf32>, tensor<32x5xi32>
    ```
  }];
  let arguments = (ins DLVM_Tensor:$operand, ConfinedAttr<I64Attr, [IntNonNegative]>:$k);
  let results = (outs DLVM_Tensor:$values, DLVM_IndexTensor:$indices);
  let assemblyFormat = "$operand `k` $k attr-dict `:` type($operand)";
}

def DLVM_ReshapeOp : DLVM_Op<"reshape", [Pure,
    AllElementTypesMatch<["operand", "result"]>,
    InferTypeOpAdaptor]> {
  let summary = "reinterprets the elements under a new shape (DLVM shapeCast)";
  let description = [{
    The element count is preserved; elements keep their row-major order. The
    operand's shape must be static.

    ```mlir
    %r = dlvm.reshape %x to [2, 6] : tensor<3x4xf32>
    ```
  }];
  let arguments = (ins DLVM_Tensor:$operand, DenseI64ArrayAttr:$shape);
  let results = (outs DLVM_Tensor:$result);
  let assemblyFormat = "$operand `to` $shape attr-dict `:` type($operand)";
  let hasFolder = 1;
}

def DLVM_PadShapeOp : DLVM_Op<"pad_shape", [Pure,
    AllElementTypesMatch<["operand", "result"]>,
    InferTypeOpAdaptor]> {
  let summary = "inserts a unit dimension";
  let description = [{
    ```mlir
    %p = dlvm.pad_shape %x at 0 : tensor<3xf32>   // tensor<1x3xf32>
    ```
  }];
  let arguments = (ins DLVM_Tensor:$operand,
                   ConfinedAttr<I64Attr, [IntNonNegative]>:$dim);
  let results = (outs DLVM_Tensor:$result);
  let assemblyFormat = "$operand `at` $dim attr-dict `:` type($operand)";
  let hasFolder = 1;
}

def DLVM_SqueezeShapeOp : DLVM_Op<"squeeze_shape", [Pure,
    AllElementTypesMatch<["operand", "result"]>,
    InferTypeOpAdaptor]> {
  let summary = "removes a unit dimension";
  let description = [{
    ```mlir
    %s = dlvm.squeeze_shape %x at 0 : tensor<1x3xf32>   // tensor<3xf32>
    ```
  }];
  let arguments = (ins DLVM_Tensor:$operand,
                   ConfinedAttr<I64Attr, [IntNonNegative]>:$dim);
  let results = (outs DLVM_Tensor:$result);
  let assemblyFormat = "$operand `at` $dim attr-dict `:` type($operand)";
  let hasFolder = 1;
}

def DLVM_BroadcastToOp : DLVM_Op<"broadcast_to", [Pure,
    AllElementTypesMatch<["operand", "result"]>,
    InferTypeOpAdaptor]> {
  let summary = "broadcasts to a shape with DLVM's rules";
  let description = [{
    A rank-0 operand broadcasts to any shape; otherwise the ranks are equal
    and each operand dimension is 1 or equal to the target's.

    ```mlir
    %b = dlvm.broadcast_to %x to [4, 3] : tensor<1x3xf32>
    ```
  }];
  let arguments = (ins DLVM_Tensor:$operand, DenseI64ArrayAttr:$shape);
  let results = (outs DLVM_Tensor:$result);
  let assemblyFormat = "$operand `to` $shape attr-dict `:` type($operand)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

def DLVM_ReduceOp : DLVM_Op<"reduce", [Pure,
    AllElementTypesMatch<["operand", "result"]>,
    InferTypeOpAdaptor]> {
  let summary = "reduces along dimensions";
  let description = [{
    Combines the elements along `dims` with `add`, `mul`, `max`, `min`, `and`,
    `or` or `mean`; the reduced dimensions are removed. With `init` (a rank-0
    tensor), the combinator's identity is replaced by `init` (for `mean`,
    `init` is added to the mean). `max`/`min` are those of `dlvm.max`/`min`
    (NaN propagates, -0.0 < +0.0; on `i1` they are `or`/`and`).

    Derivative of `max`/`min` (as JAX's reduce_max): the adjoint is shared
    equally by the elements (and `init`) equal to the result.

    ```mlir
    %s = dlvm.reduce add %x dims [1] : tensor<4x8xf32>       // tensor<4xf32>
    %m = dlvm.reduce max %x init %c dims [0, 1] : tensor<4x8xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins DLVM_ReductionKindAttr:$kind, DLVM_Tensor:$operand,
                   Optional<DLVM_Tensor>:$init, DenseI64ArrayAttr:$dims);
  let results = (outs DLVM_Tensor:$result);
  let assemblyFormat = "$kind $operand (`init` $init^)? `dims` $dims attr-dict "
                       "`:` type($operand) (`,` type($init)^)?";
  let hasFolder = 1;
}

def DLVM_ScanOp : DLVM_Op<"scan", [Pure, SameOperandsAndResultType]> {
  let summary = "prefix reduction along a dimension (inclusive or exclusive, either direction)";
  let description = [{
    Result element `i` along `dim` combines operand elements `0..i` with
    `add`, `mul`, `max`, `min`, `and` or `or` (`max`/`min` as in
    `dlvm.reduce`). `exclusive`: elements `0..i-1` (the first result is the
    combinator's identity, as `dlvm.reduce` has it); `reverse`: the scan runs
    from the last element (`i..n-1`, or `i+1..n-1` when exclusive), as
    `lax.cumsum(reverse=True)`. Derivative of `max`/`min`: result `i`'s
    adjoint is shared equally by the elements it combines that equal it.

    ```mlir
    %c = dlvm.scan add %x dim 1 : tensor<4x8xf32>
    %e = dlvm.scan mul %x dim 0 exclusive reverse : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins DLVM_ReductionKindAttr:$kind, DLVM_Tensor:$operand,
                   ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
                   UnitAttr:$exclusive, UnitAttr:$reverse);
  let results = (outs DLVM_Tensor:$result);
  let assemblyFormat = "$kind $operand `dim` $dim (`exclusive` $exclusive^)? (`reverse` $reverse^)? attr-dict "
                       "`:` type($operand)";
  let hasVerifier = 1;
}

def DLVM_ReduceWindowOp : DLVM_Op<"reduce_window", [Pure,
    AllElementTypesMatch<["operand", "result"]>,
    InferTypeOpAdaptor]> {
  let summary = "reduces sliding windows (pooling)";
  let description = [{
    For each window position, combines a `window`-shaped block with `add`,
    `mul`, `max`, `min` or `mean` (average over the in-bounds elements).
    Padding: `none` (valid windows only), `half` (output size
    ceil(n / stride), "same"), `full` (every window touching the input:
    output size floor((n + window - 2) / stride) + 1, 0 for n = 0 and
    window 1). Padded elements are the combinator's identity. `max`/`min` as
    in `dlvm.reduce`. A dynamic input size gives a dynamic output size with
    `half` and `full`; with `none` it is an error (the window must fit).

    Explicit padding (XLA's padding pairs): `padding none low [..] high [..]`,
    non-negative, one per dimension. `window_dilation [..]` spreads the
    window's elements that far apart, `base_dilation [..]` reads the operand
    as if that many - 1 identity elements stood between neighbours (as
    `lax.reduce_window`); padding and the output size are computed on the
    dilated sizes, `(n - 1) * base + 1` and `(w - 1) * window + 1`; `mean`
    counts only operand elements.

    Derivative of `max`/`min` (as JAX's, from XLA's select_and_scatter): each
    window's adjoint goes entirely to its first element, in row-major window
    order, equal to the result (none where the result is NaN).

    ```mlir
    %p = dlvm.reduce_window max %x window [1, 1, 2, 2] strides [1, 1, 2, 2] padding none
        : tensor<8x3x32x32xf32>
    %q = dlvm.reduce_window add %x window [3, 3] strides [1, 1] padding none low [1, 0] high [1, 2]
        window_dilation [2, 1] : tensor<16x16xf32>
    ```
  }];
  let arguments = (ins DLVM_ReductionKindAttr:$kind, DLVM_Tensor:$operand,
                   DenseI64ArrayAttr:$window, DenseI64ArrayAttr:$strides,
                   DLVM_PaddingAttr:$padding,
                   OptionalAttr<DenseI64ArrayAttr>:$low,
                   OptionalAttr<DenseI64ArrayAttr>:$high,
                   OptionalAttr<DenseI64ArrayAttr>:$window_dilation,
                   OptionalAttr<DenseI64ArrayAttr>:$base_dilation);
  let results = (outs DLVM_Tensor:$result);
  let assemblyFormat = "$kind $operand `window` $window `strides` $strides "
                       "`padding` $padding (`low` $low^)? (`high` $high^)? "
                       "(`window_dilation` $window_dilation^)? (`base_dilation` $base_dilation^)? "
                       "attr-dict `:` type($operand)";
  let extraClassDeclaration = [{
    /// Low padding per dimension (high padding is derived from the output).
    ::llvm::SmallVector<int64_t> getLowPadding();
    /// Window and base dilations per dimension (1 where not given).
    ::llvm::SmallVector<int64_t> getWindowDilationValues();
    ::llvm::SmallVector<int64_t> getBaseDilationValues();
  }];
}

class DLVM_SoftmaxLikeOp<string mnemonic, string formula>
    : DLVM_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = formula # " along an axis";
  let description = "Computes `" # formula # "` along `axis`, numerically "
    # "stable (the maximum along the axis is subtracted first).\n\n"
    # "```mlir\n%p = dlvm." # mnemonic # " %logits axis 1 : tensor<32x10xf32>\n```";
  let arguments = (ins DLVM_FloatTensor:$operand,
                   ConfinedAttr<I64Attr, [IntNonNegative]>:$axis);
  let results = (outs DLVM_FloatTensor:$result);
  let assemblyFormat = "$operand `axis` $axis attr-dict `:` type($operand)";
  let hasVerifier = 1;
}

def DLVM_SoftmaxOp : DLVM_SoftmaxLikeOp<"softmax", "exp(x) / sum(exp(x))">;
def DLVM_LogSoftmaxOp : DLVM_SoftmaxLikeOp<"log_softmax",
                                           "x - log(sum(exp(x)))">;

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

def DLVM_ConvolveOp : DLVM_Op<"convolve", [Pure,
    AllElementTypesMatch<["input", "kernel", "result"]>,
    InferTypeOpAdaptor]> {
  let summary = "XLA-style convolution (NCHW input, OIHW kernel)";
  let description = [{
    Cross-correlation of `input` (N x C x spatial...) with `kernel`
    (O x C/groups x window...), for any number of spatial dimensions.
    Per spatial dimension: `strides` (default 1), `padding` as low/high pairs
    `[lo0, hi0, lo1, hi1, ...]` (default 0), `lhs_dilation` (input dilation,
    default 1), `rhs_dilation` (kernel dilation, default 1); `groups` splits
    channels into feature groups (C and O divisible by it). Output size per
    spatial dimension:
    `floor((ld*(n-1)+1 + lo + hi - (rd*(k-1)+1)) / stride) + 1`, where an
    empty input or window dimension dilates to 0 (as in XLA). Only the batch
    size may be dynamic (it passes through to the result). Integers wrap; on
    `i1` the products are ANDs and the sum is an OR (as `dot`, and XLA's
    convolution on PRED); `f16` and `bf16` products are summed in `f32` and
    rounded once (as `dot`).

    ```mlir
    %y = dlvm.convolve %x, %k strides [1, 1] padding [1, 1, 1, 1]
        : tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>
    ```
  }];
  let arguments = (ins DLVM_Tensor:$input, DLVM_Tensor:$kernel,
                   OptionalAttr<DenseI64ArrayAttr>:$strides,
                   OptionalAttr<DenseI64ArrayAttr>:$padding,
                   OptionalAttr<DenseI64ArrayAttr>:$lhs_dilation,
                   OptionalAttr<DenseI64ArrayAttr>:$rhs_dilation,
                   DefaultValuedOptionalAttr<I64Attr, "1">:$groups);
  let results = (outs DLVM_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $kernel (`strides` $strides^)? (`padding` $padding^)?
    (`lhs_dilation` $lhs_dilation^)? (`rhs_dilation` $rhs_dilation^)?
    (`groups` $groups^)? attr-dict `:` type($input) `,` type($kernel)
  }];
  let extraClassDeclaration = [{
    unsigned getNumSpatialDims() {
      return ::llvm::cast<::mlir::RankedTensorType>(getInput().getType()).getRank() - 2;
    }
    ::llvm::SmallVector<int64_t> getStrideValues();
    ::llvm::SmallVector<int64_t> getPaddingValues();
    ::llvm::SmallVector<int64_t> getLhsDilationValues();
    ::llvm::SmallVector<int64_t> getRhsDilationValues();
  }];
}

//===----------------------------------------------------------------------===//
// Literals, casts, random
//===----------------------------------------------------------------------===//

def DLVM_ConstantOp : DLVM_Op<"constant", [Pure, ConstantLike,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "tensor literal (dense or splat)";
  let description = [{
    ```mlir
    %c = dlvm.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
    %z = dlvm.constant dense<0.0> : tensor<128x10xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs DLVM_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def DLVM_CastOp : DLVM_Op<"cast", [Pure, Elementwise,
    InferTypeOpAdaptor]> {
  let summary = "converts element values to another element type (DLVM dataTypeCast)";
  let description = [{
    As XLA's convert:
    - float to float: rounds to nearest even (overflow gives +-inf) or extends;
    - float to integer: truncates toward zero and saturates to the integer
      type's range (+inf and values above it give MAX, -inf and below give
      MIN; for an unsigned type, negative values give 0); NaN gives 0;
    - integer to float: converts the value (signed, or unsigned for `ui8`
      ... `ui64`), rounding to nearest even (to `bf16` through f32, rounding
      twice, as XLA);
    - integer to integer: extends to a wider type (sign-extends a signed
      source, zero-extends an unsigned one), wraps (keeps the low bits) to a
      narrower or equally wide one (`i8` -1 to `ui8` is 255);
    - to `i1`: `x != 0` (NaN is true, -0.0 false); from `i1`: true is 1.

    ```mlir
    %h = dlvm.cast %x to f16 : tensor<4xf32>
    ```
  }];
  let arguments = (ins DLVM_Tensor:$operand, TypeAttrOf<DLVM_Element>:$dtype);
  let results = (outs DLVM_Tensor:$result);
  let assemblyFormat = "$operand `to` $dtype attr-dict `:` type($operand)";
  let hasFolder = 1;
}

def DLVM_BitcastOp : DLVM_Op<"bitcast", [Pure, Elementwise,
    InferTypeOpAdaptor]> {
  let summary = "reinterprets element bits as another element type of the same width";
  let description = [{
    ```mlir
    %i = dlvm.bitcast %x to i32 : tensor<4xf32>
    ```
  }];
  let arguments = (ins DLVM_Tensor:$operand, TypeAttrOf<DLVM_Element>:$dtype);
  let results = (outs DLVM_Tensor:$result);
  let assemblyFormat = "$operand `to` $dtype attr-dict `:` type($operand)";
  let hasFolder = 1;
}

def DLVM_RandomOp : DLVM_Op<"random", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "uniform random tensor in [low, high) from a seed";
  let description = [{
    A counter-based generator: element `i` is a function of `seed` and `i`
    only, so the op is deterministic and side-effect free (two ops with the
    same attributes produce the same tensor).

    Element `i` (row-major linear index) is the (i+1)-th SplitMix64 output of
    the stream whose state starts at `mix(seed + 0x9e3779b97f4a7c15)`. Its top
    53 (f64) or 24 (f16, bf16, f32; computed in f32) bits give `u` in [0, 1);
    the value is `low * (1 - u) + high * u`, rounded to the element type and
    clamped to [low, high). Every back end and the reference interpreter
    (`dlvm_mlir.interpreter.rng`) produce these exact bits.

    ```mlir
    %r = dlvm.random [784, 512] from -0.05 upto 0.05 seed 7 : f32
    ```
  }];
  let arguments = (ins DenseI64ArrayAttr:$shape, F64Attr:$low, F64Attr:$high,
                   DefaultValuedAttr<I64Attr, "0">:$seed,
                   TypeAttrOf<DLVM_FloatElement>:$dtype);
  let results = (outs DLVM_FloatTensor:$result);
  let assemblyFormat = "$shape `from` $low `upto` $high `seed` $seed attr-dict "
                       "`:` $dtype";
}

#endif // DLVM_OPS_TD
