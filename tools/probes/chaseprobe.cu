// chaseprobe (issue 25, 2026-11-26, sixth session): why does a pointer chase through 256 MiB of a GPU's own
// memory read ~330-345 ns a load in most of p2pbench's rounds and 265-305 ns in some (2× H200 GPU 0,
// 1× H200, 1× H100), while the same chase over NVLink keeps within 1 %? Each round of p2pbench chases
// fresh memory kept to the run's end. Here: for several working sets, allocate eight buffers one after
// another (all kept), build the same random cyclic chain (one node per 128-byte line) in each, and chase
// each three times (once right after its build, twice more after all eight are built), printing the
// buffer's address and ns per load. Per buffer or per moment? Does a larger working set average it out?
// nvcc -O2 -arch=sm_90 -o chaseprobe chaseprobe.cu
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <random>
#include <ctime>
#include <cuda_runtime.h>
#define CK(x) do{cudaError_t e=(x); if(e){printf("%s:%d %s\n",__FILE__,__LINE__,cudaGetErrorString(e)); exit(1);}}while(0)
__device__ unsigned long long gtime() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__device__ unsigned smid() { unsigned r; asm volatile("mov.u32 %0, %%smid;" : "=r"(r)); return r; }
__global__ void build(unsigned long long *buf, const unsigned *order, size_t n) {
  for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x; j < n; j += (size_t)gridDim.x * blockDim.x) {
    size_t node = order[j], next = order[(j + 1) % n];
    buf[node * 16] = (unsigned long long)(buf + next * 16);
  }
}
// warm hops untimed, then hops timed; returns ns per load in out[0], where it ended in out[1].
__global__ void chase(unsigned long long start, int warm, int hops, unsigned long long *out) {
  unsigned long long p = start;
  for (int i = 0; i < warm; i++) p = *(volatile unsigned long long *)p;
  unsigned long long t0 = gtime();
  for (int i = 0; i < hops; i++) p = *(volatile unsigned long long *)p;
  unsigned long long t1 = gtime();
  out[0] = t1 - t0; out[1] = p; out[3] = smid();
}
// Keeps blocks busy with arithmetic, no memory traffic, for ns of %globaltimer.
__global__ void spin(unsigned long long ns, float *sink) {
  unsigned long long t0 = gtime(); float x = threadIdx.x;
  while (gtime() - t0 < ns) { for (int i = 0; i < 256; i++) x = x * 0.999f + 1.0f; }
  if (x == -1.0f) *sink = x;
}
// The chase from the first block that lands on SM want (a grid of many blocks, one thread each).
__global__ void chase_on(unsigned long long start, int warm, int hops, unsigned want, unsigned *claim, unsigned long long *out) {
  if (smid() != want || atomicCAS(claim, 0u, 1u) != 0) return;
  unsigned long long p = start;
  for (int i = 0; i < warm; i++) p = *(volatile unsigned long long *)p;
  unsigned long long t0 = gtime();
  for (int i = 0; i < hops; i++) p = *(volatile unsigned long long *)p;
  unsigned long long t1 = gtime();
  out[0] = t1 - t0; out[1] = p; out[2] = smid();
}
__global__ void which(unsigned long long *out) { out[3] = smid(); }
int main(int argc, char **argv) {
  int dev = argc > 1 ? atoi(argv[1]) : 0;
  CK(cudaSetDevice(dev));
  unsigned long long *out; CK(cudaMallocHost(&out, 64));
  if (argc > 2) { // per SM: chase 256 MiB and 1 MiB from every SM; and where <<<1,1>>> lands after a big build
    int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    unsigned *claim; CK(cudaMalloc(&claim, 4));
    for (size_t ws : {256ull << 20, 1ull << 20}) {
      size_t n = ws / 128; std::vector<unsigned> order(n);
      for (size_t i = 0; i < n; i++) order[i] = i;
      std::mt19937 rng(7); std::shuffle(order.begin(), order.end(), rng);
      unsigned *dorder; CK(cudaMalloc(&dorder, n * 4)); CK(cudaMemcpy(dorder, order.data(), n * 4, cudaMemcpyHostToDevice));
      unsigned long long *p; CK(cudaMalloc(&p, ws)); build<<<1024, 256>>>(p, dorder, n); CK(cudaDeviceSynchronize());
      size_t at = 0;
      printf("dev %d ws %zu MiB per SM:", dev, ws >> 20);
      for (int sm = 0; sm < sms; sm++) {
        CK(cudaMemset(claim, 0, 4)); out[0] = 0; out[2] = 9999;
        chase_on<<<sms * 4, 32>>>((unsigned long long)(p + (size_t)order[at % n] * 16), 2048, 4000, sm, claim, out); CK(cudaDeviceSynchronize());
        at += 6000 + 7919;
        printf(" %d:%.0f", (int)out[2], out[0] / 4000.0);
      }
      printf("\n");
      printf("dev %d ws %zu MiB <<<1,1>>> after a build, 24 times: ", dev, ws >> 20);
      for (int r = 0; r < 24; r++) {
        build<<<sms * 4, 256>>>(p, dorder, n);
        chase<<<1, 1>>>((unsigned long long)(p + (size_t)order[at % n] * 16), 1024, 2560, out); CK(cudaDeviceSynchronize());
        at += 4000;
        printf(" sm%d:%.0f", (int)out[3], out[0] / 2560.0);
      }
      printf("\n");
      CK(cudaFree(p)); CK(cudaFree(dorder));
    }
    return 0;
  }
  const int bufs = 8, hops = 20000, warm = 4096;
  size_t sets[] = {256ull << 20, 1ull << 30, 4ull << 30};
  for (size_t ws : sets) {
    size_t n = ws / 128;
    std::vector<unsigned> order(n);
    for (size_t i = 0; i < n; i++) order[i] = i;
    std::mt19937 rng(7); std::shuffle(order.begin(), order.end(), rng);
    unsigned *dorder; CK(cudaMalloc(&dorder, n * 4)); CK(cudaMemcpy(dorder, order.data(), n * 4, cudaMemcpyHostToDevice));
    std::vector<unsigned long long *> b(bufs);
    auto one = [&](int k) -> double {
      chase<<<1, 1>>>((unsigned long long)(b[k] + (size_t)order[0] * 16), warm, hops, out);
      CK(cudaDeviceSynchronize());
      return (double)out[0] / hops;
    };
    std::vector<double> first(bufs);
    for (int k = 0; k < bufs; k++) {
      CK(cudaMalloc(&b[k], ws));
      build<<<1024, 256>>>(b[k], dorder, n); CK(cudaDeviceSynchronize());
      first[k] = one(k);
    }
    for (int k = 0; k < bufs; k++) {
      double a = one(k), c = one(k);
      printf("dev %d ws %zu MiB buf %d at %p (mod 1 GiB %zu MiB): %.1f %.1f %.1f ns\n", dev, ws >> 20, k, (void *)b[k],
             ((size_t)b[k] % (1ull << 30)) >> 20, first[k], a, c);
    }
    for (int k = 0; k < bufs; k++) CK(cudaFree(b[k]));
    CK(cudaFree(dorder));
  }
  // The same 256 MiB chain in eight fresh buffers allocated and freed one at a time (p2pbench before it kept them).
  {
    size_t ws = 256ull << 20, n = ws / 128;
    std::vector<unsigned> order(n);
    for (size_t i = 0; i < n; i++) order[i] = i;
    std::mt19937 rng(7); std::shuffle(order.begin(), order.end(), rng);
    unsigned *dorder; CK(cudaMalloc(&dorder, n * 4)); CK(cudaMemcpy(dorder, order.data(), n * 4, cudaMemcpyHostToDevice));
    for (int k = 0; k < bufs; k++) {
      unsigned long long *p; CK(cudaMalloc(&p, ws));
      build<<<1024, 256>>>(p, dorder, n); CK(cudaDeviceSynchronize());
      chase<<<1, 1>>>((unsigned long long)(p + (size_t)order[0] * 16), warm, hops, out); CK(cudaDeviceSynchronize());
      printf("dev %d freed-each 256 MiB buf %d at %p: %.1f ns\n", dev, k, (void *)p, (double)out[0] / hops);
      CK(cudaFree(p));
    }
  }
  // The same buffer chased idle, beside a spinning kernel of 1 or of many blocks (another stream), and right
  // after a memset of 4 GiB: does what else the GPU does (its clocks) set the time of a load?
  {
    size_t ws = 256ull << 20, n = ws / 128;
    std::vector<unsigned> order(n);
    for (size_t i = 0; i < n; i++) order[i] = i;
    std::mt19937 rng(7); std::shuffle(order.begin(), order.end(), rng);
    unsigned *dorder; CK(cudaMalloc(&dorder, n * 4)); CK(cudaMemcpy(dorder, order.data(), n * 4, cudaMemcpyHostToDevice));
    unsigned long long *p; CK(cudaMalloc(&p, ws)); build<<<1024, 256>>>(p, dorder, n); CK(cudaDeviceSynchronize());
    void *big; CK(cudaMalloc(&big, 4ull << 30)); float *sink; CK(cudaMalloc(&sink, 4));
    cudaStream_t s1, s2; CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking)); CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    size_t at = 0; // each chase starts where the last stopped (fresh lines)
    auto ch = [&]() -> double {
      chase<<<1, 1, 0, s1>>>((unsigned long long)(p + (size_t)order[at % n] * 16), warm, hops, out); CK(cudaStreamSynchronize(s1));
      at += warm + hops + 7919;
      return (double)out[0] / hops;
    };
    for (int rep = 0; rep < 3; rep++) {
      double idle = ch();
      spin<<<1, 32, 0, s2>>>(100000000ull, sink); double one = ch(); CK(cudaDeviceSynchronize());
      spin<<<sms, 256, 0, s2>>>(100000000ull, sink); double many = ch(); CK(cudaDeviceSynchronize());
      CK(cudaMemsetAsync(big, rep, 4ull << 30, s1)); double after = ch();
      struct timespec ts = {0, 300000000}; nanosleep(&ts, nullptr);
      double slept = ch();
      printf("dev %d busy rep %d: idle %.1f beside-1-block %.1f beside-%d-blocks %.1f after-memset %.1f after-300ms-sleep %.1f ns\n", dev, rep, idle, one, sms, many, after, slept);
    }
  }
  return 0;
}
