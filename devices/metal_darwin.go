package devices

import (
	"runtime"
	"sync"

	"github.com/ebitengine/purego"
	"github.com/ebitengine/purego/objc"
)

// Metal is reached through purego's Objective-C runtime rather than cgo, so a
// CGO_ENABLED=0 macOS build still answers. (darwinkit v0.5.0 was considered:
// it binds MTLDevice's properties but not MTLCreateSystemDefaultDevice, and
// its metal package needs cgo.)
const (
	metalFramework = "/System/Library/Frameworks/Metal.framework/Metal"
	// Apple: a process that does not link CoreGraphics gets no default Metal
	// device, which is the case for a command-line tool.
	coreGraphicsFramework = "/System/Library/Frameworks/CoreGraphics.framework/CoreGraphics"
)

// metalDevice is the system default device, opened once and kept (retained)
// for the life of the process: it is a singleton and cheap to hold.
var metalDevice struct {
	once                  sync.Once
	id                    objc.ID
	name                  string
	failure               DeviceMemory
	workingSet, allocated objc.SEL
}

func platformGPUs() ([]DeviceMemory, DeviceMemory) {
	m := queryMetal()
	return []DeviceMemory{m}, m
}

func platformClose() error { return nil }

func queryMetal() DeviceMemory {
	d := &metalDevice
	d.once.Do(openMetal)
	if d.failure != nil {
		return d.failure
	}
	// Both properties return plain integers (uint64_t and NSUInteger), so no
	// Objective-C object is created and no autorelease pool is needed here.
	return metalOutcome(d.name, objc.Send[uint64](d.id, d.workingSet), objc.Send[uint64](d.id, d.allocated))
}

func openMetal() {
	d := &metalDevice
	if _, err := purego.Dlopen(coreGraphicsFramework, purego.RTLD_NOW|purego.RTLD_GLOBAL); err != nil {
		d.failure = NoDevice{Reason: "CoreGraphics framework not loadable: " + err.Error()}
		return
	}
	lib, err := purego.Dlopen(metalFramework, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		d.failure = NoDevice{Reason: "Metal framework not loadable: " + err.Error()}
		return
	}
	sym, err := purego.Dlsym(lib, "MTLCreateSystemDefaultDevice")
	if err != nil {
		d.failure = NoDevice{Reason: "Metal framework has no MTLCreateSystemDefaultDevice: " + err.Error()}
		return
	}
	var createSystemDefaultDevice func() objc.ID
	purego.RegisterFunc(&createSystemDefaultDevice, sym)
	d.id = createSystemDefaultDevice() // +1 retained; kept, never released
	if d.id == 0 {
		d.failure = NoDevice{Reason: "MTLCreateSystemDefaultDevice returned nil: no Metal GPU"}
		return
	}
	d.workingSet = objc.RegisterName("recommendedMaxWorkingSetSize")
	d.allocated = objc.RegisterName("currentAllocatedSize")
	d.name = metalDeviceName(d.id)
}

// metalDeviceName reads -[MTLDevice name]. The NSString comes back
// autoreleased, so it is read inside a pool, and the pool is pushed and
// popped on one OS thread as Objective-C requires.
func metalDeviceName(device objc.ID) string {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pool := objc.ID(objc.GetClass("NSAutoreleasePool")).Send(objc.RegisterName("new"))
	defer pool.Send(objc.RegisterName("drain"))
	name := device.Send(objc.RegisterName("name"))
	if name == 0 {
		return "Metal GPU"
	}
	return objc.Send[string](name, objc.RegisterName("UTF8String"))
}
