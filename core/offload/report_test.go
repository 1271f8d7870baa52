package offload

import (
	"strings"
	"testing"
)

func TestReportShowsWhereBlocksLandedWithMeasuredBytes(t *testing.T) {
	cases := []struct {
		name   string
		report Report
		want   string
	}{
		{
			name: "partial offload",
			report: Report{Plan: Plan{18, 22}, Backend: "CUDA0", DeviceName: "NVIDIA H200",
				DeviceBytes: 3624013824, HostBytes: 851443712},
			want: `offload: 18/22 blocks on CUDA0 (NVIDIA H200)
  blocks 0–17 → CUDA0 (NVIDIA H200)
  blocks 18–21 → CPU
  output/embeddings → CPU
  weights: 3 456.1 MiB on CUDA0 (NVIDIA H200), 812.0 MiB on CPU
`,
		},
		{
			name:   "every block, output on CPU",
			report: Report{Plan: Plan{4, 4}, Backend: "CUDA0", DeviceName: "NVIDIA H200", DeviceBytes: 4 << 20, HostBytes: 1 << 20},
			want: `offload: 4/4 blocks on CUDA0 (NVIDIA H200)
  blocks 0–3 → CUDA0 (NVIDIA H200)
  output/embeddings → CPU
  weights: 4.0 MiB on CUDA0 (NVIDIA H200), 1.0 MiB on CPU
`,
		},
		{
			name:   "all blocks and output",
			report: Report{Plan: Plan{5, 4}, Backend: "CUDA0", DeviceName: "NVIDIA H200", DeviceBytes: 5 << 20, HostBytes: 0},
			want: `offload: 4/4 blocks + output on CUDA0 (NVIDIA H200)
  blocks 0–3 → CUDA0 (NVIDIA H200)
  output/embeddings → CUDA0 (NVIDIA H200)
  weights: 5.0 MiB on CUDA0 (NVIDIA H200), 0 B on CPU
`,
		},
		{
			name: "measured device memory",
			report: Report{Plan: Plan{4, 4}, Backend: "CUDA0", DeviceName: "NVIDIA H200", DeviceBytes: 4 << 20, HostBytes: 1 << 20,
				DeviceFree: 100 << 20, DeviceTotal: 1 << 30},
			want: `offload: 4/4 blocks on CUDA0 (NVIDIA H200)
  blocks 0–3 → CUDA0 (NVIDIA H200)
  output/embeddings → CPU
  weights: 4.0 MiB on CUDA0 (NVIDIA H200), 1.0 MiB on CPU
  device memory after the load: 924.0 MiB in use of 1 024.0 MiB (measured by the device)
`,
		},
		{
			name:   "single block each side, tiny model, note",
			report: Report{Plan: Plan{1, 2}, Backend: "CUDA0", DeviceBytes: 1536, HostBytes: 700, Note: "auto: budget 7680 MiB (¾ of 10240 MiB free on NVIDIA H200)"},
			want: `offload: 1/2 blocks on CUDA0
  block 0 → CUDA0
  block 1 → CPU
  output/embeddings → CPU
  weights: 1.5 KiB on CUDA0, 700 B on CPU
  note: auto: budget 7680 MiB (¾ of 10240 MiB free on NVIDIA H200)
`,
		},
		{
			name:   "CPU only by request",
			report: Report{Plan: Plan{0, 22}, HostBytes: 1 << 30},
			want: `offload: 0/22 blocks on device
  blocks 0–21 → CPU
  output/embeddings → CPU
  weights: 0 B on device, 1 024.0 MiB on CPU
`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.report.String(); got != c.want {
				t.Fatalf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

func TestReportFallbackLeadsWithReasonAndNeverClaimsDeviceBlocks(t *testing.T) {
	r := Report{
		Plan: Plan{23, 22}, Backend: "Metal", DeviceName: "Apple M3 Max",
		HostBytes: 4724464025, Fallback: "Minfer has no Metal compute backend yet",
	}
	want := `offload: FELL BACK TO CPU ONLY: Minfer has no Metal compute backend yet
  planned 22/22 blocks + output on Metal (Apple M3 Max); running everything on CPU
  blocks 0–21 → CPU
  output/embeddings → CPU
  weights: 0 B on Metal (Apple M3 Max), 4 505.6 MiB on CPU
`
	got := r.String()
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	for _, line := range strings.Split(got, "\n") {
		if strings.Contains(line, "→ Metal") {
			t.Fatalf("fallback report places something on the device: %q", line)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	cases := []struct {
		n    int64
		want string
	}{
		{0, "0 B"},
		{1023, "1023 B"},
		{1024, "1.0 KiB"},
		{1<<20 - 1, "1024.0 KiB"},
		{1 << 20, "1.0 MiB"},
		{1<<20 + 1<<20/20 + 1, "1.1 MiB"}, // just over 1.05 MiB rounds up
		{2<<20 - 1, "2.0 MiB"},            // the tenth carries into the whole
		{1234567 << 20, "1 234 567.0 MiB"},
		{1<<63 - 1, "8 796 093 022 208.0 MiB"}, // no overflow at the top
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			if got := formatBytes(c.n); got != c.want {
				t.Fatalf("formatBytes(%d) = %q, want %q", c.n, got, c.want)
			}
		})
	}
}

func TestReportWhere(t *testing.T) {
	for _, c := range []struct {
		r    Report
		want string
	}{
		{Report{Plan: Plan{22, 22}, Backend: "CUDA NVIDIA H200", DeviceName: "NVIDIA H200"}, "22/22 blocks on CUDA NVIDIA H200"},
		{Report{Plan: Plan{23, 22}, Backend: "CUDA NVIDIA H200"}, "22/22 blocks + output on CUDA NVIDIA H200"},
		{Report{Plan: Plan{11, 22}, Backend: "CUDA NVIDIA H200"}, "11/22 blocks on CUDA NVIDIA H200, 11 on CPU"},
		{Report{Plan: Plan{0, 22}}, "22/22 blocks on CPU"},
		{Report{Plan: Plan{11, 22}, DeviceName: "Apple M2", Fallback: "no GPU compute backend"}, "22/22 blocks on CPU (GPU fallback)"},
	} {
		if got := c.r.Where(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.r.Plan, got, c.want)
		}
	}
}
