package group

// Rebuilt returns a copy of g whose derived index is rebuilt from its
// records instead of copied, for the differential tests of the index that
// Apply maintains incrementally.
func Rebuilt(g *Group) *Group {
	c := g.Clone()
	c.rebuildIndex()
	return c
}
