// ctxprobe: does a fresh CUDA context (or module, or stream) change the mode of small SM copies between two GPUs?
// Usage: ctxprobe copy.ptx [trials]
#include <cuda.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <string>
#include <fstream>
#include <sstream>
#include <algorithm>
#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s; cuGetErrorName(r_, &s); fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s); exit(1);} } while (0)
static std::string ptx;
struct Side { CUcontext ctx; CUmodule mod; CUfunction f; CUdeviceptr buf; CUstream s; CUevent a, b; int sms; };
static void load(Side &x) { CK(cuModuleLoadData(&x.mod, ptx.c_str())); CK(cuModuleGetFunction(&x.f, x.mod, "p2p_copy_v4_u8")); }
static double timeCopy(Side &x, CUdeviceptr dst, CUdeviceptr src, size_t bytes, int reps) {
  CK(cuCtxSetCurrent(x.ctx));
  void *args[] = {&dst, &src, &bytes};
  unsigned grid = x.sms * 2;
  for (int i = 0; i < 50; i++) CK(cuLaunchKernel(x.f, grid, 1, 1, 512, 1, 1, 0, x.s, args, 0));
  double best = 1e9;
  std::vector<double> v;
  for (int w = 0; w < 5; w++) {
    CK(cuEventRecord(x.a, x.s));
    for (int i = 0; i < reps; i++) CK(cuLaunchKernel(x.f, grid, 1, 1, 512, 1, 1, 0, x.s, args, 0));
    CK(cuEventRecord(x.b, x.s)); CK(cuEventSynchronize(x.b));
    float ms; CK(cuEventElapsedTime(&ms, x.a, x.b)); v.push_back(ms * 1000.0 / reps);
  }
  std::sort(v.begin(), v.end()); return v[2];
}
static void open(Side *sd, int trial) {
  for (int d = 0; d < 2; d++) {
    CUdevice dev; CK(cuDeviceGet(&dev, d));
    #if CUDA_VERSION >= 13000
    CK(cuCtxCreate(&sd[d].ctx, nullptr, 0, dev));
#else
    CK(cuCtxCreate(&sd[d].ctx, 0, dev));
#endif
    CK(cuDeviceGetAttribute(&sd[d].sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    load(sd[d]);
    CK(cuMemAlloc(&sd[d].buf, 2 << 20)); CK(cuMemsetD8(sd[d].buf, trial, 2 << 20));
    CK(cuStreamCreate(&sd[d].s, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate(&sd[d].a, 0)); CK(cuEventCreate(&sd[d].b, 0));
  }
  for (int d = 0; d < 2; d++) { CK(cuCtxSetCurrent(sd[d].ctx)); CK(cuCtxEnablePeerAccess(sd[1 - d].ctx, 0)); }
}
static void close(Side *sd) { for (int d = 0; d < 2; d++) CK(cuCtxDestroy(sd[d].ctx)); }
static void report(const char *what, int trial, Side *sd) {
  // 4 KiB: read = device d pulls from the other; write = device d pushes to the other
  double r0 = timeCopy(sd[0], sd[0].buf, sd[1].buf + (1 << 20), 4096, 200);
  double w0 = timeCopy(sd[0], sd[1].buf, sd[0].buf + (1 << 20), 4096, 200);
  double r1 = timeCopy(sd[1], sd[1].buf, sd[0].buf + (1 << 20), 4096, 200);
  double w1 = timeCopy(sd[1], sd[0].buf, sd[1].buf + (1 << 20), 4096, 200);
  printf("%-8s trial %2d  us/copy 4KiB: dev0 read %.3f write %.3f | dev1 read %.3f write %.3f\n", what, trial, r0, w0, r1, w1);
  fflush(stdout);
}
int main(int argc, char **argv) {
  std::ifstream in(argv[1]); std::stringstream ss; ss << in.rdbuf(); ptx = ss.str();
  int trials = argc > 2 ? atoi(argv[2]) : 6;
  CK(cuInit(0));
  Side sd[2];
  for (int t = 0; t < trials; t++) {
    open(sd, t);
    report("context", t, sd);
    // same context: a module loaded afresh, then new streams
    for (int d = 0; d < 2; d++) { CK(cuCtxSetCurrent(sd[d].ctx)); CK(cuModuleUnload(sd[d].mod)); load(sd[d]); }
    report("module", t, sd);
    for (int d = 0; d < 2; d++) { CK(cuCtxSetCurrent(sd[d].ctx)); CK(cuStreamDestroy(sd[d].s)); CK(cuStreamCreate(&sd[d].s, CU_STREAM_NON_BLOCKING)); }
    report("stream", t, sd);
    close(sd);
  }
  // primary contexts, as p2pbench uses
  for (int d = 0; d < 2; d++) {
    CUdevice dev; CK(cuDeviceGet(&dev, d)); CK(cuDevicePrimaryCtxRetain(&sd[d].ctx, dev)); CK(cuCtxSetCurrent(sd[d].ctx));
    CK(cuDeviceGetAttribute(&sd[d].sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev)); load(sd[d]);
    CK(cuMemAlloc(&sd[d].buf, 2 << 20)); CK(cuStreamCreate(&sd[d].s, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate(&sd[d].a, 0)); CK(cuEventCreate(&sd[d].b, 0));
  }
  for (int d = 0; d < 2; d++) { CK(cuCtxSetCurrent(sd[d].ctx)); CK(cuCtxEnablePeerAccess(sd[1 - d].ctx, 0)); }
  report("primary", 0, sd);
  return 0;
}
