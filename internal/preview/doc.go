// Package preview shows what publishing a component would do to a live
// cluster without changing it: every rendered object goes through a
// server-side dry-run apply (so admission, defaulting and validation run),
// and the result is compared with the live object as a unified diff of
// YAML, ignoring the fields the API server manages (managedFields,
// resourceVersion, generation, uid, creationTimestamp, status).
package preview
