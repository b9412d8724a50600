//===- CudaModules.cpp - unloading the kernels of CUDA artifacts -----------===//
//
// A CUDA artifact's host code loads its kernels in a global constructor
// (`mgpuModuleLoad`) and unloads them in a global destructor
// (`mgpuModuleUnload`), both from MLIR's libmlir_cuda_runtime.so. At process
// exit the driver has already torn itself down when the destructors of
// shared objects run, so MLIR's `mgpuModuleUnload` printed
// "'cuModuleUnload(module)' failed with '<unknown>'" at the end of every
// program that had loaded one (seen on an H100: cuModuleUnload returns
// CUDA_ERROR_DEINITIALIZED there; unloading an artifact before exit works).
//
// This definition takes MLIR's place: artifacts link libdlvm_runtime.so before
// libmlir_cuda_runtime.so, so their reference binds here. A driver that is
// already deinitialized has freed the module with everything else; any other
// error is reported as MLIR's wrapper reports it. The driver is found among
// the loaded libraries (libmlir_cuda_runtime.so loaded it), so this runtime
// does not depend on CUDA.
//
//===----------------------------------------------------------------------===//
#include "dlvm-runtime/Runtime.h"

#include <cstdio>
#include <dlfcn.h>

namespace {
constexpr int kCudaErrorDeinitialized = 4;

using ModuleUnloadFn = int (*)(void *);
using GetErrorNameFn = int (*)(int, const char **);

void *cudaDriver() {
  static void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  return driver;
}
} // namespace

extern "C" DLVM_RUNTIME_EXPORT void mgpuModuleUnload(void *module) {
  void *driver = cudaDriver();
  auto unload = driver ? reinterpret_cast<ModuleUnloadFn>(dlsym(driver, "cuModuleUnload")) : nullptr;
  if (!unload) // no driver loaded: no module can have been loaded either
    return;
  int status = unload(module);
  if (status == 0 || status == kCudaErrorDeinitialized)
    return;
  const char *name = nullptr;
  if (auto errorName = reinterpret_cast<GetErrorNameFn>(dlsym(driver, "cuGetErrorName")))
    errorName(status, &name);
  std::fprintf(stderr, "'cuModuleUnload(module)' failed with '%s'\n", name ? name : "<unknown>");
}
