// holdprobe: what holding a stream does to the peer copies queued behind it, and what the first
// copy after peer access is (re-)enabled costs. Runtime API plus the driver's stream memory
// operations. Build: nvcc -O2 -o holdprobe holdprobe.cu -lcuda
//
// Part 1, 4-byte and 64 KiB copies, 50 back to back between two events, pulled (issued on the
// destination's stream) and pushed (on the source's), five repetitions each, queued:
//   plain   - on an idle stream as an application does (the host's enqueue rate shows);
//   kernel  - behind a kernel on the same stream that spins on a host flag until all are queued;
//   xwait   - the stream waits (cudaStreamWaitEvent) on an event recorded behind such a kernel on
//             another stream of the same device;
//   memwait - the stream waits on a host-mapped word with cuStreamWaitValue32 (no kernel at all).
// Part 2, 512 MiB pulls: peer access disabled and enabled again (as p2pbench does between pairs),
// then one copy timed alone, a second one timed alone, and a window of four; the same after
// 512 MiB host copies. Prints ms per window.
#include <cstdio>
#include <cuda.h>
#include <cuda_runtime.h>
#define CK(x) do{cudaError_t e=(x); if(e){printf("%s:%d %s\n",__FILE__,__LINE__,cudaGetErrorString(e)); exit(1);}}while(0)
#define CD(x) do{CUresult e=(x); if(e){const char*s; cuGetErrorName(e,&s); printf("%s:%d %s\n",__FILE__,__LINE__,s); exit(1);}}while(0)
__global__ void spin(volatile int *flag){ while(*flag==0){} }
enum Mode { PLAIN, KERNEL, XWAIT, MEMWAIT };
const char *names[] = {"plain", "kernel", "xwait", "memwait"};
void small(int src, int dst, bool pull, size_t bytes, Mode m, int n) {
  void *s, *d; CK(cudaSetDevice(src)); CK(cudaMalloc(&s, 1<<20)); CK(cudaSetDevice(dst)); CK(cudaMalloc(&d, 1<<20));
  int iss = pull ? dst : src; CK(cudaSetDevice(iss));
  int *hflag; CK(cudaHostAlloc(&hflag, 64, cudaHostAllocMapped)); int *dflag; CK(cudaHostGetDevicePointer(&dflag, hflag, 0));
  cudaStream_t st, other; CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking)); CK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  cudaEvent_t a, b, gate; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b)); CK(cudaEventCreateWithFlags(&gate, cudaEventDisableTiming));
  for (int w = 0; w < 3; w++) CK(cudaMemcpyPeerAsync(d, dst, s, src, bytes, st)); CK(cudaStreamSynchronize(st));
  printf("%-7s %s %d->%d %6zu B x%d:", names[m], pull ? "pull" : "push", src, dst, bytes, n);
  for (int r = 0; r < 5; r++) {
    *(volatile int *)hflag = 0;
    if (m == KERNEL) spin<<<1, 1, 0, st>>>(dflag);
    if (m == XWAIT) { spin<<<1, 1, 0, other>>>(dflag); CK(cudaEventRecord(gate, other)); CK(cudaStreamWaitEvent(st, gate, 0)); }
    if (m == MEMWAIT) CD(cuStreamWaitValue32((CUstream)st, (CUdeviceptr)dflag, 1, CU_STREAM_WAIT_VALUE_GEQ));
    CK(cudaEventRecord(a, st));
    for (int i = 0; i < n; i++) CK(cudaMemcpyPeerAsync(d, dst, s, src, bytes, st));
    CK(cudaEventRecord(b, st)); *(volatile int *)hflag = 1; CK(cudaEventSynchronize(b));
    float ms; CK(cudaEventElapsedTime(&ms, a, b)); printf(" %.2fus", ms * 1000 / n);
  }
  printf("\n");
  CK(cudaStreamSynchronize(other)); cudaStreamDestroy(st); cudaStreamDestroy(other); cudaFreeHost(hflag);
  cudaFree(d); CK(cudaSetDevice(src)); cudaFree(s);
}
static const size_t B = (size_t)512 << 20;
void *dbuf[2][2]; void *hbuf;
float window(int src, int dst, int k, cudaStream_t st, cudaEvent_t a, cudaEvent_t b) {
  CK(cudaEventRecord(a, st));
  for (int i = 0; i < k; i++) CK(cudaMemcpyPeerAsync(dbuf[dst][1], dst, dbuf[src][0], src, B, st));
  CK(cudaEventRecord(b, st)); CK(cudaEventSynchronize(b)); float ms; CK(cudaEventElapsedTime(&ms, a, b)); return ms;
}
void firstcopy(const char *tag, bool reenable, bool host) {
  for (int src = 0; src < 2; src++) {
    int dst = 1 - src;
    if (host) for (int g = 0; g < 2; g++) { CK(cudaSetDevice(g)); CK(cudaMemcpy(dbuf[g][0], hbuf, B, cudaMemcpyHostToDevice)); CK(cudaMemcpy(hbuf, dbuf[g][1], B, cudaMemcpyDeviceToHost)); }
    if (reenable) for (int g = 0; g < 2; g++) { CK(cudaSetDevice(g)); CK(cudaDeviceDisablePeerAccess(1 - g)); CK(cudaDeviceEnablePeerAccess(1 - g, 0)); }
    CK(cudaSetDevice(dst)); cudaStream_t st; CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    float t1 = window(src, dst, 1, st, a, b), t1b = window(src, dst, 1, st, a, b), t4 = window(src, dst, 4, st, a, b);
    printf("%-22s pull %d->%d: first alone %.4f ms, second alone %.4f ms, four %.4f ms; fit(first) %.1f GB/s, fit(second) %.1f, window %.1f\n",
           tag, src, dst, t1, t1b, t4, B / ((t4 - t1) / 3) / 1e6, B / ((t4 - t1b) / 3) / 1e6, 4 * B / t4 / 1e6);
    cudaStreamDestroy(st);
  }
}
int main() {
  CK(cudaSetDevice(0)); CK(cudaDeviceEnablePeerAccess(1, 0)); CK(cudaSetDevice(1)); CK(cudaDeviceEnablePeerAccess(0, 0));
  for (size_t sz : {(size_t)4, (size_t)65536})
    for (int m = 0; m < 4; m++)
      for (int p = 0; p < 2; p++) { small(0, 1, p, sz, (Mode)m, 50); small(1, 0, p, sz, (Mode)m, 50); }
  for (int g = 0; g < 2; g++) { CK(cudaSetDevice(g)); CK(cudaMalloc(&dbuf[g][0], B)); CK(cudaMalloc(&dbuf[g][1], B)); CK(cudaMemset(dbuf[g][0], 1, B)); }
  CK(cudaMallocHost(&hbuf, B));
  for (int r = 0; r < 2; r++) firstcopy("steady", false, false);
  for (int r = 0; r < 2; r++) firstcopy("peer re-enabled", true, false);
  for (int r = 0; r < 2; r++) firstcopy("after host copies", false, true);
  for (int r = 0; r < 2; r++) firstcopy("host + re-enabled", true, true);
  return 0;
}
