package api

// AnnotationDevRun is the one annotation under tinyctl.io a component may
// carry: the command `tinyctl dev` runs as the component's local worker
// ("go run ./examples/worker", or a binary and its arguments, split on
// spaces). The controller ignores it; only dev mode reads it.
const AnnotationDevRun = "dev.tinyctl.io/run"
