/*
 * fakenvml.c: a stand-in libnvidia-ml.so.1 for the tests of package nvml,
 * with the real C signatures of nvml.h.
 *
 * Two GPUs: 0 at 00000000:18:00.0 with 18 links, 16 of them active and all
 * leading to GPU 1, with NVML giving each link's speed (and, like the 580
 * driver on H200, not the common speed); 1 at 00000000:2A:00.0 with 12
 * links (NOT_SUPPORTED from link 12 on), all active and leading to GPU 0,
 * with only the common speed, and no memory clock. Link versions come as
 * nvmlNvlinkVersion_t: 6 is NVLink 4.0. Device 0 has NVLink throughput
 * counters (fields 138-141) on its 18 links, advancing with every reading;
 * device 1 has none.
 * The unversioned forms of the _v2 entry points fail, so tests notice a
 * binding that picks them.
 *
 * Health: device 0's NVLink error counters hold 100 * link + counter, and
 * its GPU-total fields (38, 45, 52, 59, 160) their sums over the 18 links
 * (15300 + 18 * counter), its data-link totals (161-163) replay 1, recovery
 * 0 and CRC 30690; device 1's GPU totals of CRC-data (45) and ECC-data
 * (160) are NOT_SUPPORTED, as some drivers answer on H100s whose links
 * count (NVIDIA/DCGM issue 173), the others its 12 links' sums (6600 + 12
 * * counter), its data-link totals 0. Device 0
 * has ECC (3 and 17 corrected errors, volatile and aggregate, 0 and 1
 * uncorrected), 2 rows remapped for correctable errors, its clocks held by
 * the software power cap (0x4), and the calling process on it with 600 MiB.
 * Device 1 has no DL_ECC_DATA counter, ECC or row remapping (NOT_SUPPORTED),
 * is idle (0x1) and has no process. The deprecated
 * nvmlDeviceGetCurrentClocksThrottleReasons and the _v2 and unversioned
 * process lists fail, so tests notice a binding that picks them.
 *
 * PCIe: device 0 runs at Gen5 x16 of Gen5 x16; device 1 at Gen1 x8 of
 * Gen4 x16 (idling at Gen1, trained on 8 lanes), and has no current
 * width when built with -DNO_PCIE_WIDTH.
 *
 * Fabric: device 0 completed its registration in cluster
 * 00112233-4455-6677-8899-aabbccddeeff, clique 7; $FAKENVML_FABRIC_CLUSTER
 * (hex) replaces the cluster's first byte and $FAKENVML_FABRIC_CLIQUE the
 * clique, so processes standing in for nodes can disagree. Device 1 is in
 * no fabric (NOT_SUPPORTED). nvmlDeviceGetGpuFabricInfoV insists on the
 * version of nvmlGpuFabricInfo_v2_t.
 *
 * Identity: device 0 is serial 1654923000017, board part number
 * 692-2G520-0200-000, VBIOS 96.00.A5.00.01, InfoROM G520.0200.00.05;
 * device 1 has no serial (NOT_SUPPORTED, as some boards answer) and the
 * same part number and firmware. A buffer shorter than the text gets
 * INSUFFICIENT_SIZE.
 *
 * Build flags:
 *   -DNO_FIELD_VALUES   leave out nvmlDeviceGetFieldValues (optional)
 *   -DNO_TOTALS         the NVLink throughput fields refuse the scope of
 *                       every link at once (UINT_MAX), as older drivers may
 *   -DNO_PCIE           leave out the four PCIe link entry points (optional)
 *   -DNO_IDENTITY       leave out the four identity entry points (optional)
 *   -DNO_HEALTH         leave out every health entry point (all optional)
 *   -DOLD_NVML          name them as older drivers do: only the throttle
 *                       reasons and the _v2 process list answer, and
 *                       only the unversioned fabric info
 *   -DLINK_ERRORS       device 0: link 3's CRC flit counter grows by 5 at
 *                       every reading, and the GPU total of CRC flit by
 *                       5 at every reading of the totals; link 15 is down
 *                       after its first state reading
 *   -DTOTALS_ZERO       device 0's GPU totals read 0 while its links count
 *                       (the other answer of NVIDIA/DCGM issue 173)
 *   -DBUSY              device 1 holds the caller, pid 1 (1 GiB) and a pid
 *                       no system has (memory not available); the first
 *                       call that counts them finds one fewer, as if a
 *                       process started between the two calls
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int nvmlReturn_t;
typedef struct fake_device *nvmlDevice_t;

enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NOT_FOUND = 6,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_FUNCTION_NOT_FOUND = 13,
};

typedef struct {
	char busIdLegacy[16];
	unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
	char busId[32];
} nvmlPciInfo_t;

typedef union {
	double dVal;
	unsigned int uiVal;
	unsigned long ulVal;
	unsigned long long ullVal;
	long long sllVal;
	int siVal;
	unsigned short usVal;
} nvmlValue_t;

typedef struct {
	unsigned int fieldId;
	unsigned int scopeId;
	long long timestamp;
	long long latencyUsec;
	int valueType;
	nvmlReturn_t nvmlReturn;
	nvmlValue_t value;
} nvmlFieldValue_t;

struct fake_device {
	unsigned bus;
	unsigned links;  /* links 0..links-1 exist */
	unsigned active; /* links 0..active-1 are up */
	int peer;
};

