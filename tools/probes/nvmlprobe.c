// nvmlprobe: how long reading the NVLink throughput counters takes: 18 links x 4 fields in one call, against 4 fields of every link at once (scopeId UINT_MAX).
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
typedef struct { unsigned fieldId, scopeId; long long timestamp, latencyUsec; int valueType, nvmlReturn; union { double d; unsigned ui; unsigned long ul; unsigned long long ull; long long sll; } value; } fv_t;
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(void) {
  void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  int (*init)(void) = dlsym(h, "nvmlInit_v2");
  int (*get)(unsigned, void **) = dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
  int (*fv)(void *, int, fv_t *) = dlsym(h, "nvmlDeviceGetFieldValues");
  init();
  for (unsigned d = 0; d < 2; d++) {
    void *dev; if (get(d, &dev)) { printf("no device %u\n", d); continue; }
    fv_t per[72], all[4];
    for (int rep = 0; rep < 3; rep++) {
      for (int l = 0; l < 18; l++) for (int k = 0; k < 4; k++) { memset(&per[4*l+k], 0, sizeof(fv_t)); per[4*l+k].fieldId = 138 + k; per[4*l+k].scopeId = l; }
      for (int k = 0; k < 4; k++) { memset(&all[k], 0, sizeof(fv_t)); all[k].fieldId = 138 + k; all[k].scopeId = 0xFFFFFFFFu; }
      double t = now(); int r1 = fv(dev, 72, per); double a = now() - t;
      t = now(); int r2 = fv(dev, 4, all); double b = now() - t;
      fv_t one; memset(&one, 0, sizeof one); one.fieldId = 138; one.scopeId = 0;
      t = now(); fv(dev, 1, &one); double c = now() - t;
      unsigned long long sum[4] = {0};
      for (int l = 0; l < 18; l++) for (int k = 0; k < 4; k++) if (per[4*l+k].nvmlReturn == 0) sum[k] += per[4*l+k].value.ull;
      printf("dev %u: 72 per-link fields %.2f ms (rc %d), 4 fields UINT_MAX %.2f ms (rc %d; field rcs %d %d %d %d), 1 field %.2f ms\n", d, a*1e3, r1, b*1e3, r2,
        all[0].nvmlReturn, all[1].nvmlReturn, all[2].nvmlReturn, all[3].nvmlReturn, c*1e3);
      printf("   sums of links (KiB): %llu %llu %llu %llu | UINT_MAX: %llu %llu %llu %llu (types %d)\n", sum[0], sum[1], sum[2], sum[3],
        all[0].value.ull, all[1].value.ull, all[2].value.ull, all[3].value.ull, all[0].valueType);
    }
  }
  return 0;
}
