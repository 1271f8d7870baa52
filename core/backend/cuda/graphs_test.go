package cuda

import (
	"testing"

	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/internal/alloc"
)

// TestSignatureSeesEveryWindow: a run's signature is the same for the same
// nodes on the same windows and moves when any node, any node's window
// (buffer, offset, length) or any source's window moves, or when nodes are
// added, dropped or reordered.
func TestSignatureSeesEveryWindow(t *testing.T) {
	mk := func() []*graph.Node {
		a := &graph.Node{Buf: alloc.BufRef{ID: 1, Off: 0, Len: 1024}}
		b := &graph.Node{Buf: alloc.BufRef{ID: 2, Off: 256, Len: 512}}
		c := &graph.Node{Buf: alloc.BufRef{ID: 3, Off: 0, Len: 64}, Src: [4]*graph.Node{a, b}}
		return []*graph.Node{a, b, c}
	}
	nodes := mk()
	base := signature(nodes)
	if signature(nodes) != base {
		t.Fatal("the same run hashed twice differently")
	}
	seen := map[uint64]string{base: "base"}
	try := func(what string, run []*graph.Node, undo func()) {
		t.Helper()
		s := signature(run)
		if prev, ok := seen[s]; ok {
			t.Errorf("%s hashes as %s", what, prev)
		}
		seen[s] = what
		if undo != nil {
			undo()
			if signature(nodes) != base {
				t.Fatalf("%s: undone, the signature did not come back", what)
			}
		}
	}
	for i := range nodes {
		n := nodes[i]
		try("buffer of node", nodes, func() func() { n.Buf.ID += 10; return func() { n.Buf.ID -= 10 } }())
		try("offset of node", nodes, func() func() { n.Buf.Off += 4; return func() { n.Buf.Off -= 4 } }())
		try("length of node", nodes, func() func() { n.Buf.Len += 4; return func() { n.Buf.Len -= 4 } }())
	}
	c := nodes[2]
	a2 := *c.Src[0]
	a2.Buf.Off = 512
	c.Src[0] = &a2
	try("a source's window", nodes, nil)
	c.Src[0] = nodes[0]
	try("other node identities", mk(), nil)
	try("a node dropped", nodes[:2], nil)
	try("reordered", []*graph.Node{nodes[1], nodes[0], nodes[2]}, nil)
	try("a node added", append(append([]*graph.Node(nil), nodes...), &graph.Node{}), nil)
}
