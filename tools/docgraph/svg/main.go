// Command svg lays out docs/images/architecture.dot with Graphviz's dot
// (compiled to WebAssembly: no Graphviz install, no cgo) into
// docs/images/architecture.svg.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/goccy/go-graphviz"
)

func main() {
	root := flag.String("root", "../..", "the repository's root")
	flag.Parse()
	if err := run(context.Background(), filepath.Join(*root, "docs", "images")); err != nil {
		fmt.Fprintln(os.Stderr, "docgraph svg:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, dir string) error {
	dot, err := os.ReadFile(filepath.Join(dir, "architecture.dot"))
	if err != nil {
		return err
	}
	g, err := graphviz.New(ctx)
	if err != nil {
		return err
	}
	defer g.Close()
	graph, err := graphviz.ParseBytes(dot)
	if err != nil {
		return fmt.Errorf("parse architecture.dot: %w", err)
	}
	defer graph.Close()
	var out bytes.Buffer
	if err := g.Render(ctx, graph, graphviz.SVG, &out); err != nil {
		return fmt.Errorf("render: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, "architecture.svg"), out.Bytes(), 0o644)
}