static struct fake_device devs[2] = {
	{0x18, 18, 16, 1},
	{0x2A, 12, 12, 0},
};
static int inits;
static unsigned traffic_reads; /* calls asking device 0 for NVLink counters */
static int traffic_fields;     /* how many fields the last of them asked for */

/* Not NVML's: tells a test how many fields the last reading of device 0's
 * NVLink counters asked for. */
int fake_traffic_fields(void) { return traffic_fields; }

static int valid(nvmlDevice_t d) { return d == &devs[0] || d == &devs[1]; }

const char *nvmlErrorString(nvmlReturn_t r)
{
	switch (r) {
	case NVML_SUCCESS: return "fake: Success";
	case NVML_ERROR_UNINITIALIZED: return "fake: Uninitialized";
	case NVML_ERROR_INVALID_ARGUMENT: return "fake: Invalid Argument";
	case NVML_ERROR_NOT_SUPPORTED: return "fake: Not Supported";
	case NVML_ERROR_NOT_FOUND: return "fake: Not Found";
	case NVML_ERROR_INSUFFICIENT_SIZE: return "fake: Insufficient Size";
	case NVML_ERROR_FUNCTION_NOT_FOUND: return "fake: Function Not Found";
	}
	return "fake: Unknown Error";
}

nvmlReturn_t nvmlInit_v2(void) { inits++; return NVML_SUCCESS; }
nvmlReturn_t nvmlInit(void) { return NVML_ERROR_FUNCTION_NOT_FOUND; }

nvmlReturn_t nvmlShutdown(void)
{
	if (inits == 0)
		return NVML_ERROR_UNINITIALIZED;
	inits--;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
	const char *v = "580.159.04";
	if (!inits)
		return NVML_ERROR_UNINITIALIZED;
	if (length < strlen(v) + 1)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	strcpy(version, v);
	return NVML_SUCCESS;
}

