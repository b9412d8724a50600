//===- DLVMDialect.cpp - dlvm dialect, attributes, declarations -----------===//
#include "dlvm/DLVMDialect.h"
#include "dlvm/DLVMOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::dlvm;

#include "dlvm/DLVMDialect.cpp.inc"
#include "dlvm/DLVMEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dlvm/DLVMAttrs.cpp.inc"

namespace {
/// Every dlvm op is pure and region-free, so any of them can be inlined.
struct DLVMInlinerInterface : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
};
} // namespace

void DLVMDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dlvm/DLVMOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dlvm/DLVMAttrs.cpp.inc"
      >();
  addInterfaces<DLVMInlinerInterface>();
}

Operation *DLVMDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, type, elements);
}

//===----------------------------------------------------------------------===//
// #dlvm.gradient / #dlvm.tangent
//===----------------------------------------------------------------------===//

namespace {
struct DerivativeParams {
  FlatSymbolRefAttr of;
  DenseI64ArrayAttr wrt;
  SmallVector<int64_t> keeping;
  std::optional<int64_t> from;
  bool seedable = false;
};
} // namespace

static ParseResult parseIndexList(AsmParser &parser,
                                  SmallVectorImpl<int64_t> &out) {
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Square, [&]() -> ParseResult {
        int64_t v;
        if (parser.parseInteger(v))
          return failure();
        out.push_back(v);
        return success();
      });
}

/// `<of @f [from N] [wrt [..]] [keeping [..]] [seedable]>`, clauses in any
/// order, each at most once.
static FailureOr<DerivativeParams> parseDerivative(AsmParser &parser,
                                                   bool allowSeedable) {
  DerivativeParams p;
  if (parser.parseLess() || parser.parseKeyword("of"))
    return failure();
  StringAttr name;
  if (parser.parseSymbolName(name))
    return failure();
  p.of = FlatSymbolRefAttr::get(name);
  llvm::SmallVector<StringRef> seen;
  while (failed(parser.parseOptionalGreater())) {
    StringRef kw;
    llvm::SMLoc loc = parser.getCurrentLocation();
    if (parser.parseKeyword(&kw))
      return failure();
    if (llvm::is_contained(seen, kw))
      return parser.emitError(loc, "duplicate clause '") << kw << "'";
    seen.push_back(kw);
    if (kw == "wrt") {
      SmallVector<int64_t> wrt;
      if (parseIndexList(parser, wrt))
        return failure();
      p.wrt = DenseI64ArrayAttr::get(parser.getContext(), wrt);
    } else if (kw == "keeping") {
      if (parseIndexList(parser, p.keeping))
        return failure();
    } else if (kw == "from") {
      int64_t v;
      if (parser.parseInteger(v))
        return failure();
      p.from = v;
    } else if (kw == "seedable" && allowSeedable) {
      p.seedable = true;
    } else {
      return parser.emitError(loc, "expected one of 'wrt', 'keeping', 'from'")
             << (allowSeedable ? ", 'seedable'" : "") << " or '>', got '"
             << kw << "'";
    }
  }
  return p;
}

static void printIndexList(AsmPrinter &printer, ArrayRef<int64_t> values) {
  printer << '[';
  llvm::interleaveComma(values, printer);
  printer << ']';
}

template <typename AttrT>
static void printDerivative(AttrT attr, AsmPrinter &printer) {
  printer << "<of " << attr.getOf();
  if (attr.getFrom())
    printer << " from " << *attr.getFrom();
  if (attr.getWrt()) {
    printer << " wrt ";
    printIndexList(printer, attr.getWrt().asArrayRef());
  }
  if (!attr.getKeeping().empty()) {
    printer << " keeping ";
    printIndexList(printer, attr.getKeeping());
  }
  if (attr.getSeedable())
    printer << " seedable";
  printer << '>';
}

static LogicalResult verifyIndices(function_ref<InFlightDiagnostic()> emitError,
                                   StringRef clause, ArrayRef<int64_t> values) {
  llvm::SmallDenseSet<int64_t> seen;
  for (int64_t v : values) {
    if (v < 0)
      return emitError() << "'" << clause << "' index " << v
                         << " is negative";
    if (!seen.insert(v).second)
      return emitError() << "'" << clause << "' index " << v
                         << " is listed twice";
  }
  return success();
}

static LogicalResult
verifyDerivative(function_ref<InFlightDiagnostic()> emitError,
                 DenseI64ArrayAttr wrt, ArrayRef<int64_t> keeping,
                 std::optional<int64_t> from) {
  if (wrt && failed(verifyIndices(emitError, "wrt", wrt.asArrayRef())))
    return failure();
  if (failed(verifyIndices(emitError, "keeping", keeping)))
    return failure();
  if (from && *from < 0)
    return emitError() << "'from' index " << *from << " is negative";
  return success();
}

static SmallVector<int64_t> wrtIndices(DenseI64ArrayAttr wrt, unsigned n) {
  if (wrt)
    return llvm::to_vector(wrt.asArrayRef());
  return llvm::to_vector(llvm::seq<int64_t>(0, n));
}

static SmallVector<int64_t> fromIndices(std::optional<int64_t> from,
                                        unsigned n) {
  if (from)
    return {*from};
  return llvm::to_vector(llvm::seq<int64_t>(0, n));
}

