//===- DLVMDialect.td - the dlvm dialect -------------------*- tablegen -*-===//
//
// DLVM's linear-algebra IR as an MLIR dialect: tensor ops with DLVM's
// broadcasting rules. Control flow, calls and memory are upstream MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef DLVM_DIALECT_TD
#define DLVM_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def DLVM_Dialect : Dialect {
  let name = "dlvm";
  let cppNamespace = "::mlir::dlvm";
  let summary = "DLVM's linear-algebra IR: tensor ops for deep learning";
  let description = [{
    The `dlvm` dialect is the instruction set of DLVM (Wei, Schwartz, Adve,
    2017) on MLIR's builtin ranked tensors: elementwise math with DLVM's
    broadcasting rules, linear algebra (`dot`), shape manipulation, reductions,
    convolution, literals and casts. Functions, control flow (`cf`, `scf`),
    calls (`func.call`) and memory (`memref`) are upstream MLIR.

    Broadcasting: a rank-0 operand broadcasts to any shape; otherwise both
    operands have the same rank and each pair of dimensions is equal or one of
    them is 1.

    Gradient declarations are body-less `func.func`s carrying a
    `dlvm.gradient = #dlvm.gradient<...>` attribute (reverse mode) or a
    `dlvm.tangent = #dlvm.tangent<...>` attribute (forward mode); the
    `dlvm-differentiate` pass synthesizes their bodies.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    static constexpr ::llvm::StringLiteral kGradientAttrName = "dlvm.gradient";
    static constexpr ::llvm::StringLiteral kTangentAttrName = "dlvm.tangent";
  }];
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def DLVM_CmpPredicateAttr : I32EnumAttr<"CmpPredicate",
    "comparison predicate", [
      I32EnumAttrCase<"lt", 0>, I32EnumAttrCase<"le", 1>,
      I32EnumAttrCase<"gt", 2>, I32EnumAttrCase<"ge", 3>,
      I32EnumAttrCase<"eq", 4>, I32EnumAttrCase<"ne", 5>]> {
  let cppNamespace = "::mlir::dlvm";
}

def DLVM_ReductionKindAttr : I32EnumAttr<"ReductionKind",
    "combinator of a reduction, scan or window reduction", [
      I32EnumAttrCase<"add", 0>, I32EnumAttrCase<"mul", 1>,
      I32EnumAttrCase<"max", 2>, I32EnumAttrCase<"min", 3>,
      I32EnumAttrCase<"and_", 4, "and">, I32EnumAttrCase<"or_", 5, "or">,
      I32EnumAttrCase<"mean", 6>]> {
  let cppNamespace = "::mlir::dlvm";
}

def DLVM_ScatterKindAttr : I32EnumAttr<"ScatterKind",
    "how a scatter combines an update with the operand's element", [
      I32EnumAttrCase<"add", 0>, I32EnumAttrCase<"replace", 1>,
      I32EnumAttrCase<"max", 2>, I32EnumAttrCase<"min", 3>]> {
  let cppNamespace = "::mlir::dlvm";
}

def DLVM_PaddingAttr : I32EnumAttr<"Padding",
    "window padding: none (valid), half (same), full", [
      I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"half", 1>,
      I32EnumAttrCase<"full", 2>]> {
  let cppNamespace = "::mlir::dlvm";
}

//===----------------------------------------------------------------------===//
// Derivative declarations
//===----------------------------------------------------------------------===//

class DLVM_DerivativeAttr<string name, string attrMnemonic, string summaryText>
    : AttrDef<DLVM_Dialect, name> {
  let mnemonic = attrMnemonic;
  let summary = summaryText;
  let parameters = (ins
    "::mlir::FlatSymbolRefAttr":$of,
    OptionalParameter<"::mlir::DenseI64ArrayAttr">:$wrt,
    OptionalArrayRefParameter<"int64_t">:$keeping,
    OptionalParameter<"::std::optional<int64_t>">:$from,
    "bool":$seedable);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Indices of the differentiated arguments (all when `wrt` is absent).
    ::llvm::SmallVector<int64_t> getWrtIndices(unsigned numPrimalArgs) const;
    /// Indices of the differentiated results (`from N`, else all).
    ::llvm::SmallVector<int64_t> getFromIndices(unsigned numPrimalResults) const;
    /// The function type this declaration must have, given the primal's.
    ::mlir::FunctionType getExpectedType(::mlir::FunctionType primal) const;
  }];
}

def DLVM_GradientAttr : DLVM_DerivativeAttr<"Gradient", "gradient",
    "reverse-mode derivative declaration (DLVM's [gradient @f ...])"> {
  let description = [{
    `#dlvm.gradient<of @f [from N] [wrt [i, ...]] [keeping [k, ...]] [seedable]>`
    declares that the function carrying it computes the gradient of `@f`.

    - `wrt`: the arguments to differentiate (default: all).
    - `keeping`: primal results also returned (after the gradients).
    - `seedable`: one seed (the adjoint of the result) per differentiated
      primal result is taken as trailing arguments; without it the seed is
      ones, so a non-scalar result yields the gradient of its sum.
    - `from N`: differentiate result N of a multi-result primal.

    Signature: arguments = primal arguments (+ seeds); results = gradients wrt
    the listed arguments in order, then the kept results.

    ```mlir
    func.func private @foo_grad(tensor<1x784xf32>, tensor<784x10xf32>, tensor<1x10xf32>, tensor<1x10xf32>)
        -> (tensor<784x10xf32>, tensor<1x10xf32>, tensor<1x10xf32>)
        attributes {dlvm.gradient = #dlvm.gradient<of @foo wrt [1, 2] keeping [0] seedable>}
    ```
  }];
}

def DLVM_TangentAttr : DLVM_DerivativeAttr<"Tangent", "tangent",
    "forward-mode derivative declaration (Jacobian-vector product)"> {
  let description = [{
    `#dlvm.tangent<of @f [from N] [wrt [i, ...]] [keeping [k, ...]]>`
    declares that the function carrying it computes a Jacobian-vector product
    of `@f`. Arguments = primal arguments, then one tangent per `wrt`
    argument; results = the tangent of each differentiated result, then the
    kept primal results. `seedable` is not allowed.

    ```mlir
    func.func private @f_jvp(tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
        attributes {dlvm.tangent = #dlvm.tangent<of @f>}
    ```
  }];
}

#endif // DLVM_DIALECT_TD
