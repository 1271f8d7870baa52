package devices

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// A process in a container (or a systemd slice with MemoryMax) is killed by
// the kernel when its cgroup goes over its memory limit, however much
// MemAvailable says the machine has. So the host's answer is the smaller of
// the two: the cgroup's limit less what the cgroup already uses.

// cgroupMem is the memory limit of the cgroup this process runs in.
type cgroupMem struct {
	Limit  uint64 // bytes; the smallest limit on the way to the root
	Used   uint64 // bytes in use, less reclaimable file cache
	Source string // e.g. "cgroup v2 memory.max"
}

// unlimitedV1 is what cgroup v1 reports for "no limit": 2^63-1 rounded
// down to a page, or anything near it; treat ≥ 2^62 as none.
const unlimitedV1 = 1 << 62

// cgroupMemory reads the memory limit of the cgroup of the process from
// fsys, a view of "/" (proc/self/cgroup, sys/fs/cgroup/…). ok is false when
// there is no limit (or no cgroup filesystem); err is set for files that
// exist but cannot be read as the kernel writes them.
func cgroupMemory(fsys fs.FS) (m cgroupMem, ok bool, err error) {
	self, err := fs.ReadFile(fsys, "proc/self/cgroup")
	if err != nil {
		return cgroupMem{}, false, nil // not Linux, or no /proc
	}
	v2, v1, err := parseProcCgroup(self)
	if err != nil {
		return cgroupMem{}, false, err
	}
	if v2 != "" {
		if m, ok, err := cgroupV2(fsys, v2); err != nil || ok {
			return m, ok, err
		}
	}
	if v1 != "" {
		return cgroupV1(fsys, v1)
	}
	return cgroupMem{}, false, nil
}

// parseProcCgroup reads /proc/self/cgroup: "0::/path" is the v2 unified
// hierarchy; "N:…,memory,…:/path" the v1 memory controller's.
func parseProcCgroup(data []byte) (v2, v1 string, err error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		id, rest, ok1 := strings.Cut(line, ":")
		ctrls, p, ok2 := strings.Cut(rest, ":")
		if !ok1 || !ok2 || !strings.HasPrefix(p, "/") {
			return "", "", fmt.Errorf("devices: /proc/self/cgroup line %q is not ID:CONTROLLERS:/PATH", line)
		}
		switch {
		case id == "0" && ctrls == "":
			v2 = p
		case containsField(ctrls, "memory"):
			v1 = p
		}
	}
	if err := sc.Err(); err != nil {
		return "", "", fmt.Errorf("devices: reading /proc/self/cgroup: %w", err)
	}
	return v2, v1, nil
}

func containsField(list, want string) bool {
	for _, f := range strings.Split(list, ",") {
		if f == want {
			return true
		}
	}
	return false
}

// cgroupDirs lists the cgroup's folder under mount and its ancestors, leaf
// first. Inside a container /proc/self/cgroup may name the host's path
// while the container sees its own cgroup at the mount's root: then only
// the root is there.
func cgroupDirs(fsys fs.FS, mount, p string) []string {
	leaf := path.Join(mount, p)
	if _, err := fs.Stat(fsys, leaf); err != nil {
		return []string{mount}
	}
	var dirs []string
	for d := leaf; ; d = path.Dir(d) {
		dirs = append(dirs, d)
		if d == mount || !strings.HasPrefix(d, mount+"/") {
			return dirs
		}
	}
}

func cgroupV2(fsys fs.FS, p string) (cgroupMem, bool, error) {
	const mount = "sys/fs/cgroup"
	dirs := cgroupDirs(fsys, mount, p)
	limit, found := uint64(0), false
	for _, d := range dirs {
		data, err := fs.ReadFile(fsys, d+"/memory.max")
		if errors.Is(err, fs.ErrNotExist) {
			continue // the root has none
		}
		if err != nil {
			return cgroupMem{}, false, fmt.Errorf("devices: %s/memory.max: %w", d, err)
		}
		n, unlimited, err := parseLimit(data)
		if err != nil {
			return cgroupMem{}, false, fmt.Errorf("devices: /%s/memory.max: %w", d, err)
		}
		if !unlimited && (!found || n < limit) {
			limit, found = n, true
		}
	}
	if !found {
		return cgroupMem{}, false, nil
	}
	used, err := cgroupUsed(fsys, dirs[0], "memory.current", "inactive_file")
	if err != nil {
		return cgroupMem{}, false, err
	}
	return cgroupMem{Limit: limit, Used: used, Source: "cgroup v2 memory.max"}, true, nil
}

