# Reads, on every GPU, the NVLink error counters as DCGM's health watch reads them (GPU-total fields
# through nvmlDeviceGetFieldValues) and as p2pbench reads them (per-link nvmlDeviceGetNvLinkErrorCounter).
import json, sys, time
import pynvml as N
N.nvmlInit()
out = {"driver": N.nvmlSystemGetDriverVersion(), "time": time.time(), "gpus": []}
names = ["NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", "NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
         "NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL",
         "NVML_FI_DEV_NVLINK_ECC_DATA_ERROR_COUNT_TOTAL", "NVML_FI_DEV_NVLINK_LINK_COUNT",
         "NVML_FI_DEV_NVLINK_COUNT_LINK_RECOVERY_SUCCESSFUL_EVENTS", "NVML_FI_DEV_NVLINK_COUNT_LINK_RECOVERY_FAILED_EVENTS",
         "NVML_FI_DEV_NVLINK_COUNT_LINK_RECOVERY_EVENTS", "NVML_FI_DEV_NVLINK_COUNT_EFFECTIVE_ERRORS",
         "NVML_FI_DEV_NVLINK_COUNT_SYMBOL_ERRORS", "NVML_FI_DEV_NVLINK_COUNT_RAW_BER"]
ids = [(n, getattr(N, n)) for n in names if hasattr(N, n)]
for i in range(N.nvmlDeviceGetCount()):
    h = N.nvmlDeviceGetHandleByIndex(i)
    g = {"index": i, "name": N.nvmlDeviceGetName(h), "fields": {}, "links": []}
    try:
        vals = N.nvmlDeviceGetFieldValues(h, [fid for _, fid in ids])
        for (n, fid), v in zip(ids, vals):
            g["fields"][n] = {"id": fid, "nvmlReturn": v.nvmlReturn, "valueType": v.valueType,
                              "ull": v.value.ullVal, "ui": v.value.uiVal, "d": v.value.dVal, "timestamp": v.timestamp}
    except Exception as e:
        g["fields_error"] = repr(e)
    for l in range(18):
        row = {"link": l}
        try:
            row["state"] = N.nvmlDeviceGetNvLinkState(h, l)
        except Exception as e:
            row["state"] = repr(e)
        for cname, c in [("replay", 0), ("recovery", 1), ("crc_flit", 2), ("crc_data", 3), ("ecc_data", 4)]:
            try:
                row[cname] = N.nvmlDeviceGetNvLinkErrorCounter(h, l, c)
            except Exception as e:
                row[cname] = repr(e)
        g["links"].append(row)
    out["gpus"].append(g)
json.dump(out, sys.stdout, indent=1)
