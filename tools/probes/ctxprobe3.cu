// ctxprobe3: small SM copies' mode between two GPUs (issue 25, 2026-11-25): what a fresh context costs,
// part by part; whether streams of one context, or green contexts of one device, each take their own
// mode as fresh contexts do (ctxprobe2). Copies as p2pbench times them: 4 KiB, 100 launches behind a latch.
// Usage: ctxprobe3 DIR_WITH_PTX
#include <cuda.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <string>
#include <fstream>
#include <sstream>
#include <algorithm>
#include <chrono>
#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s; cuGetErrorName(r_, &s); fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s); exit(1);} } while (0)
#define TRY(x) ([&]() { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s; cuGetErrorName(r_, &s); printf("  %s: %s\n", #x, s); return false; } return true; }())
static double now() { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
static std::string slurp(const std::string &p) { std::ifstream in(p); std::stringstream ss; ss << in.rdbuf(); return ss.str(); }
static std::string copyPtx, latchPtx;
struct Side { CUcontext ctx; CUfunction copy, latch; CUdeviceptr buf; CUevent a, b; int sms; volatile unsigned *flag; CUdeviceptr dflag; };
static void load(Side &x) {
  CUmodule m; CK(cuModuleLoadData(&m, copyPtx.c_str())); CK(cuModuleGetFunction(&x.copy, m, "p2p_copy_v4_u8"));
  CK(cuModuleLoadData(&m, latchPtx.c_str())); CK(cuModuleGetFunction(&x.latch, m, "p2p_latch"));
  CK(cuEventCreate(&x.a, 0)); CK(cuEventCreate(&x.b, 0));
}
static double timeCopy(Side &x, CUstream s, CUdeviceptr dst, CUdeviceptr src) {
  CK(cuCtxSetCurrent(x.ctx));
  size_t bytes = 4096; unsigned reps = 1;
  void *args[] = {&dst, &src, &bytes, &reps};
  unsigned grid = x.sms * 2;
  std::vector<double> v;
  for (int w = 0; w < 4; w++) {
    x.flag[0] = 0;
    unsigned long long timeout = 2000000000ull; CUdeviceptr st = x.dflag + 64;
    void *largs[] = {&x.dflag, &st, &timeout};
    CK(cuLaunchKernel(x.latch, 1, 1, 1, 1, 1, 1, 0, s, largs, 0));
    for (int i = 0; i < 4; i++) CK(cuLaunchKernel(x.copy, grid, 1, 1, 512, 1, 1, 0, s, args, 0));
    CK(cuEventRecord(x.a, s));
    for (int i = 0; i < 100; i++) CK(cuLaunchKernel(x.copy, grid, 1, 1, 512, 1, 1, 0, s, args, 0));
    CK(cuEventRecord(x.b, s));
    __sync_synchronize(); x.flag[0] = 1;
    CK(cuEventSynchronize(x.b));
    float ms; CK(cuEventElapsedTime(&ms, x.a, x.b));
    if (w > 0) v.push_back(ms * 1000.0 / 100);
  }
  std::sort(v.begin(), v.end()); return v[1];
}
static void flagFor(Side &x) {
  void *h; CK(cuMemHostAlloc(&h, 4096, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
  x.flag = (volatile unsigned *)h; CK(cuMemHostGetDevicePointer(&x.dflag, h, 0));
}
int main(int argc, char **argv) {
  std::string dir = argv[1];
  copyPtx = slurp(dir + "/copy.ptx"); latchPtx = slurp(dir + "/latch.ptx");
  double t0 = now(); CK(cuInit(0)); printf("cuInit %.1f ms\n", now() - t0);
  Side sd[2];
  // 1. what a fresh pair of contexts costs, part by part (three times)
  for (int t = 0; t < 3; t++) {
    double c = 0, m = 0, a = 0, p = 0;
    for (int d = 0; d < 2; d++) {
      CUdevice dev; CK(cuDeviceGet(&dev, d));
      t0 = now();
#if CUDA_VERSION >= 13000
      CK(cuCtxCreate(&sd[d].ctx, nullptr, 0, dev));
#else
      CK(cuCtxCreate(&sd[d].ctx, 0, dev));
#endif
      c += now() - t0; t0 = now();
      CK(cuDeviceGetAttribute(&sd[d].sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
      load(sd[d]); m += now() - t0; t0 = now();
      CK(cuMemAlloc(&sd[d].buf, 2 << 20)); CK(cuMemsetD8(sd[d].buf, 1, 2 << 20)); flagFor(sd[d]); a += now() - t0;
    }
    t0 = now();
    for (int d = 0; d < 2; d++) { CK(cuCtxSetCurrent(sd[d].ctx)); CK(cuCtxEnablePeerAccess(sd[1 - d].ctx, 0)); }
    p = now() - t0;
    t0 = now();
    for (int d = 0; d < 2; d++) CK(cuCtxDestroy(sd[d].ctx));
    printf("fresh contexts of both GPUs: create %.1f ms, modules and events %.1f, small buffers %.1f, peer access %.1f, destroy %.1f\n", c, m, a, p, now() - t0);
  }
  // 2. streams of one context each (primary contexts, as p2pbench)
  for (int d = 0; d < 2; d++) {
    CUdevice dev; CK(cuDeviceGet(&dev, d)); CK(cuDevicePrimaryCtxRetain(&sd[d].ctx, dev)); CK(cuCtxSetCurrent(sd[d].ctx));
    CK(cuDeviceGetAttribute(&sd[d].sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    load(sd[d]); CK(cuMemAlloc(&sd[d].buf, 2 << 20)); CK(cuMemsetD8(sd[d].buf, 1, 2 << 20)); flagFor(sd[d]);
  }
  for (int d = 0; d < 2; d++) { CK(cuCtxSetCurrent(sd[d].ctx)); CK(cuCtxEnablePeerAccess(sd[1 - d].ctx, 0)); }
  for (int k = 0; k < 8; k++) {
    CUstream s[2];
    for (int d = 0; d < 2; d++) { CK(cuCtxSetCurrent(sd[d].ctx)); CK(cuStreamCreate(&s[d], CU_STREAM_NON_BLOCKING)); }
    double r0 = timeCopy(sd[0], s[0], sd[0].buf, sd[1].buf + (1 << 20)), r1 = timeCopy(sd[1], s[1], sd[1].buf, sd[0].buf + (1 << 20));
    printf("primary contexts, stream %d: us/copy 4KiB: dev0 pulls %.3f | dev1 pulls %.3f\n", k, r0, r1);
  }
  // 3. green contexts (all SMs) of each device, on the primary contexts' memory
  for (int k = 0; k < 6; k++) {
    double r[2] = {0, 0};
    bool ok = true;
    double tg = now();
    for (int d = 0; d < 2 && ok; d++) {
      CUdevice dev; CK(cuDeviceGet(&dev, d));
      CUdevResource res; CUdevResourceDesc desc; CUgreenCtx g; CUcontext gc; CUstream s;
      ok = TRY(cuDeviceGetDevResource(dev, &res, CU_DEV_RESOURCE_TYPE_SM)) && TRY(cuDevResourceGenerateDesc(&desc, &res, 1)) &&
           TRY(cuGreenCtxCreate(&g, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM)) && TRY(cuCtxFromGreenCtx(&gc, g)) &&
           TRY(cuGreenCtxStreamCreate(&s, g, CU_STREAM_NON_BLOCKING, 0));
      if (!ok) break;
      Side x = sd[d]; x.ctx = gc;
      CK(cuCtxSetCurrent(gc)); load(x);
      if (!TRY(cuCtxEnablePeerAccess(sd[1 - d].ctx, 0))) { /* may already be reachable through the primary context */ }
      r[d] = timeCopy(x, s, sd[d].buf, sd[1 - d].buf + (1 << 20));
    }
    if (!ok) { printf("green contexts unavailable\n"); break; }
    printf("green contexts %d (%.1f ms to make both): us/copy 4KiB: dev0 pulls %.3f | dev1 pulls %.3f\n", k, now() - tg, r[0], r[1]);
  }
  return 0;
}