Attribute GradientAttr::parse(AsmParser &parser, Type) {
  FailureOr<DerivativeParams> p = parseDerivative(parser, /*allowSeedable=*/true);
  if (failed(p))
    return {};
  return GradientAttr::getChecked(
      [&] { return parser.emitError(parser.getNameLoc()); },
      parser.getContext(), p->of, p->wrt, p->keeping, p->from, p->seedable);
}
void GradientAttr::print(AsmPrinter &printer) const {
  printDerivative(*this, printer);
}
LogicalResult
GradientAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                     FlatSymbolRefAttr, DenseI64ArrayAttr wrt,
                     ArrayRef<int64_t> keeping, std::optional<int64_t> from,
                     bool) {
  return verifyDerivative(emitError, wrt, keeping, from);
}
SmallVector<int64_t> GradientAttr::getWrtIndices(unsigned n) const {
  return wrtIndices(getWrt(), n);
}
SmallVector<int64_t> GradientAttr::getFromIndices(unsigned n) const {
  return fromIndices(getFrom(), n);
}
FunctionType GradientAttr::getExpectedType(FunctionType primal) const {
  SmallVector<Type> inputs(primal.getInputs());
  if (getSeedable())
    for (int64_t r : getFromIndices(primal.getNumResults()))
      inputs.push_back(primal.getResult(r));
  SmallVector<Type> results;
  for (int64_t a : getWrtIndices(primal.getNumInputs()))
    results.push_back(primal.getInput(a));
  for (int64_t k : getKeeping())
    results.push_back(primal.getResult(k));
  return FunctionType::get(primal.getContext(), inputs, results);
}

Attribute TangentAttr::parse(AsmParser &parser, Type) {
  FailureOr<DerivativeParams> p = parseDerivative(parser, /*allowSeedable=*/false);
  if (failed(p))
    return {};
  return TangentAttr::getChecked(
      [&] { return parser.emitError(parser.getNameLoc()); },
      parser.getContext(), p->of, p->wrt, p->keeping, p->from, false);
}
void TangentAttr::print(AsmPrinter &printer) const {
  printDerivative(*this, printer);
}
LogicalResult TangentAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  FlatSymbolRefAttr, DenseI64ArrayAttr wrt,
                                  ArrayRef<int64_t> keeping,
                                  std::optional<int64_t> from, bool seedable) {
  if (seedable)
    return emitError() << "a tangent declaration cannot be 'seedable'";
  return verifyDerivative(emitError, wrt, keeping, from);
}
SmallVector<int64_t> TangentAttr::getWrtIndices(unsigned n) const {
  return wrtIndices(getWrt(), n);
}
SmallVector<int64_t> TangentAttr::getFromIndices(unsigned n) const {
  return fromIndices(getFrom(), n);
}
FunctionType TangentAttr::getExpectedType(FunctionType primal) const {
  SmallVector<Type> inputs(primal.getInputs());
  for (int64_t a : getWrtIndices(primal.getNumInputs()))
    inputs.push_back(primal.getInput(a));
  SmallVector<Type> results;
  for (int64_t r : getFromIndices(primal.getNumResults()))
    results.push_back(primal.getResult(r));
  for (int64_t k : getKeeping())
    results.push_back(primal.getResult(k));
  return FunctionType::get(primal.getContext(), inputs, results);
}

/// Checks a derivative declaration against its primal's signature.
template <typename AttrT>
static LogicalResult verifyDeclaration(Operation *op, AttrT attr,
                                       StringRef attrName) {
  auto fn = dyn_cast<FunctionOpInterface>(op);
  if (!fn)
    return op->emitOpError() << "'" << attrName
                             << "' may only be attached to a function";
  Operation *primalOp = SymbolTable::lookupNearestSymbolFrom(op, attr.getOf());
  auto primal = dyn_cast_or_null<FunctionOpInterface>(primalOp);
  if (!primal)
    return op->emitOpError() << "'" << attrName << "' refers to "
                             << attr.getOf()
                             << ", which is not a function in scope";
  if (primal == fn)
    return op->emitOpError() << "'" << attrName
                             << "' cannot refer to the function itself";
  auto primalType = dyn_cast<FunctionType>(primal.getFunctionType());
  auto type = dyn_cast<FunctionType>(fn.getFunctionType());
  if (!primalType || !type)
    return op->emitOpError() << "'" << attrName
                             << "' needs functions with builtin function types";
  unsigned numArgs = primalType.getNumInputs();
  unsigned numResults = primalType.getNumResults();
  for (int64_t a : attr.getWrtIndices(numArgs))
    if (a >= numArgs)
      return op->emitOpError() << "'wrt' index " << a << " is out of range: "
                               << attr.getOf() << " has " << numArgs
                               << " argument(s)";
  for (int64_t k : attr.getKeeping())
    if (k >= numResults)
      return op->emitOpError() << "'keeping' index " << k
                               << " is out of range: " << attr.getOf()
                               << " has " << numResults << " result(s)";
  if (attr.getFrom() && *attr.getFrom() >= numResults)
    return op->emitOpError() << "'from' index " << *attr.getFrom()
                             << " is out of range: " << attr.getOf() << " has "
                             << numResults << " result(s)";
  if (numResults == 0)
    return op->emitOpError() << attr.getOf()
                             << " has no result to differentiate";
  FunctionType expected = attr.getExpectedType(primalType);
  if (expected != type)
    return op->emitOpError() << "has type " << type << " but " << attrName
                             << " of " << attr.getOf() << " " << primalType
                             << " must have type " << expected;
  return success();
}

LogicalResult DLVMDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kGradientAttrName) {
    auto grad = dyn_cast<GradientAttr>(attr.getValue());
    if (!grad)
      return op->emitOpError() << "'" << name
                               << "' must be a #dlvm.gradient<...> attribute";
    return verifyDeclaration(op, grad, name);
  }
  if (name == kTangentAttrName) {
    auto tan = dyn_cast<TangentAttr>(attr.getValue());
    if (!tan)
      return op->emitOpError() << "'" << name
                               << "' must be a #dlvm.tangent<...> attribute";
    return verifyDeclaration(op, tan, name);
  }
  return success();
}
