package devices

import "testing"

func TestMetalOutcome(t *testing.T) {
	const gib = 1 << 30
	tests := []struct {
		name                  string
		workingSet, allocated uint64
		want                  DeviceMemory
	}{
		{"idle", 38 * gib, 0, Reported{Kind: KindMetal, Name: "Apple M2 Max", Total: 38 * gib, Free: 38 * gib}},
		{"some allocated", 38 * gib, 4 * gib, Reported{Kind: KindMetal, Name: "Apple M2 Max", Total: 38 * gib, Free: 34 * gib, Used: 4 * gib}},
		{"over the recommendation", 8 * gib, 9 * gib, Reported{Kind: KindMetal, Name: "Apple M2 Max", Total: 8 * gib, Free: 0, Used: 9 * gib}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := metalOutcome("Apple M2 Max", tt.workingSet, tt.allocated); got != tt.want {
				t.Errorf("metalOutcome = %#v, want %#v", got, tt.want)
			}
		})
	}
	t.Run("zero working set", func(t *testing.T) {
		if got := metalOutcome("Apple M2 Max", 0, 0); !isQueryFailed(got) {
			t.Errorf("metalOutcome with a zero working set = %v, want QueryFailed", got)
		}
	})
}

func isQueryFailed(dm DeviceMemory) bool {
	_, ok := dm.(QueryFailed)
	return ok
}
