// ctxprobe4 (issue 25, 2026-11-25): can a green context's stream carry what p2pbench issues there —
// cuMemcpyPeerAsync with the primary contexts as the memory's contexts, cuMemcpyAsync, cuMemsetD32Async,
// events of the green context — and do small copy-engine copies take a mode per context as SM copies do?
// 4 KiB pulls by the copy engine, 100 behind a latch (p2pbench's latch.ptx), in the primary context and in
// six green contexts of each device. Usage: ctxprobe4 DIR_WITH_PTX
#include <cuda.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <string>
#include <fstream>
#include <sstream>
#include <algorithm>
#include <unistd.h>
#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s; cuGetErrorName(r_, &s); fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s); exit(1);} } while (0)
#define TRY(x) ([&]() { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s; cuGetErrorName(r_, &s); printf("  FAILED %s: %s\n", #x, s); return false; } return true; }())
static std::string slurp(const std::string &p) { std::ifstream in(p); std::stringstream ss; ss << in.rdbuf(); return ss.str(); }
CUcontext prim[2]; CUdeviceptr buf[2]; volatile unsigned *flag; CUdeviceptr dflag;
struct Work { CUcontext ctx; CUstream s; CUevent a, b; CUfunction latch; };
static Work make(int d, CUcontext ctx, CUgreenCtx g) {
  Work w; w.ctx = ctx; CK(cuCtxSetCurrent(ctx));
  if (g) CK(cuGreenCtxStreamCreate(&w.s, g, CU_STREAM_NON_BLOCKING, 0)); else CK(cuStreamCreate(&w.s, CU_STREAM_NON_BLOCKING));
  CK(cuEventCreate(&w.a, 0)); CK(cuEventCreate(&w.b, 0));
  static std::string lp; CUmodule m; CK(cuModuleLoadData(&m, lp.empty() ? (lp = slurp("latch.ptx")).c_str() : lp.c_str()));
  CK(cuModuleGetFunction(&w.latch, m, "p2p_latch"));
  return w;
}
static double pulls(int d, Work &w) { // device d pulls 4 KiB from the other device, by the copy engine
  CK(cuCtxSetCurrent(w.ctx));
  std::vector<double> v;
  for (int k = 0; k < 4; k++) {
    flag[0] = 0; unsigned long long timeout = 2000000000ull; CUdeviceptr st = dflag + 64;
    void *largs[] = {&dflag, &st, &timeout};
    CK(cuLaunchKernel(w.latch, 1, 1, 1, 1, 1, 1, 0, w.s, largs, 0));
    for (int i = 0; i < 4; i++) CK(cuMemcpyPeerAsync(buf[d], prim[d], buf[1 - d] + (1 << 20), prim[1 - d], 4096, w.s));
    CK(cuEventRecord(w.a, w.s));
    for (int i = 0; i < 100; i++) CK(cuMemcpyPeerAsync(buf[d], prim[d], buf[1 - d] + (1 << 20), prim[1 - d], 4096, w.s));
    CK(cuEventRecord(w.b, w.s));
    __sync_synchronize(); flag[0] = 1;
    CK(cuEventSynchronize(w.b));
    float ms; CK(cuEventElapsedTime(&ms, w.a, w.b)); if (k) v.push_back(ms * 10.0);
  }
  std::sort(v.begin(), v.end()); return v[1];
}
int main(int argc, char **argv) {
  if (argc > 1 && chdir(argv[1]) != 0) return 1;
  CK(cuInit(0));
  for (int d = 0; d < 2; d++) { CUdevice dev; CK(cuDeviceGet(&dev, d)); CK(cuDevicePrimaryCtxRetain(&prim[d], dev)); CK(cuCtxSetCurrent(prim[d])); CK(cuMemAlloc(&buf[d], 2 << 20)); CK(cuMemsetD8(buf[d], 7, 2 << 20)); }
  for (int d = 0; d < 2; d++) { CK(cuCtxSetCurrent(prim[d])); CK(cuCtxEnablePeerAccess(prim[1 - d], 0)); }
  void *h; CK(cuCtxSetCurrent(prim[0])); CK(cuMemHostAlloc(&h, 4096, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP)); flag = (volatile unsigned *)h; CK(cuMemHostGetDevicePointer(&dflag, h, 0));
  Work p0 = make(0, prim[0], 0), p1 = make(1, prim[1], 0);
  printf("primary contexts: CE 4 KiB pulls us/copy: dev0 %.3f | dev1 %.3f\n", pulls(0, p0), pulls(1, p1));
  for (int k = 0; k < 6; k++) {
    Work w[2]; CUgreenCtx g[2];
    for (int d = 0; d < 2; d++) {
      CUdevice dev; CK(cuDeviceGet(&dev, d)); CUdevResource res; CUdevResourceDesc desc; CUcontext gc;
      CK(cuDeviceGetDevResource(dev, &res, CU_DEV_RESOURCE_TYPE_SM)); CK(cuDevResourceGenerateDesc(&desc, &res, 1));
      CK(cuGreenCtxCreate(&g[d], desc, dev, CU_GREEN_CTX_DEFAULT_STREAM)); CK(cuCtxFromGreenCtx(&gc, g[d]));
      w[d] = make(d, gc, g[d]);
    }
    if (k == 0) { // the other calls p2pbench makes in a green context
      CK(cuCtxSetCurrent(w[0].ctx));
      bool ok = TRY(cuMemcpyAsync(buf[0], buf[1] + 4096, 4096, w[0].s)) && TRY(cuMemsetD32Async(buf[0] + 8192, 0xDEADBEEF, 1024, w[0].s)) &&
                TRY(cuStreamSynchronize(w[0].s));
      unsigned v = 0; ok = ok && TRY(cuMemcpyDtoH(&v, buf[0] + 8192, 4));
      printf("green context: cuMemcpyAsync, cuMemsetD32Async, cuMemcpyDtoH %s (word %#x)\n", ok ? "ok" : "FAILED", v);
    }
    printf("green contexts %d: CE 4 KiB pulls us/copy: dev0 %.3f | dev1 %.3f\n", k, pulls(0, w[0]), pulls(1, w[1]));
    for (int d = 0; d < 2; d++) CK(cuGreenCtxDestroy(g[d]));
  }
  return 0;
}