/* Accepts "domain:bus:device.function" with any domain width, in hex. */
nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *id, nvmlDevice_t *d)
{
	unsigned dom, bus, dev, fn;
	if (!inits)
		return NVML_ERROR_UNINITIALIZED;
	if (sscanf(id, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (int i = 0; i < 2; i++)
		if (dom == 0 && bus == devs[i].bus && dev == 0 && fn == 0) {
			*d = &devs[i];
			return NVML_SUCCESS;
		}
	return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char *id, nvmlDevice_t *d) { return NVML_ERROR_FUNCTION_NOT_FOUND; }

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link, int *active)
{
	if (!valid(d) || link >= 18)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (link >= d->links)
		return NVML_ERROR_NOT_SUPPORTED;
	*active = link < d->active;
#ifdef LINK_ERRORS
	static unsigned link15_reads;
	if (d == &devs[0] && link == 15 && link15_reads++ > 0)
		*active = 0;
#endif
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkVersion(nvmlDevice_t d, unsigned int link, unsigned int *version)
{
	if (!valid(d) || link >= d->links)
		return NVML_ERROR_INVALID_ARGUMENT;
	*version = 6; /* NVML_NVLINK_VERSION_4_0, as the 580 driver answers on H200 */
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t d, unsigned int link, nvmlPciInfo_t *pci)
{
	if (!valid(d) || link >= d->links || !pci)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (link >= d->active)
		return NVML_ERROR_NOT_SUPPORTED;
	memset(pci, 0, sizeof *pci);
	pci->bus = devs[d->peer].bus;
	pci->pciDeviceId = 0x233510de;
	snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "0000:%02X:00.0", pci->bus);
	snprintf(pci->busId, sizeof pci->busId, "00000000:%02X:00.0", pci->bus);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo(nvmlDevice_t d, unsigned int link, nvmlPciInfo_t *pci) { return NVML_ERROR_FUNCTION_NOT_FOUND; }

#ifndef NO_FIELD_VALUES
/* The GPU-total NVLink error fields: the counter's sum over the device's
 * links, or the data-link totals; 1 when v is one of them (answered). */
static int total_field(nvmlDevice_t d, nvmlFieldValue_t *v)
{
	static const unsigned fields[] = {52, 59, 38, 45, 160}; /* by counter 0-4 */
	for (int c = 0; c < 5; c++) {
		if (v->fieldId != fields[c])
			continue;
		if (d == &devs[1] && (c == 3 || c == 4))
			return 1; /* NOT_SUPPORTED */
		unsigned long long sum = 0;
		for (unsigned l = 0; l < d->links; l++)
			sum += 100ULL * l + c;
#ifdef LINK_ERRORS
		static unsigned long long flit_total_reads;
		if (d == &devs[0] && c == 2)
			sum += 5 * flit_total_reads++;
#endif
#ifdef TOTALS_ZERO
		if (d == &devs[0])
			sum = 0;
#endif
		v->valueType = 3;
		v->value.ullVal = sum;
		v->nvmlReturn = NVML_SUCCESS;
		return 1;
	}
	if (v->fieldId >= 161 && v->fieldId <= 163) {
		static const unsigned long long dl[3] = {1, 0, 30690};
		v->valueType = 3;
		v->value.ullVal = d == &devs[0] ? dl[v->fieldId - 161] : 0;
		v->nvmlReturn = NVML_SUCCESS;
		return 1;
	}
	return 0;
}

nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int count, nvmlFieldValue_t *values)
{
	if (!valid(d) || count <= 0 || !values)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (d == &devs[0] && values[0].fieldId == 138) {
		traffic_reads++;
		traffic_fields = count;
	}
	for (int i = 0; i < count; i++) {
		nvmlFieldValue_t *v = &values[i];
		v->timestamp = 1;
		v->latencyUsec = 0;
		v->value.ullVal = 0;
		v->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
		if (v->fieldId == 164 && d == &devs[0]) { /* NVLINK_GET_SPEED of link scopeId */
			if (v->scopeId >= d->links) {
				v->nvmlReturn = NVML_ERROR_INVALID_ARGUMENT;
				continue;
			}
			v->valueType = 1; /* UNSIGNED_INT */
			v->value.uiVal = 26562;
			v->nvmlReturn = NVML_SUCCESS;
		}
		if (v->fieldId >= 138 && v->fieldId <= 141 && d == &devs[0]) {
			/* NVLINK_THROUGHPUT_{DATA,RAW}_{TX,RX} in KiB: link l of
			 * reading r holds r * (field - 137) * 1000 + l; scope
			 * UINT_MAX their sum over the links (-DNO_TOTALS: a
			 * driver without sums, which refuses that scope). */
#ifndef NO_TOTALS
			if (v->scopeId == 0xFFFFFFFFu) {
				unsigned long long sum = 0;
				for (unsigned l = 0; l < d->links; l++)
					sum += (unsigned long long)traffic_reads * (v->fieldId - 137) * 1000 + l;
				v->valueType = 3;
				v->value.ullVal = sum;
				v->nvmlReturn = NVML_SUCCESS;
				continue;
			}
#endif
			if (v->scopeId >= d->links) {
				v->nvmlReturn = NVML_ERROR_INVALID_ARGUMENT;
				continue;
			}
			v->valueType = 3; /* UNSIGNED_LONG_LONG */
			v->value.ullVal = (unsigned long long)traffic_reads * (v->fieldId - 137) * 1000 + v->scopeId;
			v->nvmlReturn = NVML_SUCCESS;
		}
		if (total_field(d, v))
			continue;
		if (v->fieldId == 90 && d == &devs[1]) { /* NVLINK_SPEED_MBPS_COMMON */
			v->valueType = 3; /* UNSIGNED_LONG_LONG */
			v->value.ullVal = 25781;
			v->nvmlReturn = NVML_SUCCESS;
		}
	}
	return NVML_SUCCESS;
}
#endif

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned int *mhz)
{
	if (!valid(d))
		return NVML_ERROR_INVALID_ARGUMENT;
	switch (type) {
	case 1: *mhz = 1980; return NVML_SUCCESS; /* SM */
	case 2:                                   /* MEM */
		if (d == &devs[1])
			return NVML_ERROR_NOT_SUPPORTED;
		*mhz = 3201;
		return NVML_SUCCESS;
	}
	return NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int *c)
{
	if (!valid(d) || sensor != 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	*c = d == &devs[0] ? 35 : 41;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw)
{
	if (!valid(d))
		return NVML_ERROR_INVALID_ARGUMENT;
	*mw = d == &devs[0] ? 123456 : 98000;
	return NVML_SUCCESS;
}

#ifndef NO_HEALTH
nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t d, unsigned int link, int counter, unsigned long long *value)
{
	if (!valid(d) || link >= d->links || counter < 0 || counter > 4 || !value)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (counter == 4 && d == &devs[1])
		return NVML_ERROR_NOT_SUPPORTED;
	*value = 100ULL * link + counter;
#ifdef LINK_ERRORS
	static unsigned long long crc_flit_reads;
	if (d == &devs[0] && link == 3 && counter == 2)
		*value += 5 * crc_flit_reads++;
#endif
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int type, int counter, unsigned long long *count)
{
	static const unsigned long long ecc[2][2] = {{3, 17}, {0, 1}}; /* [type][counter] */
	if (!valid(d) || type < 0 || type > 1 || counter < 0 || counter > 1 || !count)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (d == &devs[1])
		return NVML_ERROR_NOT_SUPPORTED;
	*count = ecc[type][counter];
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned int *corr, unsigned int *unc, unsigned int *pending, unsigned int *failed)
{
	if (!valid(d) || !corr || !unc || !pending || !failed)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (d == &devs[1])
		return NVML_ERROR_NOT_SUPPORTED;
	*corr = 2;
	*unc = 0;
	*pending = 0;
	*failed = 0;
	return NVML_SUCCESS;
}

