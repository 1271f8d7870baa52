package devices

import "os"

func hostMemory() (HostMem, error) { return HostMemoryFrom(os.DirFS("/")) }
