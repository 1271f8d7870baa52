package offload

import (
	"fmt"
	"testing"
)

func TestUnblockedFollowDeviceOnlyWhenAllBlocksOffloaded(t *testing.T) {
	const n = 22
	cases := []struct {
		gpuLayers     int
		wantBlocks    int
		wantUnblocked bool
	}{
		{0, 0, false},
		{1, 1, false},
		{n - 1, n - 1, false},
		{n, n, false},    // every block, output stays on the CPU
		{n + 1, n, true}, // llama.cpp's n_gpu_layers > n_layer: the output too
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("gpu_layers=%d", c.gpuLayers), func(t *testing.T) {
			p := Plan{GPULayers: c.gpuLayers, NLayers: n}
			if got := p.DeviceBlocks(); got != c.wantBlocks {
				t.Errorf("DeviceBlocks() = %d, want %d", got, c.wantBlocks)
			}
			if got := p.DeviceHoldsUnblocked(); got != c.wantUnblocked {
				t.Errorf("DeviceHoldsUnblocked() = %v, want %v", got, c.wantUnblocked)
			}
			for _, name := range []string{"token_embd.weight", "output_norm.weight", "output.weight", "rope_freqs.weight"} {
				if got := p.AllowsWeight(name); got != c.wantUnblocked {
					t.Errorf("AllowsWeight(%q) = %v, want %v", name, got, c.wantUnblocked)
				}
			}
		})
	}
}

func TestPlanIsPrefixOfBlocks(t *testing.T) {
	// Blocks 0..GPULayers-1 on the device, the rest on the CPU; every reader
	// (OnDevice, AllowsWeight on plain, namespaced and fused names) agrees.
	const n = 6
	for gpu := 0; gpu <= n+1; gpu++ {
		p := Plan{GPULayers: gpu, NLayers: n}
		t.Run(p.String(), func(t *testing.T) {
			for b := -1; b <= n; b++ {
				want := b >= 0 && b < gpu && b < n
				if got := p.OnDevice(b); got != want {
					t.Errorf("OnDevice(%d) = %v, want %v", b, got, want)
				}
				for _, name := range []string{
					fmt.Sprintf("blk.%d.attn_q.weight", b),
					fmt.Sprintf("model.blk.%d.ffn_down.weight", b),
					fmt.Sprintf("blk.%d.attn_qkv.weight", b),
					fmt.Sprintf("enc/blk.%d.ffn_gu.weight", b),
				} {
					if b < 0 {
						continue // "blk.-1." is not a block name; covered by BlockOf's tests
					}
					if got := p.AllowsWeight(name); got != want {
						t.Errorf("AllowsWeight(%q) = %v, want %v", name, got, want)
					}
				}
			}
		})
	}
}

func TestPlanClampsOutOfRangeGPULayers(t *testing.T) {
	cases := []struct {
		name                 string
		gpuLayers, nLayers   int
		wantGPU, wantNLayers int
	}{
		{"negative is none", -5, 10, 0, 10},
		{"above all+output is all+output", 99, 10, 11, 10},
		{"exactly all+output kept", 11, 10, 11, 10},
		{"negative block count is zero blocks", 3, -2, 1, 0},
		{"zero-block model may hold only the output", 1, 0, 1, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := NewPlan(c.gpuLayers, c.nLayers)
			want := Plan{GPULayers: c.wantGPU, NLayers: c.wantNLayers}
			if got != want {
				t.Fatalf("NewPlan(%d, %d) = %+v, want %+v", c.gpuLayers, c.nLayers, got, want)
			}
			// A hand-built, unclamped Plan must read the same as the clamped one.
			raw := Plan{GPULayers: c.gpuLayers, NLayers: c.nLayers}
			if raw.DeviceBlocks() != got.DeviceBlocks() || raw.DeviceHoldsUnblocked() != got.DeviceHoldsUnblocked() || raw.String() != got.String() {
				t.Fatalf("unclamped %+v reads %q, clamped reads %q", raw, raw.String(), got.String())
			}
		})
	}
}

func TestPlanString(t *testing.T) {
	cases := []struct {
		plan Plan
		want string
	}{
		{Plan{0, 22}, "0/22 blocks on device"},
		{Plan{18, 22}, "18/22 blocks on device"},
		{Plan{22, 22}, "22/22 blocks on device"},
		{Plan{23, 22}, "22/22 blocks + output on device"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			if got := c.plan.String(); got != c.want {
				t.Fatalf("%+v.String() = %q, want %q", c.plan, got, c.want)
			}
		})
	}
}
