package results_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

func nanValue() float64 { return math.NaN() }

func TestValidateSynthetic(t *testing.T) {
	for _, o := range []resultstest.Options{{GPUs: 2}, {GPUs: 8, Faults: true}, {GPUs: 12, NoSweep: true}} {
		if err := resultstest.New(o).Validate(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

func TestValidateInMemory(t *testing.T) {
	// Values JSON cannot carry are checked for runs built in memory.
	tests := []struct {
		name string
		edit func(r *results.Run)
		want string
	}{
		{"NaN sample", func(r *results.Run) { r.Figures[0].Samples[1] = math.NaN() }, "samples[1] is NaN"},
		{"Inf stat", func(r *results.Run) { r.Figures[0].Stats.Mean = math.Inf(1) }, "stats.mean is +Inf"},
		{"subnormal sample", func(r *results.Run) { r.Figures[0].Samples[2] = 5e-324 }, "samples[2] is 5e-324, a subnormal number"},
		{"subnormal stat", func(r *results.Run) { r.Figures[0].Stats.P5 = 1e-310 }, "stats.p5 is 1e-310, a subnormal number"},
		{"NaN power", func(r *results.Run) { r.Environment.StateEnd[0].PowerW = math.NaN() }, "power_w is NaN"},
		{"NaN link", func(r *results.Run) { r.Topology.Pairs[0].LinkGBps = math.NaN() }, "link_gbps is NaN"},
		{"self pair", func(r *results.Run) { r.Topology.Pairs[0].Dst = r.Topology.Pairs[0].Src }, "src and dst are both"},
		// The places named in problems (validate.go's place), nested too.
		{"NaN link, second pair", func(r *results.Run) { r.Topology.Pairs[1].LinkGBps = math.NaN() }, "topology.pairs[1]: link_gbps is NaN"},
		{"NaN NVLink speed", func(r *results.Run) {
			r.Topology.Links = []results.DeviceLinks{{Device: 0}, {Device: 1, Links: []results.Link{{}, {SpeedGBps: math.NaN()}}}}
		}, "topology.links[1].links[1]: speed_gbps is NaN"},
		{"NaN health speed", func(r *results.Run) {
			r.Environment.HealthAfter = []results.Health{{Device: 0}, {Device: 1, Links: []results.LinkHealth{{}, {}, {SpeedGBps: math.Inf(1)}}}}
		}, "environment.health_after[1].links[2]: speed_gbps is +Inf"},
		{"long device name", func(r *results.Run) { r.Environment.Devices[1].Name = strings.Repeat("x", 300) }, "environment.devices[1]: name is 300 bytes long"},
		{"duplicate device", func(r *results.Run) { r.Environment.Devices[1].Index = 0 }, "appears twice"},
		{"tuning NaN", func(r *results.Run) { r.Tuning[0].Tried[0].CV = math.NaN() }, "tuning[0].tried[0]: cv is NaN"},
		{"schema", func(r *results.Run) { r.Schema = 3 }, "schema is 3"},
		{"method check without windows", func(r *results.Run) { r.Figures[0].Check = &results.MethodCheck{} }, "method_check has 0 repetitions per sample and 0 samples"},
		{"method check NaN", func(r *results.Run) {
			r.Figures[0].Check = &results.MethodCheck{RepsPerSample: 15, Samples: []float64{395.2, math.NaN()}, Delta: -0.01}
		}, "method_check.samples[1] is NaN"},
		{"method check Inf delta", func(r *results.Run) {
			r.Figures[0].Check = &results.MethodCheck{RepsPerSample: 15, Samples: []float64{395.2}, Delta: math.Inf(-1)}
		}, "method_check.delta is +Inf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true, Samples: 4})
			tt.edit(r)
			err := r.Validate()
			var ve *results.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Validate = %v, want a *ValidationError", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%q does not say %q", err, tt.want)
			}
		})
	}
}

func TestValidationErrorListsAFew(t *testing.T) {
	r := resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true, Samples: 4})
	for i := range r.Figures {
		r.Figures[i].Unit = ""
	}
	err := r.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	if n := strings.Count(err.Error(), "unit is empty"); n != 8 {
		t.Errorf("message lists %d problems, want 8", n)
	}
	if !strings.Contains(err.Error(), "more") {
		t.Errorf("message %q does not say how many more", err)
	}
}

func TestValidateErroredFigure(t *testing.T) {
	r := resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true, Samples: 4})
	r.Figures[0].Samples, r.Figures[0].Stats, r.Figures[0].Error = nil, nil, "CUDA_ERROR_LAUNCH_FAILED"
	if err := r.Validate(); err != nil {
		t.Errorf("an errored figure without samples is valid, got %v", err)
	}
}

func TestValidateUnitsAgainstTheCatalogue(t *testing.T) {
	tests := []struct {
		name string
		edit func(r *results.Run)
		want string // "" for valid
	}{
		{"a test no catalogue describes, any unit", func(r *results.Run) {
			r.Figures[0].Test, r.Figures[0].Unit = "other_tool_test", "MB/s"
		}, ""},
		{"a known test in another unit", func(r *results.Run) { r.Figures[0].Unit = results.UnitNs },
			"unit is ns, but the catalogue gives GB/s for ce_read"},
		{"a known test in another unit in the run's catalogue too", func(r *results.Run) {
			info := r.Catalogue[results.CERead]
			info.Unit = "MB/s"
			r.Catalogue[results.CERead] = info
			for i := range r.Figures {
				if r.Figures[i].Test == results.CERead {
					r.Figures[i].Unit = "MB/s"
				}
			}
		}, "catalogue entry ce_read: unit is MB/s, but ce_read is measured in GB/s"},
		{"a test only the run's catalogue describes", func(r *results.Run) {
			r.Catalogue["other_tool_test"] = results.TestInfo{Unit: "MB/s"}
			r.Figures[0].Test = "other_tool_test"
		}, "unit is GB/s, but the catalogue gives MB/s for other_tool_test"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true, Samples: 4})
			tt.edit(r)
			err := r.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Validate = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestClipText(t *testing.T) {
	if s := "short"; results.ClipText(s) != s {
		t.Errorf("ClipText changed %q", s)
	}
	long := strings.Repeat("é", results.MaxTextBytes) // 2 bytes a rune
	got := results.ClipText(long)
	if len(got) > results.MaxTextBytes || !utf8.ValidString(got) || !strings.HasSuffix(got, "bytes cut]") {
		t.Errorf("ClipText gave %d bytes, valid UTF-8 %v, ending %q", len(got), utf8.ValidString(got), got[len(got)-20:])
	}
	r := resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true, Samples: 4})
	r.Notes = []string{got}
	r.Figures[0].Error = got
	if err := r.Validate(); err != nil {
		t.Errorf("a clipped text is refused: %v", err)
	}
}
