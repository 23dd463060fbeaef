// ctxprobe2: what sets the mode of small SM copies between two GPUs (2026-11-25, issue 25)?
// Each trial creates fresh contexts on both GPUs (cuCtxCreate), loads p2pbench's copy.ptx and latch.ptx,
// allocates buffers, enables peer access both ways, and times 4 KiB copies by each GPU, pulling and
// pushing, as p2pbench does: 100 launches queued behind a latch kernel (the stream held until all are
// enqueued), between two events; three windows, the median. Usage: ctxprobe2 DIR_WITH_PTX [trials]
#include <cuda.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <string>
#include <fstream>
#include <sstream>
#include <algorithm>
#include <sched.h>
#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s; cuGetErrorName(r_, &s); fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s); exit(1);} } while (0)
static std::string slurp(const std::string &p) { std::ifstream in(p); std::stringstream ss; ss << in.rdbuf(); return ss.str(); }
static std::string copyPtx, latchPtx;
struct Side { CUcontext ctx; CUmodule mc, ml; CUfunction copy, latch; CUdeviceptr buf; CUstream s; CUevent a, b; int sms; volatile unsigned *flag; CUdeviceptr dflag, dstatus; };
static void open(Side *sd) {
  for (int d = 0; d < 2; d++) {
    Side &x = sd[d];
    CUdevice dev; CK(cuDeviceGet(&dev, d));
#if CUDA_VERSION >= 13000
    CK(cuCtxCreate(&x.ctx, nullptr, 0, dev));
#else
    CK(cuCtxCreate(&x.ctx, 0, dev));
#endif
    CK(cuDeviceGetAttribute(&x.sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    CK(cuModuleLoadData(&x.mc, copyPtx.c_str())); CK(cuModuleGetFunction(&x.copy, x.mc, "p2p_copy_v4_u8"));
    CK(cuModuleLoadData(&x.ml, latchPtx.c_str())); CK(cuModuleGetFunction(&x.latch, x.ml, "p2p_latch"));
    CK(cuMemAlloc(&x.buf, 2 << 20)); CK(cuMemsetD8(x.buf, 1, 2 << 20));
    CK(cuStreamCreate(&x.s, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate(&x.a, 0)); CK(cuEventCreate(&x.b, 0));
    void *h; CK(cuMemHostAlloc(&h, 4096, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
    x.flag = (volatile unsigned *)h; CK(cuMemHostGetDevicePointer(&x.dflag, h, 0)); x.dstatus = x.dflag + 64;
  }
  for (int d = 0; d < 2; d++) { CK(cuCtxSetCurrent(sd[d].ctx)); CK(cuCtxEnablePeerAccess(sd[1 - d].ctx, 0)); }
}
static void close(Side *sd) { for (int d = 0; d < 2; d++) CK(cuCtxDestroy(sd[d].ctx)); }
static double timeCopy(Side &x, CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
  CK(cuCtxSetCurrent(x.ctx));
  unsigned reps = 1;
  void *args[] = {&dst, &src, &bytes, &reps};
  unsigned grid = x.sms * 2;
  std::vector<double> v;
  for (int w = 0; w < 4; w++) {
    x.flag[0] = 0;
    unsigned long long timeout = 2000000000ull;
    void *largs[] = {&x.dflag, &x.dstatus, &timeout};
    CK(cuLaunchKernel(x.latch, 1, 1, 1, 1, 1, 1, 0, x.s, largs, 0));
    for (int i = 0; i < 4; i++) CK(cuLaunchKernel(x.copy, grid, 1, 1, 512, 1, 1, 0, x.s, args, 0));
    CK(cuEventRecord(x.a, x.s));
    for (int i = 0; i < 100; i++) CK(cuLaunchKernel(x.copy, grid, 1, 1, 512, 1, 1, 0, x.s, args, 0));
    CK(cuEventRecord(x.b, x.s));
    __sync_synchronize(); x.flag[0] = 1;
    CK(cuEventSynchronize(x.b));
    float ms; CK(cuEventElapsedTime(&ms, x.a, x.b));
    if (w > 0) v.push_back(ms * 1000.0 / 100);
  }
  std::sort(v.begin(), v.end()); return v[1];
}
int main(int argc, char **argv) {
  std::string dir = argv[1];
  copyPtx = slurp(dir + "/copy.ptx"); latchPtx = slurp(dir + "/latch.ptx");
  int trials = argc > 2 ? atoi(argv[2]) : 4;
  CK(cuInit(0));
  Side sd[2];
  for (int t = 0; t < trials; t++) {
    open(sd);
    double r0 = timeCopy(sd[0], sd[0].buf, sd[1].buf + (1 << 20), 4096);
    double w0 = timeCopy(sd[0], sd[1].buf, sd[0].buf + (1 << 20), 4096);
    double r1 = timeCopy(sd[1], sd[1].buf, sd[0].buf + (1 << 20), 4096);
    double w1 = timeCopy(sd[1], sd[0].buf, sd[1].buf + (1 << 20), 4096);
    printf("cpu %2d context %d: us/copy 4KiB: dev0 pulls %.3f pushes %.3f | dev1 pulls %.3f pushes %.3f\n", sched_getcpu(), t, r0, w0, r1, w1);
    fflush(stdout);
    close(sd);
  }
  return 0;
}
