package actors

// reportStats reports the stats of an existing committed group (Apply
// keeps them: group.Stats).
func (a *groupActor) reportStats() {
	if a.committed.Exists() {
		a.c.opts.Observer.GroupStats(a.key, a.committed.Stats())
	}
}