func cgroupV1(fsys fs.FS, p string) (cgroupMem, bool, error) {
	const mount = "sys/fs/cgroup/memory"
	dirs := cgroupDirs(fsys, mount, p)
	data, err := fs.ReadFile(fsys, dirs[0]+"/memory.limit_in_bytes")
	if errors.Is(err, fs.ErrNotExist) {
		return cgroupMem{}, false, nil
	}
	if err != nil {
		return cgroupMem{}, false, fmt.Errorf("devices: /%s/memory.limit_in_bytes: %w", dirs[0], err)
	}
	limit, unlimited, err := parseLimit(data)
	if err != nil {
		return cgroupMem{}, false, fmt.Errorf("devices: /%s/memory.limit_in_bytes: %w", dirs[0], err)
	}
	// memory.stat's hierarchical_memory_limit covers the ancestors.
	if st, err := fs.ReadFile(fsys, dirs[0]+"/memory.stat"); err == nil {
		if h, ok := statField(st, "hierarchical_memory_limit"); ok && h < unlimitedV1 && (unlimited || h < limit) {
			limit, unlimited = h, false
		}
	}
	if unlimited || limit >= unlimitedV1 {
		return cgroupMem{}, false, nil
	}
	used, err := cgroupUsed(fsys, dirs[0], "memory.usage_in_bytes", "total_inactive_file")
	if err != nil {
		return cgroupMem{}, false, err
	}
	return cgroupMem{Limit: limit, Used: used, Source: "cgroup v1 memory.limit_in_bytes"}, true, nil
}

// cgroupUsed is the cgroup's usage less its inactive file cache (what the
// kernel reclaims before it kills), as container runtimes count a working
// set. A missing usage file counts as nothing used.
func cgroupUsed(fsys fs.FS, dir, usageFile, inactiveKey string) (uint64, error) {
	data, err := fs.ReadFile(fsys, dir+"/"+usageFile)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("devices: /%s/%s: %w", dir, usageFile, err)
	}
	used, unlimited, err := parseLimit(data)
	if err != nil || unlimited {
		return 0, fmt.Errorf("devices: /%s/%s: %q is not a byte count", dir, usageFile, bytes.TrimSpace(data))
	}
	if st, err := fs.ReadFile(fsys, dir+"/memory.stat"); err == nil {
		if inactive, ok := statField(st, inactiveKey); ok {
			used -= min(used, inactive)
		}
	}
	return used, nil
}

// parseLimit reads a cgroup memory file: a byte count, or "max" (v2's no
// limit).
func parseLimit(data []byte) (n uint64, unlimited bool, err error) {
	s := strings.TrimSpace(string(data))
	if s == "max" {
		return 0, true, nil
	}
	n, err = strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%q is not a byte count or max", truncate(s, 40))
	}
	return n, false, nil
}

// statField finds "key N" in a memory.stat file.
func statField(data []byte, key string) (uint64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if ok && k == key {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// applyCgroup narrows the host's answer to the cgroup's limit.
func applyCgroup(h HostMem, c cgroupMem) HostMem {
	if c.Limit >= h.Total && h.Total > 0 {
		return h // a limit above the machine changes nothing
	}
	room := c.Limit - min(c.Limit, c.Used)
	h.Total = c.Limit
	h.Available = min(h.Available, room)
	h.Source = fmt.Sprintf("%s; %s %d MiB, %d MiB used", h.Source, c.Source, mib(c.Limit), mib(c.Used))
	return h
}

// HostMemoryFrom is Linux's HostMemory read from root, a view of "/"
// (proc/meminfo, proc/self/cgroup, sys/fs/cgroup/…): MemAvailable, narrowed
// to the cgroup's memory limit less its working set. Tests pass a fake tree.
func HostMemoryFrom(root fs.FS) (HostMem, error) {
	data, err := fs.ReadFile(root, "proc/meminfo")
	if err != nil {
		return HostMem{}, fmt.Errorf("%w: %w", ErrHostMemoryUnknown, err)
	}
	h, err := parseMeminfo(data)
	if err != nil {
		return HostMem{}, err
	}
	return withCgroup(h, root)
}

// withCgroup applies the cgroup found in fsys to the host's answer. A
// cgroup file the kernel should have written but that does not parse is an
// error: guessing could let the kernel kill the process.
func withCgroup(h HostMem, fsys fs.FS) (HostMem, error) {
	c, ok, err := cgroupMemory(fsys)
	if err != nil {
		return HostMem{}, fmt.Errorf("%w: %w", ErrHostMemoryUnknown, err)
	}
	if !ok {
		return h, nil
	}
	return applyCgroup(h, c), nil
}