static nvmlReturn_t clocks_event_reasons(nvmlDevice_t d, unsigned long long *reasons)
{
	if (!valid(d) || !reasons)
		return NVML_ERROR_INVALID_ARGUMENT;
	*reasons = d == &devs[0] ? 0x4 : 0x1;
	return NVML_SUCCESS;
}

/* nvmlProcessInfo_v2_t, which the _v2 and _v3 lists fill. */
typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
} nvmlProcessInfo_t;

static nvmlReturn_t processes(nvmlDevice_t d, unsigned int *count, nvmlProcessInfo_t *infos)
{
	nvmlProcessInfo_t procs[3];
	unsigned n = 0;
	if (!valid(d) || !count)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (d == &devs[0])
		procs[n++] = (nvmlProcessInfo_t){getpid(), 600ULL << 20, ~0u, ~0u};
#ifdef BUSY
	static unsigned counted;
	if (d == &devs[1]) {
		procs[n++] = (nvmlProcessInfo_t){getpid(), 300ULL << 20, ~0u, ~0u};
		procs[n++] = (nvmlProcessInfo_t){1, 1ULL << 30, ~0u, ~0u};
		procs[n++] = (nvmlProcessInfo_t){(1u << 22) + 7, ~0ULL, ~0u, ~0u};
		if (*count == 0 && counted++ == 0)
			n--; /* the third starts after this call */
	}
#endif
	if (*count < n) {
		*count = n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	if (n > 0 && !infos)
		return NVML_ERROR_INVALID_ARGUMENT;
	memcpy(infos, procs, n * sizeof procs[0]);
	*count = n;
	return NVML_SUCCESS;
}

#ifdef OLD_NVML
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long *r) { return clocks_event_reasons(d, r); }
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned int *count, nvmlProcessInfo_t *infos) { return processes(d, count, infos); }
#else
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long *r) { return clocks_event_reasons(d, r); }
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long *r) { return NVML_ERROR_FUNCTION_NOT_FOUND; }
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *count, nvmlProcessInfo_t *infos) { return processes(d, count, infos); }
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned int *count, nvmlProcessInfo_t *infos) { return NVML_ERROR_FUNCTION_NOT_FOUND; }
#endif
/* The first version fills a 16-byte struct: a binding that picks it fails. */
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned int *count, void *infos) { return NVML_ERROR_FUNCTION_NOT_FOUND; }
#endif /* NO_HEALTH */

