package graph

// MaxCachedGraphs bounds the graph cache: prefill shapes vary, decode
// shapes repeat, so a few entries cover a chat.
const MaxCachedGraphs = 8

// CacheStats counts how often a step built a graph versus reused one.
type CacheStats struct {
	Builds, Reuses int
}

// Cache holds one graph per Params, most recently used first.
type Cache struct {
	entries []*Graph
	stats   CacheStats
}

// TryReuse returns the cached graph for p, moving it to the front.
func (c *Cache) TryReuse(p Params) (*Graph, bool) {
	for i, g := range c.entries {
		if g.Params == p {
			copy(c.entries[1:i+1], c.entries[:i])
			c.entries[0] = g
			c.stats.Reuses++
			return g, true
		}
	}
	return nil, false
}

// Put stores a freshly built graph, evicting the least recently used one
// beyond MaxCachedGraphs.
func (c *Cache) Put(g *Graph) {
	c.stats.Builds++
	c.entries = append([]*Graph{g}, c.entries...)
	if len(c.entries) > MaxCachedGraphs {
		c.entries = c.entries[:MaxCachedGraphs]
	}
}

// Get returns the graph for p, building it with build when absent.
func (c *Cache) Get(p Params, build func(Params) (*Graph, error)) (*Graph, error) {
	if g, ok := c.TryReuse(p); ok {
		return g, nil
	}
	g, err := build(p)
	if err != nil {
		return nil, err
	}
	c.Put(g)
	return g, nil
}

// Stats reports builds versus reuses.
func (c *Cache) Stats() CacheStats { return c.stats }

// Len is the number of cached graphs.
func (c *Cache) Len() int { return len(c.entries) }

// Clear drops every graph (after a reload changes the plan).
func (c *Cache) Clear() { c.entries = nil }

// Latest is the most recently used graph, or nil.
func (c *Cache) Latest() *Graph {
	if len(c.entries) == 0 {
		return nil
	}
	return c.entries[0]
}
