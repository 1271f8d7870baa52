package devices

import (
	"fmt"
	"io"
	"os"
)

// Report is what `minfer devices` shows: every GPU's outcome, the one the
// memory policy uses, and the host's memory. It marshals to JSON with an
// "outcome" field on each device ("reported", "query_failed", "no_device").
// It holds no budget: the CLI adds internal/alloc's.
type Report struct {
	// FakeDevice is MINFER_FAKE_DEVICE when set, so a bug report shows that
	// its numbers were simulated.
	FakeDevice string         `json:"fake_device,omitempty"`
	Primary    DeviceMemory   `json:"primary"`
	GPUs       []DeviceMemory `json:"gpus"`
	Host       *HostMem       `json:"host,omitempty"`
	HostError  string         `json:"host_error,omitempty"`
}

// Collect queries every device once and the host's memory.
func Collect() Report {
	var r Report
	r.FakeDevice = os.Getenv(FakeDeviceEnv)
	r.GPUs, r.Primary = gpus()
	if host, err := HostMemory(); err != nil {
		r.HostError = err.Error()
	} else {
		r.Host = &host
	}
	return r
}

// WriteText writes the report for a terminal, one line per entry.
func (r Report) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	if r.FakeDevice != "" {
		ew.printf("simulated by %s=%q\n", FakeDeviceEnv, r.FakeDevice)
	}
	for _, g := range r.GPUs {
		ew.printf("%s\n", g)
	}
	if r.Primary != nil {
		ew.printf("used for planning: %s\n", r.Primary)
	}
	switch {
	case r.Host != nil:
		ew.printf("%s\n", r.Host)
	case r.HostError != "":
		ew.printf("host: %s\n", r.HostError)
	}
	return ew.err
}

// errWriter keeps the first write error so WriteText reads as a list of lines.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
