// Package publish holds the decisions behind the CLI's writes to the spec
// bucket: whether a component is created, configured or unchanged (and
// writing it, optionally compare-and-set), which revision a rollback
// restores, what each revision of a history changed, and what deleting a
// component will remove. The decisions are pure functions over values read
// from the bucket; the writes go through the small Store interface that
// bus.SpecStore satisfies.
package publish
