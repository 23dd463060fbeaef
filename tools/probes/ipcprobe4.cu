// ipcprobe4: which of p2pbench's habits makes two processes pushing at once through legacy IPC
// handles slow. Two children, one per GPU, each pushes its own buffer into the other's (opened with
// cudaIpcOpenMemHandle, lazy peer access) with cudaMemcpyAsync, both at once. Options (argv[1],
// comma-separated): reopen = open the peer's handle a second time and close that (p2pbench checks the
// reference count so); bigalloc = allocations of 512 MiB + 14 MiB (p2pbench's placement spare);
// one = samples of one copy behind one warm-up (p2pbench's IPC samples), else 16 copies;
// drv = cuMemAlloc and cuMemcpyAsync of the driver API. Prints each child's GB/s per sample.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <sys/wait.h>
#include <cuda.h>
#include <cuda_runtime.h>
#define CK(x) do{cudaError_t e=(x); if(e){printf("%s:%d %s\n",__FILE__,__LINE__,cudaGetErrorString(e)); exit(1);}}while(0)
#define CD(x) do{CUresult e=(x); if(e){const char*s; cuGetErrorName(e,&s); printf("%s:%d %s\n",__FILE__,__LINE__,s); exit(1);}}while(0)
static const size_t B = (size_t)512 << 20;
int up[2][2], down[2][2];
bool has(const char *opts, const char *o) { return strstr(opts, o) != nullptr; }
void child(int g, const char *opts) {
  size_t alloc = has(opts, "bigalloc") ? B + 7 * ((2 << 20) + (4 << 10) + 256) : B;
  if (has(opts, "round2m")) alloc = (alloc + (2 << 20) - 1) / (2 << 20) * (2 << 20);
  CK(cudaSetDevice(g)); CK(cudaFree(0));
  void *mine, *src;
  if (has(opts, "drv")) { CUdeviceptr a, b; CD(cuMemAlloc(&a, alloc)); CD(cuMemAlloc(&b, alloc)); mine = (void *)a; src = (void *)b; }
  else { CK(cudaMalloc(&mine, alloc)); CK(cudaMalloc(&src, alloc)); }
  CK(cudaMemset(src, 1, B));
  cudaIpcMemHandle_t h; CK(cudaIpcGetMemHandle(&h, mine)); write(up[g][1], &h, sizeof h);
  cudaIpcMemHandle_t ph; read(down[g][0], &ph, sizeof ph);
  void *peer; CK(cudaIpcOpenMemHandle(&peer, ph, cudaIpcMemLazyEnablePeerAccess));
  if (has(opts, "reopen")) { void *again; CK(cudaIpcOpenMemHandle(&again, ph, cudaIpcMemLazyEnablePeerAccess)); CK(cudaIpcCloseMemHandle(again)); }
  cudaStream_t st; CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking)); cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  auto copy = [&]() { if (has(opts, "drv")) CD(cuMemcpyAsync((CUdeviceptr)peer, (CUdeviceptr)src, B, (CUstream)st)); else CK(cudaMemcpyAsync(peer, src, B, cudaMemcpyDefault, st)); };
  for (int w = 0; w < 2; w++) copy(); CK(cudaStreamSynchronize(st));
  int n = has(opts, "one") ? 1 : 16;
  printf("  GPU %d [%s]:", g, opts);
  for (int r = 0; r < 5; r++) {
    char go; write(up[g][1], "r", 1); read(down[g][0], &go, 1);
    if (has(opts, "one")) copy();
    CK(cudaEventRecord(a, st)); for (int i = 0; i < n; i++) copy(); CK(cudaEventRecord(b, st)); CK(cudaEventSynchronize(b));
    float ms; CK(cudaEventElapsedTime(&ms, a, b)); printf(" %.1f", (double)n * B / ms / 1e6);
  }
  printf(" GB/s\n"); fflush(stdout);
  CK(cudaIpcCloseMemHandle(peer)); exit(0);
}
int main(int argc, char **argv) {
  const char *opts = argc > 1 ? argv[1] : "base";
  for (int g = 0; g < 2; g++) { pipe(up[g]); pipe(down[g]); }
  pid_t p[2]; for (int g = 0; g < 2; g++) { p[g] = fork(); if (p[g] == 0) child(g, opts); }
  cudaIpcMemHandle_t h[2]; for (int g = 0; g < 2; g++) read(up[g][0], &h[g], sizeof h[g]);
  write(down[0][1], &h[1], sizeof h[1]); write(down[1][1], &h[0], sizeof h[0]);
  for (int r = 0; r < 5; r++) { char c; for (int g = 0; g < 2; g++) read(up[g][0], &c, 1); for (int g = 0; g < 2; g++) write(down[g][1], "g", 1); }
  for (int g = 0; g < 2; g++) waitpid(p[g], nullptr, 0);
  return 0;
}
