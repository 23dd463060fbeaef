// chasebuildprobe (issue 25, 2026-11-26, sixth session): p2pbench's chase beyond L2 of a GPU's own memory
// read 255-340 ns a load chunk by chunk, faster than a plain chase (chaseprobe: 327-341 from every SM),
// and chaseprobe found such times only when the chase followed the chain's build at once, over nodes the
// build wrote late. Here the build is p2pbench's (kernels.ChasePerm, thread k writes node P(k), grid of
// 4 blocks an SM) with the seeds of its 0→0 and 1→1 figures, each built and chased 12 times, the chase
// starting (a) at the buffer's first node, as p2pbench did, (b) at P(0), the node the build writes first,
// (c) at P(nodes-4096), one it writes last, (d) as (a) after writing 2 × L2 of another buffer.
// nvcc -O2 -arch=sm_90 -o chasebuildprobe chasebuildprobe.cu
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define CK(x) do{cudaError_t e=(x); if(e){printf("%s:%d %s\n",__FILE__,__LINE__,cudaGetErrorString(e)); exit(1);}}while(0)
__device__ unsigned long long gtime() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__host__ __device__ unsigned long long perm(unsigned long long k, unsigned bits, unsigned seed) {
  unsigned long long mask = (1ull << bits) - 1, x = k & mask, s = seed;
  for (int r = 0; r < 3; r++) {
    x = (x * 0x9E3779B97F4A7C15ull + s) & mask;
    x ^= x >> ((bits + 1) / 2);
    s = s * 0x5851F42D4C957F2Dull + 0x14057B7EF767814Full;
  }
  return x & mask;
}
__global__ void build(char *buf, unsigned long long nodes, unsigned bits, unsigned seed) {
  for (unsigned long long k = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; k < nodes; k += (unsigned long long)gridDim.x * blockDim.x)
    *(unsigned long long *)(buf + perm(k, bits, seed) * 128) = (unsigned long long)(buf + perm((k + 1) & (nodes - 1), bits, seed) * 128);
}
__global__ void chase(unsigned long long start, int warm, int hops, unsigned long long *out) {
  unsigned long long p = start;
  for (int i = 0; i < warm; i++) asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p));
  unsigned long long t0 = gtime();
  for (int i = 0; i < hops; i++) asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p));
  out[0] = gtime() - t0; out[1] = p;
}
int main(int argc, char **argv) {
  int dev = argc > 1 ? atoi(argv[1]) : 0;
  CK(cudaSetDevice(dev));
  int sms, l2; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)); CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  unsigned long long *out; CK(cudaMallocHost(&out, 16));
  const size_t ws = 256ull << 20, nodes = ws / 128; const unsigned bits = 21;
  char *buf; CK(cudaMalloc(&buf, ws)); void *other; CK(cudaMalloc(&other, 2ull * l2));
  // The seeds of p2pbench's lat_chase 0→0 and 1→1 at 256 MiB (measure.ChainSeed), chains 0-3.
  unsigned seeds[] = {3722645369u, 3705867750u, 3689090131u, 3672312512u, 4288428329u, 4271650710u, 4254873091u, 4238095472u};
  printf("dev %d: %d SMs, L2 %d MiB\n", dev, sms, l2 >> 20);
  for (unsigned seed : seeds) {
    unsigned long long k0 = 0; for (unsigned long long k = 0; k < nodes; k++) if (perm(k, bits, seed) == 0) { k0 = k; break; }
    const char *names[] = {"a: from node 0", "b: from P(0)", "c: from P(n-4096)", "d: node 0, L2 flushed"};
    for (int v = 0; v < 4; v++) {
      std::vector<double> t;
      for (int r = 0; r < 12; r++) {
        build<<<sms * 4, 256>>>(buf, nodes, bits, seed);
        if (v == 3) CK(cudaMemsetAsync(other, r, 2ull * l2));
        unsigned long long start = (unsigned long long)buf + (v == 1 ? perm(0, bits, seed) : v == 2 ? perm(nodes - 4096, bits, seed) : 0) * 128;
        chase<<<1, 1>>>(start, 1024, 2560, out); CK(cudaDeviceSynchronize());
        t.push_back(out[0] / 2560.0);
      }
      std::vector<double> s = t; std::sort(s.begin(), s.end());
      printf("seed %u (node 0 is P(%llu), %.0f%% into the build) %-22s median %.0f min %.0f max %.0f:", seed, k0, 100.0 * k0 / nodes, names[v], s[6], s[0], s[11]);
      for (double x : t) printf(" %.0f", x);
      printf("\n");
    }
  }
  return 0;
}
