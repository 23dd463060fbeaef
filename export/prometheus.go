package export

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/p2pbench/p2pbench/report"
	"github.com/p2pbench/p2pbench/results"
)

// statuses are the verdict's statuses in the order the metrics list them.
var statuses = []results.Status{results.StatusPass, results.StatusNote, results.StatusWarn, results.StatusFail, results.StatusNotJudged}

// WritePrometheus writes run's verdict and headline figures in the
// Prometheus text exposition format, for node_exporter's textfile
// collector: no timestamps, one sample per series. A run without a
// verdict is an error.
//
//   - p2pbench_verdict{host, status}: 1 for the run's status, 0 for the others;
//   - p2pbench_check{host, check, status}: the same per check;
//   - p2pbench_run_info{host, system, system_serial, driver, cuda, tool, simulated}: 1;
//   - p2pbench_run_start_timestamp_seconds{host}: when the run started;
//   - p2pbench_gpu_info{host, gpu, serial, uuid, name, board_part_number, vbios, inforom}: 1;
//   - p2pbench_headline_bandwidth_bytes_per_second{host, test, direction, part, src, dst,
//     src_serial, dst_serial, size_bytes}: each headline figure's median, in bytes a second;
//   - p2pbench_figure_failed{host, ...the same}: 1 for a headline figure that failed.
//
// A machine of more than MaxPairGPUs GPUs has its headline figures by GPU
// instead of by pair, so that a node's series stay near a thousand, not
// tens of thousands (72 GPUs: 5,112 pairs a figure):
//
//   - p2pbench_headline_bandwidth_min_bytes_per_second{host, test, direction, part, src,
//     src_serial, size_bytes}: the lowest median of the GPU's headline figures to its peers;
//   - p2pbench_headline_failed_figures{host, ...the same}: how many of them failed.
func WritePrometheus(w io.Writer, run *results.Run) error {
	v := run.Verdict
	if v == nil {
		return fmt.Errorf("the run has no verdict to write as Prometheus metrics")
	}
	host := run.Host
	reg := prometheus.NewPedanticRegistry()
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
		reg.MustRegister(g)
		return g
	}
	verdictG := gauge("p2pbench_verdict", "The run's verdict: 1 for the status it has, 0 for the others.", "host", "status")
	for _, s := range statuses {
		verdictG.WithLabelValues(host, string(s)).Set(is(v.Status == s))
	}
	checkG := gauge("p2pbench_check", "Each check of the verdict: 1 for the status it has, 0 for the others.", "host", "check", "status")
	for _, c := range v.Checks {
		for _, s := range statuses {
			checkG.WithLabelValues(host, c.Name, string(s)).Set(is(c.Status == s))
		}
	}
	env := run.Environment
	system, systemSerial := "", ""
	if s := env.System; s != nil {
		system, systemSerial = strings.TrimSpace(s.Vendor+" "+s.Product), s.Serial
	}
	gauge("p2pbench_run_info", "The run and the machine it measured; always 1.", "host", "system", "system_serial", "driver", "cuda", "tool", "simulated").
		WithLabelValues(host, system, systemSerial, env.DriverRelease, env.CUDAVersion, strings.TrimSpace(run.Tool.Name+" "+run.Tool.Version),
			strconv.FormatBool(run.Simulated)).Set(1)
	if !run.Start.IsZero() {
		gauge("p2pbench_run_start_timestamp_seconds", "When the run started, in seconds since the Unix epoch.", "host").
			WithLabelValues(host).Set(float64(run.Start.UnixNano()) / 1e9)
	}
	serial := map[int]string{}
	if len(env.Devices) > 0 {
		info := gauge("p2pbench_gpu_info", "Each GPU of the run, by its board's identity; always 1.",
			"host", "gpu", "serial", "uuid", "name", "board_part_number", "vbios", "inforom")
		for _, d := range env.Devices {
			serial[d.Index] = d.Serial
			info.WithLabelValues(host, strconv.Itoa(d.Index), d.Serial, d.UUID, d.Name, d.BoardPartNumber, d.VBIOS, d.InfoROM).Set(1)
		}
	}
	if hs := report.Headlines(run); len(hs) > 0 && len(env.Devices) > MaxPairGPUs {
		perGPU(gauge, host, serial, hs)
	} else if len(hs) > 0 {
		labels := []string{"host", "test", "direction", "part", "src", "dst", "src_serial", "dst_serial", "size_bytes"}
		bw := gauge("p2pbench_headline_bandwidth_bytes_per_second",
			"Headline bandwidth between two GPUs at the matrix size, median over its samples, in bytes a second.", labels...)
		failed := gauge("p2pbench_figure_failed", "1 for a headline figure that failed (no value), 0 for one measured.", labels...)
		for _, h := range hs {
			lv := []string{host, string(h.Test), string(h.Direction), string(h.Part), strconv.Itoa(h.Src), strconv.Itoa(h.Dst),
				serial[h.Src], serial[h.Dst], strconv.FormatUint(h.Size, 10)}
			failed.WithLabelValues(lv...).Set(is(h.Stats == nil))
			if h.Stats != nil {
				bw.WithLabelValues(lv...).Set(h.Stats.Median * 1e9)
			}
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		return err
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return err
		}
	}
	return nil
}

// MaxPairGPUs is the most GPUs whose headline figures are series of their
// own, pair by pair (56 pairs a figure at 8 GPUs).
const MaxPairGPUs = 8

// perGPU writes the headline figures of a large machine by GPU: the lowest
// median over each GPU's peers, and how many of its figures failed.
func perGPU(gauge func(name, help string, labels ...string) *prometheus.GaugeVec, host string, serial map[int]string, hs []report.Headline) {
	labels := []string{"host", "test", "direction", "part", "src", "src_serial", "size_bytes"}
	low := gauge("p2pbench_headline_bandwidth_min_bytes_per_second",
		"The lowest headline bandwidth from one GPU to its peers at the matrix size (medians over samples), in bytes a second: a machine of more than 8 GPUs is written by GPU, not by pair.", labels...)
	failed := gauge("p2pbench_headline_failed_figures", "How many of one GPU's headline figures to its peers failed (no value).", labels...)
	type key struct {
		test            results.Test
		direction, part string
		src             int
		size            uint64
	}
	least, fails := map[key]float64{}, map[key]int{}
	var order []key
	for _, h := range hs {
		k := key{h.Test, string(h.Direction), string(h.Part), h.Src, h.Size}
		if _, seen := fails[k]; !seen {
			order = append(order, k)
			fails[k] = 0
		}
		switch m, ok := least[k]; {
		case h.Stats == nil:
			fails[k]++
		case !ok || h.Stats.Median < m:
			least[k] = h.Stats.Median
		}
	}
	for _, k := range order {
		lv := []string{host, string(k.test), k.direction, k.part, strconv.Itoa(k.src), serial[k.src], strconv.FormatUint(k.size, 10)}
		failed.WithLabelValues(lv...).Set(float64(fails[k]))
		if m, ok := least[k]; ok {
			low.WithLabelValues(lv...).Set(m * 1e9)
		}
	}
}

func is(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
