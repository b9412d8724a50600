//===- DLVMPlugin.cpp - plugin for the stock mlir-opt ---------------------===//
//
// `mlir-opt --load-dialect-plugin=libDLVMPlugin.so` parses, prints, verifies
// and canonicalizes dlvm IR.
//
//===----------------------------------------------------------------------===//
#include "dlvm/DLVMOps.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "llvm/Config/llvm-config.h"

extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "DLVM", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            registry->insert<mlir::dlvm::DLVMDialect>();
          }};
}
