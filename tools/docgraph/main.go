// Command docgraph writes the package map of docs/architecture.md from the
// module's package graph: docs/images/architecture.dot (every package that
// ships, grouped by directory, labelled with the start of its package
// comment; an arrow from a package to each one it imports, those implied by
// a longer path left out). Command svg, beside it, lays it out as
// docs/images/architecture.svg. With -check docgraph writes nothing and
// fails when the committed .dot is not what the tree gives (svg -check
// does the same for the .svg): CI's lint runs both.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	root := flag.String("root", "../..", "the repository's root (the main module)")
	check := flag.Bool("check", false, "fail when the committed .dot differs from the tree's; write nothing")
	flag.Parse()
	if err := run(context.Background(), *root, *check); err != nil {
		fmt.Fprintln(os.Stderr, "docgraph:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, root string, check bool) error {
	pkgs, err := listPackages(ctx, root)
	if err != nil {
		return err
	}
	dot := render(graphOf(pkgs))
	dotPath := filepath.Join(root, "docs", "images", "architecture.dot")
	if check {
		have, err := os.ReadFile(dotPath)
		if err != nil {
			return err
		}
		if !bytes.Equal(have, dot) {
			return fmt.Errorf("%s is not the tree's package graph: run `go tool task docs-graph` and commit the result", dotPath)
		}
		return nil
	}
	return os.WriteFile(dotPath, dot, 0o644)
}
