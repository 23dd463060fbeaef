// pingprobe (issue 25, 2026-11-25, fifth session): what sets the time of a GPU-to-GPU flag ping-pong, which
// p2pbench's rounds keep within 0.5 % while separate processes differ by up to 10 % (2× H200,
// testdata/reference/h200x2/2026-11-25-s/callR)?
// Device 0 initiates, device 1 responds, one thread each, flags in each device's own memory, stores
// to the peer's flag over NVLink. Varies where the flags sit (offsets in a 4 MiB buffer) and which SM
// the kernels run on (a grid of many blocks where only the block on the chosen SM plays), and prints
// the one-way time (half a round trip) of each. Run it in several processes.
// nvcc -O2 -arch=sm_90 -o pingprobe pingprobe.cu
#include <cstdio>
#include <cuda_runtime.h>
#define CK(x) do{cudaError_t e=(x); if(e){printf("%s:%d %s\n",__FILE__,__LINE__,cudaGetErrorString(e)); return 1;}}while(0)
__device__ unsigned smid() { unsigned r; asm volatile("mov.u32 %0, %%smid;" : "=r"(r)); return r; }
__device__ unsigned long long gtime() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
// want < 0: block 0 plays, wherever it lands. Otherwise only a block on SM want plays (the first one there).
__global__ void pp(volatile unsigned *mine, volatile unsigned *peer, int iters, int role, int want, unsigned *claim, unsigned long long *out) {
  if (threadIdx.x) return;
  if (want < 0) { if (blockIdx.x) return; }
  else { if (smid() != (unsigned)want || atomicCAS(claim, 0u, 1u) != 0) return; }
  unsigned long long t0 = gtime();
  for (int i = 1; i <= iters; i++) {
    if (role == 0) { *peer = i; while (*mine != (unsigned)i) { if (gtime() - t0 > 2000000000ull) return; } }
    else { while (*mine != (unsigned)i) { if (gtime() - t0 > 2000000000ull) return; } *peer = i; }
  }
  if (role == 0) { out[0] = gtime() - t0; out[1] = smid(); }
}
int main() {
  const int iters = 2000;
  unsigned char *buf[2]; unsigned *claim[2]; unsigned long long *out; int sms;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  for (int d = 0; d < 2; d++) { CK(cudaSetDevice(d)); CK(cudaDeviceEnablePeerAccess(1 - d, 0)); CK(cudaMalloc(&buf[d], 4 << 20)); CK(cudaMalloc(&claim[d], 4)); }
  CK(cudaSetDevice(0)); CK(cudaMallocHost(&out, 16));
  cudaStream_t st[2]; for (int d = 0; d < 2; d++) { CK(cudaSetDevice(d)); CK(cudaStreamCreateWithFlags(&st[d], cudaStreamNonBlocking)); }
  auto one = [&](size_t off, int want0, int want1, int grid) -> double {
    for (int d = 0; d < 2; d++) { CK(cudaSetDevice(d)); CK(cudaMemset(buf[d] + off, 0, 256)); CK(cudaMemset(claim[d], 0, 4)); CK(cudaDeviceSynchronize()); }
    out[0] = 0; out[1] = 9999;
    CK(cudaSetDevice(1)); pp<<<grid, 32, 0, st[1]>>>((unsigned *)(buf[1] + off), (unsigned *)(buf[0] + off), iters, 1, want1, claim[1], nullptr);
    CK(cudaSetDevice(0)); pp<<<grid, 32, 0, st[0]>>>((unsigned *)(buf[0] + off), (unsigned *)(buf[1] + off), iters, 0, want0, claim[0], out);
    for (int d = 0; d < 2; d++) { CK(cudaSetDevice(d)); CK(cudaStreamSynchronize(st[d])); }
    return out[0] / 2.0 / iters;
  };
  printf("SMs %d\n", sms);
  printf("offsets (block 0 wherever it lands), ns one way:");
  size_t offs[] = {0, 256, 512, 4096, 8192, 65536, 131072, 262144, 1 << 20, (1 << 20) + 4096, 2 << 20, (3 << 20) + 768};
  for (size_t off : offs) { double a = one(off, -1, -1, 1), b = one(off, -1, -1, 1); printf(" %zu:%.0f/%.0f(sm%llu)", off, a, b, out[1]); }
  printf("\nSMs (offset 0, initiator on SM k, responder on SM k), ns one way:");
  for (int k = 0; k < sms; k += 11) printf(" sm%d:%.0f", k, one(0, k, k, 4 * sms));
  printf("\nSMs (offset 0, initiator on SM k, responder on block 0), ns one way:");
  for (int k = 0; k < sms; k += 11) printf(" sm%d:%.0f", k, one(0, k, -1, 4 * sms));
  printf("\nSMs (offset 0, initiator block 0, responder on SM k), ns one way:");
  for (int k = 0; k < sms; k += 11) printf(" sm%d:%.0f", k, one(0, -1, k, 4 * sms));
  printf("\n");
  return 0;
}
