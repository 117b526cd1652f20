// Module docgraph draws docs/images/architecture.svg from the module's own
// package graph (`go list`), so the picture cannot drift from the tree.
// A module of its own: its renderer (Graphviz compiled to WebAssembly) is
// no dependency of tinyctl's.
module github.com/tinyctl/tinyctl/tools/docgraph

go 1.26.0

require github.com/goccy/go-graphviz v0.2.10

require (
	github.com/disintegration/imaging v1.6.2 // indirect
	github.com/flopp/go-findfont v0.1.0 // indirect
	github.com/fogleman/gg v1.3.0 // indirect
	github.com/golang/freetype v0.0.0-20170609003504-e2365dfdc4a0 // indirect
	github.com/tetratelabs/wazero v1.10.1 // indirect
	golang.org/x/image v0.21.0 // indirect
	golang.org/x/text v0.19.0 // indirect
)
