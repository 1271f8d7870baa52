package devices

import "fmt"

// QueryGPU answers for the GPU the memory policy plans against: the
// MINFER_FAKE_DEVICE simulation when it is set (a malformed value comes back
// as QueryFailed quoting it), else Metal's default device on macOS, else the
// GPU CUDA will use as its device 0 — NVML's GPU 0, or the one the first
// CUDA_VISIBLE_DEVICES entry names. Each call reads the device afresh.
func QueryGPU() DeviceMemory {
	_, primary := gpus()
	return primary
}

// ListGPUs reports every GPU: one outcome per card, or per MIG instance this
// process can see on a MIG-enabled card. It is never empty: when no device
// can be listed, its single entry is the NoDevice or QueryFailed saying why.
func ListGPUs() []DeviceMemory {
	all, _ := gpus()
	return all
}

// Close releases the device library (NVML's Shutdown). Queries after Close
// initialise it again, so Close also lets a caller retry a failed Init.
func Close() error { return platformClose() }

// gpus is the one place both answers come from, so a report's primary entry
// and its list agree. A panic inside a device library's Go wrapper becomes a
// QueryFailed: a device query must never take the application down.
func gpus() (all []DeviceMemory, primary DeviceMemory) {
	if fake, set, err := FakeFromEnv(); set {
		if err != nil {
			fake = QueryFailed{Err: err}
		}
		return []DeviceMemory{fake}, fake
	}
	defer func() {
		if r := recover(); r != nil {
			failed := QueryFailed{Err: fmt.Errorf("devices: device query panicked: %v", r)}
			all, primary = []DeviceMemory{failed}, failed
		}
	}()
	return platformGPUs()
}
