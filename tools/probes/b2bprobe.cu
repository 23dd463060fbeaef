// b2bprobe (issue 23, 2026-11-25, fifth session): do 4-byte copy-engine pulls queued back to back, as an
// application queues them (no latch), cost the same in the primary context and in green contexts, and
// does the call that queues them matter (cuMemcpyPeerAsync with the primary contexts named, or
// cuMemcpyAsync on unified addresses)? p2pbench times them on a green context's stream; pullprobe.cu
// (the runtime's cudaMemcpyPeerAsync on the primary context) is the ground truth of the issue.
// For each way of queueing, each device pulls from the other: three untimed copies, then five windows
// of 64 copies between two events; prints the per-copy µs of each window. nvcc -O2 -o b2bprobe b2bprobe.cu -lcuda
#include <cuda.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s; cuGetErrorName(r_, &s); fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s); exit(1);} } while (0)
CUcontext prim[2]; CUdeviceptr buf[2];
enum Call { PEER, UVA };
static void window(int d, CUcontext ctx, CUstream s, Call call, const char *label) {
  CK(cuCtxSetCurrent(ctx));
  CUevent a, b; CK(cuEventCreate(&a, 0)); CK(cuEventCreate(&b, 0));
  auto copy = [&]() {
    if (call == PEER) CK(cuMemcpyPeerAsync(buf[d], prim[d], buf[1 - d] + 4096, prim[1 - d], 4, s));
    else CK(cuMemcpyAsync(buf[d], buf[1 - d] + 4096, 4, s));
  };
  for (int i = 0; i < 3; i++) copy();
  CK(cuStreamSynchronize(s));
  printf("%-34s pull by %d:", label, d);
  std::vector<double> v;
  for (int w = 0; w < 5; w++) {
    CK(cuEventRecord(a, s));
    for (int i = 0; i < 64; i++) copy();
    CK(cuEventRecord(b, s));
    CK(cuEventSynchronize(b));
    float ms; CK(cuEventElapsedTime(&ms, a, b)); v.push_back(ms * 1000.0 / 64); printf(" %.2f", v.back());
  }
  std::sort(v.begin(), v.end());
  printf("  | median %.2f us\n", v[2]);
  CK(cuEventDestroy(a)); CK(cuEventDestroy(b));
}
int main() {
  CK(cuInit(0));
  for (int d = 0; d < 2; d++) { CUdevice dev; CK(cuDeviceGet(&dev, d)); CK(cuDevicePrimaryCtxRetain(&prim[d], dev)); CK(cuCtxSetCurrent(prim[d])); CK(cuMemAlloc(&buf[d], 64 << 10)); CK(cuMemsetD8(buf[d], 7, 64 << 10)); }
  for (int d = 0; d < 2; d++) { CK(cuCtxSetCurrent(prim[d])); CK(cuCtxEnablePeerAccess(prim[1 - d], 0)); }
  for (int pass = 0; pass < 2; pass++) {
    for (int d = 0; d < 2; d++) {
      for (int k = 0; k < 2; k++) {
        CUstream s; CK(cuCtxSetCurrent(prim[d])); CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
        window(d, prim[d], s, PEER, k ? "primary, second stream, peer" : "primary, peer");
        window(d, prim[d], s, UVA, k ? "primary, second stream, uva" : "primary, uva");
        CK(cuStreamDestroy(s));
      }
      for (int k = 0; k < 3; k++) {
        CUdevice dev; CK(cuDeviceGet(&dev, d)); CUdevResource res; CUdevResourceDesc desc; CUgreenCtx g; CUcontext gc; CUstream s;
        CK(cuDeviceGetDevResource(dev, &res, CU_DEV_RESOURCE_TYPE_SM)); CK(cuDevResourceGenerateDesc(&desc, &res, 1));
        CK(cuGreenCtxCreate(&g, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM)); CK(cuCtxFromGreenCtx(&gc, g));
        CK(cuCtxSetCurrent(gc)); CK(cuGreenCtxStreamCreate(&s, g, CU_STREAM_NON_BLOCKING, 0));
        char l[64]; snprintf(l, sizeof l, "green %d, peer", k); window(d, gc, s, PEER, l);
        snprintf(l, sizeof l, "green %d, uva", k); window(d, gc, s, UVA, l);
        CK(cuStreamDestroy(s)); CK(cuGreenCtxDestroy(g));
      }
    }
  }
  return 0;
}
