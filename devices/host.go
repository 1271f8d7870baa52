package devices

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// HostMem is the machine's own memory, what the CPU backend draws on.
type HostMem struct {
	Total     uint64 `json:"total_bytes"`
	Available uint64 `json:"available_bytes"` // what can be allocated without swapping, as the OS estimates it
	Source    string `json:"source"`          // where the numbers came from, and how far to trust them
}

func (h HostMem) String() string {
	return fmt.Sprintf("host: %d MiB available of %d MiB (%s)", mib(h.Available), mib(h.Total), h.Source)
}

// ErrHostMemoryUnknown is returned where the OS does not say how much memory
// is available, rather than guessing a number.
var ErrHostMemoryUnknown = errors.New("devices: host memory unknown")

// HostMemory reports the machine's total and available memory: Linux's
// MemAvailable, macOS's free+speculative+purgeable pages (a lower bound),
// Windows' GlobalMemoryStatusEx.
func HostMemory() (HostMem, error) { return hostMemory() }

// meminfoSource says where Linux numbers come from.
const meminfoSource = "/proc/meminfo MemAvailable"

// parseMeminfo reads MemTotal and MemAvailable from /proc/meminfo's text.
// Other lines are skipped: the kernel adds fields over time. MemAvailable is
// the kernel's own estimate of what can be allocated without swapping (page
// cache included); kernels before 3.14 lack it, and then we say so instead of
// summing fields into a guess.
func parseMeminfo(data []byte) (HostMem, error) {
	var total, available uint64
	var haveTotal, haveAvailable bool
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		key, rest, ok := strings.Cut(line, ":")
		if !ok || (key != "MemTotal" && key != "MemAvailable") {
			continue
		}
		n, err := meminfoBytes(rest)
		if err != nil {
			return HostMem{}, fmt.Errorf("devices: /proc/meminfo line %q: %w", line, err)
		}
		if key == "MemTotal" {
			total, haveTotal = n, true
		} else {
			available, haveAvailable = n, true
		}
	}
	if err := sc.Err(); err != nil {
		return HostMem{}, fmt.Errorf("devices: reading /proc/meminfo: %w", err)
	}
	switch {
	case !haveTotal:
		return HostMem{}, fmt.Errorf("%w: /proc/meminfo has no MemTotal line", ErrHostMemoryUnknown)
	case !haveAvailable:
		return HostMem{}, fmt.Errorf("%w: /proc/meminfo has no MemAvailable line (Linux older than 3.14)", ErrHostMemoryUnknown)
	}
	return HostMem{Total: total, Available: available, Source: meminfoSource}, nil
}

// meminfoBytes reads a value such as "   16318412 kB". /proc/meminfo's "kB"
// means KiB.
func meminfoBytes(field string) (uint64, error) {
	fields := strings.Fields(field)
	if len(fields) != 2 || fields[1] != "kB" {
		return 0, errors.New(`want "<number> kB"`)
	}
	n, err := strconv.ParseUint(fields[0], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a whole number", fields[0])
	}
	if n > ^uint64(0)>>10 {
		return 0, fmt.Errorf("%d kB does not fit in 64 bits of bytes", n)
	}
	return n << 10, nil
}
