/* A fake CUDA driver (libcuda.so.1) for testing the GPU back end's host side without a GPU:
   device memory is host memory, kernels are not run, and every call is logged to
   $DLVM_FAKE_CUDA_LOG (test_gpu.py builds it with cc and loads it via LD_LIBRARY_PATH). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
typedef int CUresult;
static FILE *logf_(void) {
  static FILE *f = NULL;
  if (!f) { const char *p = getenv("DLVM_FAKE_CUDA_LOG"); f = p ? fopen(p, "a") : stderr; setvbuf(f, NULL, _IOLBF, 0); }
  return f;
}
#define LOG(...) fprintf(logf_(), __VA_ARGS__)
/* As the real driver (seen on an H100): torn down at exit before the destructors of
   shared objects run; calls then return CUDA_ERROR_DEINITIALIZED. */
static int deinitialized;
static void deinitialize(void) { deinitialized = 1; }
CUresult cuInit(unsigned f) { static int once; if (!once++) atexit(deinitialize); return 0; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return 0; }
CUresult cuDeviceGet(int *d, int o) { *d = o; return 0; }
CUresult cuDeviceGetAttribute(int *v, int a, int d) { *v = 0; return 0; }
CUresult cuDevicePrimaryCtxRetain(void **c, int d) { static int ctx; *c = &ctx; return 0; }
CUresult cuCtxPushCurrent_v2(void *c) { return 0; }
CUresult cuCtxPopCurrent_v2(void **c) { if (c) *c = 0; return 0; }
CUresult cuGetErrorName(CUresult e, const char **s) { *s = "FAKE_ERROR"; return 0; }
CUresult cuStreamCreate(void **s, unsigned f) { static int n; *s = (void *)(intptr_t)(++n); LOG("stream_create\n"); return 0; }
CUresult cuStreamDestroy_v2(void *s) { LOG("stream_destroy\n"); return 0; }
CUresult cuStreamSynchronize(void *s) { LOG("stream_sync\n"); return 0; }
CUresult cuStreamWaitEvent(void *s, void *e, unsigned f) { return 0; }
CUresult cuEventCreate(void **e, unsigned f) { static int n; *e = (void *)(intptr_t)(++n); return 0; }
CUresult cuEventDestroy_v2(void *e) { return 0; }
CUresult cuEventRecord(void *e, void *s) { return 0; }
CUresult cuEventSynchronize(void *e) { return 0; }
/* DLVM_FAKE_CUDA_ALLOC_LIMIT=N: allocations of N bytes or more fail (CUDA_ERROR_OUT_OF_MEMORY) */
CUresult cuMemAlloc_v2(uint64_t *p, size_t n) {
  const char *limit = getenv("DLVM_FAKE_CUDA_ALLOC_LIMIT");
  if (limit && n >= (size_t)strtoull(limit, NULL, 10)) { LOG("alloc_failed %zu\n", n); return 2; }
  void *m = calloc(1, n ? n : 1); *p = (uint64_t)(uintptr_t)m; LOG("alloc %zu %p\n", n, m); return 0;
}
CUresult cuMemAllocManaged(uint64_t *p, size_t n, unsigned f) { return cuMemAlloc_v2(p, n); }
CUresult cuMemFree_v2(uint64_t p) { LOG("free %p\n", (void *)(uintptr_t)p); free((void *)(uintptr_t)p); return 0; }
CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned f) { return 0; }
CUresult cuMemHostUnregister(void *p) { return 0; }
CUresult cuMemcpy(uint64_t d, uint64_t s, size_t n) { memcpy((void *)(uintptr_t)d, (void *)(uintptr_t)s, n); LOG("memcpy %zu %p %p\n", n, (void*)(uintptr_t)d, (void*)(uintptr_t)s); return 0; }
CUresult cuMemcpyAsync(uint64_t d, uint64_t s, size_t n, void *st) { return cuMemcpy(d, s, n); }
CUresult cuMemsetD16Async(uint64_t d, unsigned short v, size_t n, void *s) { return 0; }
CUresult cuMemsetD32Async(uint64_t d, unsigned v, size_t n, void *s) { return 0; }
CUresult cuModuleLoadData(void **m, const void *img) {
  static int mod; *m = &mod;
  const unsigned char *b = img;
  LOG("module_load %s\n", (b[0] == 0x7f && b[1] == 'E') ? "cubin" : (b[0] == '/' ? "ptx" : "unknown"));
  return 0;
}
CUresult cuModuleLoadDataEx(void **m, const void *img, unsigned n, void *o, void **v) { return cuModuleLoadData(m, img); }
CUresult cuModuleUnload(void *m) { if (deinitialized) return 4; LOG("module_unload\n"); return 0; }
CUresult cuModuleGetFunction(void **f, void *m, const char *name) { *f = strdup(name); LOG("get_function %s\n", name); return 0; }
CUresult cuFuncSetAttribute(void *f, int a, int v) { return 0; }
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned smem, void *s, void **params, void **extra) {
  LOG("launch %s %u %u %u %u %u %u %u\n", (const char *)f, gx, gy, gz, bx, by, bz, smem);
  return 0;
}
CUresult cuLaunchKernelEx(const void *cfg, void *f, void **params, void **extra) { LOG("launch_ex\n"); return 0; }
CUresult cuTensorMapEncodeTiled(void *t, ...) { return 0; }
