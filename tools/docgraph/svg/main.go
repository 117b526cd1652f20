// Command svg lays out docs/images/architecture.dot with Graphviz's dot
// (compiled to WebAssembly: no Graphviz install, no cgo) into
// docs/images/architecture.svg. With -check it writes nothing and fails
// when the committed .svg is not the layout of the committed .dot: CI's
// lint runs it after docgraph's own -check, so the picture in
// docs/architecture.md is the tree's.
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
	check := flag.Bool("check", false, "fail when the committed .svg is not the layout of the committed .dot; write nothing")
	flag.Parse()
	if err := run(context.Background(), filepath.Join(*root, "docs", "images"), *check); err != nil {
		fmt.Fprintln(os.Stderr, "docgraph svg:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, dir string, check bool) error {
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
	svgPath := filepath.Join(dir, "architecture.svg")
	if check {
		have, err := os.ReadFile(svgPath)
		if err != nil {
			return err
		}
		if !bytes.Equal(have, out.Bytes()) {
			return fmt.Errorf("%s is not the layout of architecture.dot: run `go tool task docs-graph` and commit the result", svgPath)
		}
		return nil
	}
	return os.WriteFile(svgPath, out.Bytes(), 0o644)
}
