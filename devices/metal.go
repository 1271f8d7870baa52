package devices

import "fmt"

// metalOutcome turns Metal's two numbers into an outcome. Total is
// recommendedMaxWorkingSetSize: Metal's own estimate of how much this device
// can allocate without hurting performance — on Apple silicon a share of the
// unified memory, not the RAM size. Free is what is left of it after
// currentAllocatedSize, the bytes this process's Metal resources already hold.
// Allocations may pass the recommendation, so Free stops at zero.
func metalOutcome(name string, workingSet, allocated uint64) DeviceMemory {
	if workingSet == 0 {
		return QueryFailed{Err: fmt.Errorf("devices: Metal device %q reports a recommendedMaxWorkingSetSize of 0 bytes", name)}
	}
	r := Reported{Kind: KindMetal, Name: name, Total: workingSet, Used: allocated}
	if allocated < workingSet {
		r.Free = workingSet - allocated
	}
	return r
}
