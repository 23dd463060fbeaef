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
 * Build flags:
 *   -DNO_FIELD_VALUES   leave out nvmlDeviceGetFieldValues (optional)
 */
#include <stdio.h>
#include <string.h>

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
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int count, nvmlFieldValue_t *values)
{
	if (!valid(d) || count <= 0 || !values)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (d == &devs[0] && values[0].fieldId == 138)
		traffic_reads++;
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
			 * reading r holds r * (field - 137) * 1000 + l. */
			if (v->scopeId >= d->links) {
				v->nvmlReturn = NVML_ERROR_INVALID_ARGUMENT;
				continue;
			}
			v->valueType = 3; /* UNSIGNED_LONG_LONG */
			v->value.ullVal = (unsigned long long)traffic_reads * (v->fieldId - 137) * 1000 + v->scopeId;
			v->nvmlReturn = NVML_SUCCESS;
		}
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

/* fake_inits is the number of nvmlInit_v2 calls not yet shut down. */
int fake_inits(void) { return inits; }
