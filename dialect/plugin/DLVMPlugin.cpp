//===- DLVMPlugin.cpp - plugin for the stock mlir-opt ---------------------===//
//
// `mlir-opt --load-dialect-plugin=libDLVMPlugin.so` parses, prints, verifies
// and canonicalizes dlvm IR. The same library is a pass plugin:
// `--load-pass-plugin=libDLVMPlugin.so` registers the dlvm C++ passes, to be
// named in a pipeline: `--pass-pipeline='builtin.module(dlvm-to-linalg)'`.
// (mlir-opt parses its pass flags before it loads the plugin, so it has no
// `--dlvm-to-linalg` flag; `dlvm-opt --dlvm-to-linalg` does.)
//
//===----------------------------------------------------------------------===//
#include "dlvm/DLVMOps.h"
#include "dlvm/Passes.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"

extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "DLVM", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            registry->insert<mlir::dlvm::DLVMDialect>();
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "DLVMPasses", LLVM_VERSION_STRING,
          []() { mlir::dlvm::registerDLVMPasses(); }};
}
