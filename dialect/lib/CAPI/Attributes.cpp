//===- Attributes.cpp - C API for dlvm attributes -------------------------===//
#include "dlvm-c/Attributes.h"
#include "dlvm/DLVMDialect.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace mlir::dlvm;

namespace {
/// Calls `fn` with the attribute as GradientAttr or TangentAttr.
template <typename Fn>
auto visitDerivative(MlirAttribute attr, Fn &&fn) {
  Attribute a = unwrap(attr);
  if (auto g = dyn_cast<GradientAttr>(a))
    return fn(g);
  return fn(cast<TangentAttr>(a));
}
} // namespace

bool dlvmAttributeIsADerivative(MlirAttribute attr) {
  return isa<GradientAttr, TangentAttr>(unwrap(attr));
}
int dlvmDerivativeGetKind(MlirAttribute attr) {
  return isa<GradientAttr>(unwrap(attr)) ? DlvmDerivativeGradient
                                         : DlvmDerivativeTangent;
}
MlirStringRef dlvmDerivativeGetOf(MlirAttribute attr) {
  return visitDerivative(attr, [](auto a) { return wrap(a.getOf().getValue()); });
}
bool dlvmDerivativeHasWrt(MlirAttribute attr) {
  return visitDerivative(attr, [](auto a) { return bool(a.getWrt()); });
}
intptr_t dlvmDerivativeGetNumWrt(MlirAttribute attr) {
  return visitDerivative(attr, [](auto a) -> intptr_t {
    return a.getWrt() ? a.getWrt().size() : 0;
  });
}
int64_t dlvmDerivativeGetWrt(MlirAttribute attr, intptr_t pos) {
  return visitDerivative(attr, [&](auto a) { return a.getWrt()[pos]; });
}
intptr_t dlvmDerivativeGetNumKeeping(MlirAttribute attr) {
  return visitDerivative(attr, [](auto a) -> intptr_t { return a.getKeeping().size(); });
}
int64_t dlvmDerivativeGetKeeping(MlirAttribute attr, intptr_t pos) {
  return visitDerivative(attr, [&](auto a) { return a.getKeeping()[pos]; });
}
bool dlvmDerivativeHasFrom(MlirAttribute attr) {
  return visitDerivative(attr, [](auto a) { return a.getFrom().has_value(); });
}
int64_t dlvmDerivativeGetFrom(MlirAttribute attr) {
  return visitDerivative(attr, [](auto a) { return *a.getFrom(); });
}
bool dlvmDerivativeGetSeedable(MlirAttribute attr) {
  return visitDerivative(attr, [](auto a) { return a.getSeedable(); });
}

MlirAttribute dlvmDerivativeGet(MlirContext ctx, int kind, MlirStringRef of,
                                const int64_t *wrt, intptr_t numWrt,
                                const int64_t *keeping, intptr_t numKeeping,
                                int64_t from, bool seedable) {
  MLIRContext *context = unwrap(ctx);
  auto sym = FlatSymbolRefAttr::get(context, unwrap(of));
  DenseI64ArrayAttr wrtAttr =
      wrt ? DenseI64ArrayAttr::get(context, ArrayRef<int64_t>(wrt, numWrt))
          : DenseI64ArrayAttr();
  ArrayRef<int64_t> keep(keeping, numKeeping);
  std::optional<int64_t> fromOpt =
      from >= 0 ? std::optional<int64_t>(from) : std::nullopt;
  auto emit = [&] { return emitError(UnknownLoc::get(context)); };
  if (kind == DlvmDerivativeGradient)
    return wrap(GradientAttr::getChecked(emit, context, sym, wrtAttr, keep,
                                         fromOpt, seedable));
  return wrap(TangentAttr::getChecked(emit, context, sym, wrtAttr, keep,
                                      fromOpt, seedable));
}

MlirType dlvmDerivativeGetExpectedType(MlirAttribute attr, MlirType primalType) {
  auto primal = cast<FunctionType>(unwrap(primalType));
  return visitDerivative(attr, [&](auto a) { return wrap(a.getExpectedType(primal)); });
}
