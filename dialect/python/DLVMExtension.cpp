//===- DLVMExtension.cpp - nanobind module dlvm_mlir._dlvm ----------------===//
//
// Registers the dlvm dialect into the `mlir` Python bindings. Links only the
// wheel's libMLIRPythonCAPI.so (one copy of MLIR per process).
//
//===----------------------------------------------------------------------===//
#include "dlvm-c/Attributes.h"
#include "dlvm-c/Diagnostics.h"
#include "dlvm-c/Dialect.h"
#include "dlvm-c/Passes.h"

#include "mlir/Bindings/Python/NanobindAdaptors.h"
#include "mlir-c/BuiltinTypes.h"

#include <optional>
#include <string>
#include <vector>

namespace nb = nanobind;

NB_MODULE(_dlvm, m) {
  m.doc() = "dlvm dialect registration for the mlir Python bindings";

  m.def(
      "register_dialect",
      [](MlirDialectRegistry registry) {
        mlirDialectHandleInsertDialect(mlirGetDialectHandle__dlvm__(), registry);
      },
      nb::arg("registry"), "Inserts the dlvm dialect into a DialectRegistry.");

  m.def(
      "load_dialect",
      [](MlirContext context) {
        MlirDialectHandle h = mlirGetDialectHandle__dlvm__();
        mlirDialectHandleRegisterDialect(h, context);
        mlirDialectHandleLoadDialect(h, context);
      },
      nb::arg("context"), "Registers and loads the dlvm dialect in a Context.");

  // Derivative declarations (#dlvm.gradient / #dlvm.tangent). The Python
  // wrapper is dlvm_mlir.dialects.dlvm.DerivativeDecl.
  m.def("is_derivative_attr", &dlvmAttributeIsADerivative, nb::arg("attr"));
  m.def(
      "derivative_attr_fields",
      [](MlirAttribute attr) {
        if (!dlvmAttributeIsADerivative(attr))
          throw nb::value_error("expected a #dlvm.gradient or #dlvm.tangent attribute");
        MlirStringRef of = dlvmDerivativeGetOf(attr);
        std::optional<std::vector<int64_t>> wrt;
        if (dlvmDerivativeHasWrt(attr)) {
          wrt.emplace();
          for (intptr_t i = 0, e = dlvmDerivativeGetNumWrt(attr); i < e; ++i)
            wrt->push_back(dlvmDerivativeGetWrt(attr, i));
        }
        std::vector<int64_t> keeping;
        for (intptr_t i = 0, e = dlvmDerivativeGetNumKeeping(attr); i < e; ++i)
          keeping.push_back(dlvmDerivativeGetKeeping(attr, i));
        std::optional<int64_t> from;
        if (dlvmDerivativeHasFrom(attr))
          from = dlvmDerivativeGetFrom(attr);
        return nb::make_tuple(
            dlvmDerivativeGetKind(attr) == DlvmDerivativeGradient ? "gradient" : "tangent",
            std::string(of.data, of.length), wrt, keeping, from,
            dlvmDerivativeGetSeedable(attr));
      },
      nb::arg("attr"),
      "(kind, of, wrt or None, keeping, from or None, seedable) of a derivative attribute.");
  m.def(
      "derivative_attr_get",
      [](MlirContext ctx, const std::string &kind, const std::string &of,
         std::optional<std::vector<int64_t>> wrt, std::vector<int64_t> keeping,
         std::optional<int64_t> from, bool seedable) {
        int k = kind == "gradient" ? DlvmDerivativeGradient : DlvmDerivativeTangent;
        if (kind != "gradient" && kind != "tangent")
          throw nb::value_error("kind must be 'gradient' or 'tangent'");
        MlirAttribute attr = dlvmDerivativeGet(
            ctx, k, mlirStringRefCreate(of.data(), of.size()),
            wrt ? wrt->data() : nullptr, wrt ? wrt->size() : 0, keeping.data(),
            keeping.size(), from.value_or(-1), seedable);
        if (mlirAttributeIsNull(attr))
          throw nb::value_error("invalid derivative declaration parameters");
        return attr;
      },
      nb::arg("context"), nb::arg("kind"), nb::arg("of"), nb::arg("wrt").none(),
      nb::arg("keeping"), nb::arg("from_").none(), nb::arg("seedable"));
  m.def(
      "derivative_expected_type",
      [](MlirAttribute attr, MlirType primal) {
        if (!dlvmAttributeIsADerivative(attr) || !mlirTypeIsAFunction(primal))
          throw nb::value_error("expected a derivative attribute and a FunctionType");
        return dlvmDerivativeGetExpectedType(attr, primal);
      },
      nb::arg("attr"), nb::arg("primal_type"),
      "The FunctionType a declaration must have, given its primal's type.");

  // Through the C entry point: this file is compiled with RTTI, MLIR's C++
  // without (see dlvm-c/Passes.h).
  m.def(
      "register_passes", []() { dlvmRegisterPasses(); },
      "Registers the dlvm C++ passes (dlvm-to-linalg) with MLIR's global pass "
      "registry, so textual pipelines (PassManager.parse) can name them.");

  // The upstream bindings emit errors only (Location.emit_error).
  m.def(
      "emit_diagnostic",
      [](MlirLocation location, const std::string &severity,
         const std::string &message) {
        MlirDiagnosticSeverity level;
        if (severity == "error")
          level = MlirDiagnosticError;
        else if (severity == "warning")
          level = MlirDiagnosticWarning;
        else if (severity == "remark")
          level = MlirDiagnosticRemark;
        else
          throw nb::value_error("severity must be 'error', 'warning' or 'remark'");
        dlvmEmitDiagnostic(location, level,
                           mlirStringRefCreate(message.data(), message.size()));
      },
      nb::arg("location"), nb::arg("severity"), nb::arg("message"),
      "Emits a diagnostic of the given severity at a Location.");
}
