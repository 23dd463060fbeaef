// smhostbidirprobe: SM copy kernels between pinned host memory and one GPU, host→device and
// device→host at once on two streams, 512 MiB each way: which of the kernel (loads in flight per
// thread), the grid (every SM or half of them per direction) and the timing (each direction by its own
// events, or held behind a longer copy of the other direction, as nvbandwidth times it) sets what
// both directions read. The kernel is a grid-stride copy of 16-byte vectors, U loads in flight
// before the stores (nvbandwidth's SM copy is U = 12 on every SM, 512 threads a block); each launch
// repeats the copy `loops` times.
// Prints, for each configuration, the median GB/s of seven launches per direction (after a warm-up).
// Build: nvcc -O2 -arch=sm_90 -o smhostbidirprobe smhostbidirprobe.cu; run: smhostbidirprobe [device]
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <vector>
#include <cuda_runtime.h>
#define CK(x) do{cudaError_t e=(x); if(e){printf("%s:%d %s\n",__FILE__,__LINE__,cudaGetErrorString(e)); exit(1);}}while(0)
static const size_t bytes = 512ull << 20;
template <int U>
__global__ void copyk(const uint4 *__restrict__ src, uint4 *__restrict__ dst, size_t n, int loops) {
  const size_t stride = (size_t)gridDim.x * blockDim.x, first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (int l = 0; l < loops; l++) {
    size_t i = first;
    for (; i + (U - 1) * stride < n; i += U * stride) {
      uint4 r[U];
#pragma unroll
      for (int u = 0; u < U; u++) r[u] = src[i + u * stride];
#pragma unroll
      for (int u = 0; u < U; u++) dst[i + u * stride] = r[u];
    }
    for (; i < n; i += stride) dst[i] = src[i];
  }
}
typedef void (*kern)(const uint4 *, uint4 *, size_t, int);
static double median(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
int main(int argc, char **argv) {
  int dev = argc > 1 ? atoi(argv[1]) : 0, sms;
  CK(cudaSetDevice(dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  uint4 *hsrc, *hdst, *dsrc, *ddst;
  CK(cudaHostAlloc(&hsrc, bytes, cudaHostAllocPortable)); CK(cudaHostAlloc(&hdst, bytes, cudaHostAllocPortable));
  CK(cudaMalloc(&dsrc, bytes)); CK(cudaMalloc(&ddst, bytes));
  for (size_t i = 0; i < bytes; i += 4096) ((char *)hsrc)[i] = 1, ((char *)hdst)[i] = 1;
  CK(cudaMemset(dsrc, 1, bytes)); CK(cudaMemset(ddst, 1, bytes));
  cudaStream_t s[2]; cudaEvent_t a[2], b[2];
  for (int i = 0; i < 2; i++) { CK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking)); CK(cudaEventCreate(&a[i])); CK(cudaEventCreate(&b[i])); }
  const size_t n = bytes / sizeof(uint4);
  struct { const char *name; kern k; } ks[] = {{"u4", copyk<4>}, {"u8", copyk<8>}, {"u12", copyk<12>}};
  const int loops = 4;
  for (auto &k : ks) for (int half = 0; half < 2; half++) for (int way = 0; way < 3; way++) {
    // way 0: each direction alone; 1: both at once, each timed by its own events; 2: both at once,
    // each launch of one direction beside a launch of the other twice as long (the held timing).
    int grid = half ? sms / 2 : sms;
    std::vector<double> g[2];
    for (int rep = 0; rep < 8; rep++) {
      float ms[2];
      for (int d = 0; d < 2; d++) {
        const uint4 *src = d == 0 ? hsrc : dsrc; uint4 *dst = d == 0 ? ddst : hdst;
        if (way == 0) {
          CK(cudaEventRecord(a[d], s[d])); k.k<<<grid, 512, 0, s[d]>>>(src, dst, n, loops); CK(cudaEventRecord(b[d], s[d]));
          CK(cudaStreamSynchronize(s[d])); CK(cudaEventElapsedTime(&ms[d], a[d], b[d]));
        }
      }
      if (way == 1) {
        for (int d = 0; d < 2; d++) {
          const uint4 *src = d == 0 ? hsrc : dsrc; uint4 *dst = d == 0 ? ddst : hdst;
          CK(cudaEventRecord(a[d], s[d])); k.k<<<grid, 512, 0, s[d]>>>(src, dst, n, loops); CK(cudaEventRecord(b[d], s[d]));
        }
        for (int d = 0; d < 2; d++) { CK(cudaStreamSynchronize(s[d])); CK(cudaEventElapsedTime(&ms[d], a[d], b[d])); }
      }
      if (way == 2) {
        for (int d = 0; d < 2; d++) { // d: the timed direction; the other copies twice as long
          for (int e = 0; e < 2; e++) {
            const uint4 *src = e == 0 ? hsrc : dsrc; uint4 *dst = e == 0 ? ddst : hdst;
            if (e == d) CK(cudaEventRecord(a[e], s[e]));
            k.k<<<grid, 512, 0, s[e]>>>(src, dst, n, e == d ? loops : 2 * loops);
            if (e == d) CK(cudaEventRecord(b[e], s[e]));
          }
          for (int e = 0; e < 2; e++) CK(cudaStreamSynchronize(s[e]));
          CK(cudaEventElapsedTime(&ms[d], a[d], b[d]));
        }
      }
      if (rep > 0) for (int d = 0; d < 2; d++) g[d].push_back(loops * bytes / (ms[d] * 1e6));
    }
    const char *ways[] = {"alone", "own events", "held"};
    printf("%-3s grid %3d x 512  %-10s  h2d %.2f  d2h %.2f  sum %.2f GB/s  (h2d", k.name, grid, ways[way], median(g[0]), median(g[1]), median(g[0]) + median(g[1]));
    for (double x : g[0]) printf(" %.1f", x);
    printf("; d2h");
    for (double x : g[1]) printf(" %.1f", x);
    printf(")\n");
  }
  return 0;
}