#ifndef NO_PCIE
static nvmlReturn_t pcie(nvmlDevice_t d, unsigned int *v, unsigned dev0, unsigned dev1)
{
	if (!valid(d) || !v)
		return NVML_ERROR_INVALID_ARGUMENT;
	*v = d == &devs[0] ? dev0 : dev1;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned int *gen) { return pcie(d, gen, 5, 1); }
nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned int *width)
{
#ifdef NO_PCIE_WIDTH
	if (d == &devs[1])
		return NVML_ERROR_NOT_SUPPORTED;
#endif
	return pcie(d, width, 16, 8);
}
nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned int *gen) { return pcie(d, gen, 5, 4); }
nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned int *width) { return pcie(d, width, 16, 16); }
/* The two devices meet at one CPU's host bridge (PHB); a device with itself
 * is internal. */
nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t a, nvmlDevice_t b, int *level)
{
	if (!valid(a) || !valid(b) || !level)
		return NVML_ERROR_INVALID_ARGUMENT;
	*level = a == b ? 0 : 30;
	return NVML_SUCCESS;
}
#endif /* NO_PCIE */

#ifndef NO_IDENTITY
static nvmlReturn_t text(nvmlDevice_t d, char *buf, unsigned int length, const char *dev0, const char *dev1)
{
	const char *v;
	if (!valid(d) || !buf)
		return NVML_ERROR_INVALID_ARGUMENT;
	v = d == &devs[0] ? dev0 : dev1;
	if (!v)
		return NVML_ERROR_NOT_SUPPORTED;
	if (strlen(v) + 1 > length)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	strcpy(buf, v);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t d, char *s, unsigned int n) { return text(d, s, n, "1654923000017", NULL); }
nvmlReturn_t nvmlDeviceGetBoardPartNumber(nvmlDevice_t d, char *s, unsigned int n) { return text(d, s, n, "692-2G520-0200-000", "692-2G520-0200-000"); }
nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t d, char *s, unsigned int n) { return text(d, s, n, "96.00.A5.00.01", "96.00.A5.00.01"); }
nvmlReturn_t nvmlDeviceGetInforomImageVersion(nvmlDevice_t d, char *s, unsigned int n) { return text(d, s, n, "G520.0200.00.05", "G520.0200.00.05"); }
#endif /* NO_IDENTITY */

/* fake_inits is the number of nvmlInit_v2 calls not yet shut down. */
int fake_inits(void) { return inits; }

/* ---- GPU fabric ---- */

typedef struct {
	unsigned int version;
	unsigned char clusterUuid[16];
	nvmlReturn_t status;
	unsigned int cliqueId;
	unsigned char state;
	unsigned int healthMask;
} nvmlGpuFabricInfo_v2_t;

typedef struct {
	unsigned char clusterUuid[16];
	nvmlReturn_t status;
	unsigned int cliqueId;
	unsigned char state;
} nvmlGpuFabricInfo_t;

#define FABRIC_INFO_V2 (unsigned)(sizeof(nvmlGpuFabricInfo_v2_t) | (2u << 24))

static nvmlReturn_t fabric(nvmlDevice_t d, unsigned char uuid[16], nvmlReturn_t *status, unsigned *clique, unsigned char *state)
{
	if (!valid(d))
		return NVML_ERROR_INVALID_ARGUMENT;
	if (d == &devs[1])
		return NVML_ERROR_NOT_SUPPORTED;
	for (int i = 0; i < 16; i++)
		uuid[i] = (unsigned char)(0x11 * i);
	const char *cluster = getenv("FAKENVML_FABRIC_CLUSTER"), *cl = getenv("FAKENVML_FABRIC_CLIQUE");
	if (cluster)
		uuid[0] = (unsigned char)strtoul(cluster, NULL, 16);
	*clique = cl ? (unsigned)strtoul(cl, NULL, 10) : 7;
	*status = NVML_SUCCESS;
	*state = 3; /* NVML_GPU_FABRIC_STATE_COMPLETED */
	return NVML_SUCCESS;
}

#ifndef OLD_NVML
nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t d, nvmlGpuFabricInfo_v2_t *info)
{
	if (!info || info->version != FABRIC_INFO_V2)
		return NVML_ERROR_INVALID_ARGUMENT;
	info->healthMask = 0;
	return fabric(d, info->clusterUuid, &info->status, &info->cliqueId, &info->state);
}
#endif

nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t d, nvmlGpuFabricInfo_t *info)
{
	if (!info)
		return NVML_ERROR_INVALID_ARGUMENT;
	return fabric(d, info->clusterUuid, &info->status, &info->cliqueId, &info->state);
}
