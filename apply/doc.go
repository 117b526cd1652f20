// Package apply is tinyctl's single path for Kubernetes writes: server-side
// apply through the dynamic client with field manager "tinyctl" and force,
// a discovery-backed REST mapper that refreshes when a kind is unknown, and a
// skip when the live object already carries the desired content hash and no
// other manager has touched it. Every call returns a Result saying what
// happened (created, configured, unchanged, deleted), which callers log and
// report.
package apply
