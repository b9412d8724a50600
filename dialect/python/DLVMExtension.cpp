//===- DLVMExtension.cpp - nanobind module dlvm_mlir._dlvm ----------------===//
//
// Registers the dlvm dialect into the `mlir` Python bindings. Links only the
// wheel's libMLIRPythonCAPI.so (one copy of MLIR per process).
//
//===----------------------------------------------------------------------===//
#include "dlvm-c/Dialect.h"

#include "mlir/Bindings/Python/NanobindAdaptors.h"

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
}
