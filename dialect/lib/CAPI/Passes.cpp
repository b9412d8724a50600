//===- Passes.cpp - C API for the dlvm C++ passes -------------------------===//
#include "dlvm-c/Passes.h"
#include "dlvm/Passes.h"

#include <mutex>

void dlvmRegisterPasses(void) {
  // Registering a pass twice asserts in debug builds of MLIR and is pointless
  // otherwise: do it once per process.
  static std::once_flag once;
  std::call_once(once, [] { mlir::dlvm::registerDLVMPasses(); });
}
