package units

import "testing"

func TestFormats(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Bytes(0), "0 B"}, {Bytes(1023), "1023 B"}, {Bytes(1536), "1.5 KiB"}, {Bytes(1185376), "1.1 MiB"}, {Bytes(3 << 30), "3.00 GiB"},
		{Count(512), "512"}, {Count(292_640), "293 K"}, {Count(9_370_000), "9.4 M"}, {Count(3_210_000_000), "3.21 B"},
		{Group(0, " "), "0"}, {Group(3412, " "), "3 412"}, {Group(-1234567, ","), "-1,234,567"}, {Group(100, " "), "100"}, {MiB(0), "0 MiB"}, {MiB(1), "1 MiB"}, {MiB(1 << 20), "1 MiB"}, {MiB(1<<20 + 1), "2 MiB"},
		{MiBGrouped(3412<<20, " "), "3 412 MiB"}, {MiBGrouped(4096<<20+1, " "), "4 097 MiB"}, {MiBGrouped(1310720, " "), "1.2 MiB"},
		{MiBGrouped(0, " "), "0 MiB"}, {MiBGrouped(-(20 << 20), " "), "-20 MiB"}, {MiBGrouped(-(1 << 20), " "), "-1.0 MiB"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestJoinFirst(t *testing.T) {
	for _, c := range []struct {
		items []string
		max   int
		want  string
	}{
		{nil, 3, ""},
		{[]string{"a", "b"}, 3, "a, b"},
		{[]string{"a", "b", "c"}, 3, "a, b, c"},
		{[]string{"a", "b", "c", "d", "e"}, 3, "a, b, c (and 2 more)"},
		{[]string{"a", "b"}, 0, " (and 2 more)"},
	} {
		if got := JoinFirst(c.items, c.max, ", "); got != c.want {
			t.Errorf("JoinFirst(%q, %d) = %q, want %q", c.items, c.max, got, c.want)
		}
	}
}
