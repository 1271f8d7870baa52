package devices

import (
	"strings"
	"testing"
	"testing/fstest"
)

const gib = 1 << 30

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

// TestHostMemoryHonoursCgroupLimits: a fake root for each way Linux puts a
// process under a memory limit; the host's answer shrinks to the limit less
// the cgroup's working set, and says where the numbers came from.
func TestHostMemoryHonoursCgroupLimits(t *testing.T) {
	host := HostMem{Total: 64 * gib, Available: 48 * gib, Source: meminfoSource}
	tests := []struct {
		name         string
		fs           fstest.MapFS
		total, avail uint64
		source       string // part of Source; "" : unchanged
		wantErr      string
	}{
		{"v2 container at the mount root", fstest.MapFS{
			"proc/self/cgroup":             file("0::/\n"),
			"sys/fs/cgroup/memory.max":     file("2147483648\n"),
			"sys/fs/cgroup/memory.current": file("536870912\n"),
			"sys/fs/cgroup/memory.stat":    file("anon 100\ninactive_file 268435456\nactive_file 5\n"),
		}, 2 * gib, 2*gib - 256<<20, "cgroup v2 memory.max 2048 MiB, 256 MiB used", ""},
		{"v2 slice: the smallest limit up the tree", fstest.MapFS{
			"proc/self/cgroup":                                  file("0::/user.slice/app.scope\n"),
			"sys/fs/cgroup/user.slice/memory.max":               file("4294967296\n"),
			"sys/fs/cgroup/user.slice/app.scope/memory.max":     file("max\n"),
			"sys/fs/cgroup/user.slice/app.scope/memory.current": file("1073741824\n"),
		}, 4 * gib, 3 * gib, "cgroup v2 memory.max 4096 MiB", ""},
		{"v2 host path not visible in the container", fstest.MapFS{
			"proc/self/cgroup":             file("0::/kubepods/pod1/abc\n"),
			"sys/fs/cgroup/memory.max":     file("1073741824\n"),
			"sys/fs/cgroup/memory.current": file("0\n"),
		}, 1 * gib, 1 * gib, "cgroup v2", ""},
		{"v2 without a limit", fstest.MapFS{
			"proc/self/cgroup":         file("0::/\n"),
			"sys/fs/cgroup/memory.max": file("max\n"),
		}, 64 * gib, 48 * gib, "", ""},
		{"v2 limit above the machine", fstest.MapFS{
			"proc/self/cgroup":         file("0::/\n"),
			"sys/fs/cgroup/memory.max": file("137438953472\n"),
		}, 64 * gib, 48 * gib, "", ""},
		{"v2 over its limit already", fstest.MapFS{
			"proc/self/cgroup":             file("0::/\n"),
			"sys/fs/cgroup/memory.max":     file("1073741824\n"),
			"sys/fs/cgroup/memory.current": file("2147483648\n"),
		}, 1 * gib, 0, "cgroup v2", ""},
		{"v1 docker", fstest.MapFS{
			"proc/self/cgroup":                           file("12:pids:/docker/abc\n4:memory:/docker/abc\n1:name=systemd:/docker/abc\n"),
			"sys/fs/cgroup/memory/memory.limit_in_bytes": file("3221225472\n"),
			"sys/fs/cgroup/memory/memory.usage_in_bytes": file("1073741824\n"),
			"sys/fs/cgroup/memory/memory.stat":           file("cache 5\ntotal_inactive_file 536870912\nhierarchical_memory_limit 9223372036854771712\n"),
		}, 3 * gib, 2*gib + 512<<20, "cgroup v1 memory.limit_in_bytes 3072 MiB, 512 MiB used", ""},
		{"v1 limit set on a parent", fstest.MapFS{
			"proc/self/cgroup": file("4:cpu,memory:/a/b\n"),
			"sys/fs/cgroup/memory/a/b/memory.limit_in_bytes": file("9223372036854771712\n"),
			"sys/fs/cgroup/memory/a/b/memory.usage_in_bytes": file("0\n"),
			"sys/fs/cgroup/memory/a/b/memory.stat":           file("hierarchical_memory_limit 1073741824\n"),
		}, 1 * gib, 1 * gib, "cgroup v1", ""},
		{"v1 unlimited (this machine's case)", fstest.MapFS{
			"proc/self/cgroup":                           file("4:memory:/process_api/x\n0::/\n"),
			"sys/fs/cgroup/memory/memory.limit_in_bytes": file("9223372036854771712\n"),
			"sys/fs/cgroup/memory/memory.stat":           file("hierarchical_memory_limit 9223372036854771712\n"),
		}, 64 * gib, 48 * gib, "", ""},
		{"no cgroup filesystem", fstest.MapFS{}, 64 * gib, 48 * gib, "", ""},
		{"damaged memory.max", fstest.MapFS{
			"proc/self/cgroup":         file("0::/\n"),
			"sys/fs/cgroup/memory.max": file("lots\n"),
		}, 0, 0, "", `memory.max: "lots" is not a byte count or max`},
		{"damaged /proc/self/cgroup", fstest.MapFS{
			"proc/self/cgroup": file("garbage\n"),
		}, 0, 0, "", "is not ID:CONTROLLERS:/PATH"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := withCgroup(host, tt.fs)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, %v; want an error saying %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Total != tt.total || got.Available != tt.avail {
				t.Errorf("got %d/%d MiB available/total, want %d/%d", mib(got.Available), mib(got.Total), mib(tt.avail), mib(tt.total))
			}
			if tt.source == "" && got.Source != host.Source || !strings.Contains(got.Source, tt.source) {
				t.Errorf("source %q, want %q", got.Source, tt.source)
			}
		})
	}
}

// FuzzCgroupMemory: any content of the cgroup files gives an answer or an
// error, never a panic, and an answer is never more than the host has.
func FuzzCgroupMemory(f *testing.F) {
	f.Add("0::/\n", "2147483648\n", "536870912\n", "inactive_file 1\n")
	f.Add("4:memory:/docker/abc\n", "9223372036854771712\n", "1\n", "hierarchical_memory_limit 1073741824\ntotal_inactive_file 5\n")
	f.Add("0::/a/b\n", "max\n", "0", "")
	f.Add("", "", "", "")
	f.Fuzz(func(t *testing.T, self, limit, usage, stat string) {
		fs := fstest.MapFS{
			"proc/self/cgroup":                            file(self),
			"sys/fs/cgroup/memory.max":                    file(limit),
			"sys/fs/cgroup/memory.current":                file(usage),
			"sys/fs/cgroup/memory.stat":                   file(stat),
			"sys/fs/cgroup/memory/memory.limit_in_bytes":  file(limit),
			"sys/fs/cgroup/memory/memory.usage_in_bytes":  file(usage),
			"sys/fs/cgroup/memory/memory.stat":            file(stat),
			"sys/fs/cgroup/a/b/memory.max":                file(limit),
			"sys/fs/cgroup/memory/docker/abc/memory.stat": file(stat),
		}
		host := HostMem{Total: 64 * gib, Available: 48 * gib, Source: meminfoSource}
		got, err := withCgroup(host, fs)
		if err != nil {
			return
		}
		if got.Available > host.Available || got.Total > host.Total || got.Available > got.Total {
			t.Fatalf("got %+v from host %+v", got, host)
		}
	})
}
