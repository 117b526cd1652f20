package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
)

const module = "github.com/tinyctl/tinyctl"

// pkg is what go list says of one package.
type pkg struct {
	ImportPath string
	Name       string
	Doc        string
	Imports    []string
}

// listPackages lists the main module's packages.
func listPackages(ctx context.Context, root string) ([]pkg, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-json=ImportPath,Name,Doc,Imports", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return nil, fmt.Errorf("go list: %w: %s", err, exit.Stderr)
	}
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// graph is the package map: nodes by relative path, and for each the
// packages it imports directly that no longer path reaches.
type graph struct {
	nodes map[string]pkg
	edges map[string][]string
}

// shown reports whether a package belongs on the map: what ships, not the
// test kit (nor api/apitest, the api tests' documents), the examples or
// the small mains of internal tools.
func shown(rel string) bool {
	return rel != "" && !strings.HasPrefix(rel, "internal/testkit") && !strings.HasPrefix(rel, "examples") &&
		!strings.Contains(rel, "/cmd/") && rel != "internal/localnode/pause" && rel != "api/apitest"
}

func graphOf(pkgs []pkg) graph {
	g := graph{nodes: map[string]pkg{}, edges: map[string][]string{}}
	for _, p := range pkgs {
		if rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/"); shown(rel) {
			g.nodes[rel] = p
		}
	}
	direct := map[string][]string{}
	for rel, p := range g.nodes {
		for _, imp := range p.Imports {
			if to := strings.TrimPrefix(imp, module+"/"); to != imp && g.nodes[to].ImportPath != "" {
				direct[rel] = append(direct[rel], to)
			}
		}
	}
	for from, tos := range direct {
		for _, to := range tos {
			if !reachableOtherwise(direct, from, to) {
				g.edges[from] = append(g.edges[from], to)
			}
		}
		slices.Sort(g.edges[from])
	}
	return g
}

// reachableOtherwise reports whether to is reached from from through
// another of from's imports: the arrow from → to adds nothing to read.
func reachableOtherwise(direct map[string][]string, from, to string) bool {
	seen := map[string]bool{}
	var reach func(string) bool
	reach = func(n string) bool {
		if n == to {
			return true
		}
		if seen[n] {
			return false
		}
		seen[n] = true
		return slices.ContainsFunc(direct[n], reach)
	}
	for _, via := range direct[from] {
		if via != to && reach(via) {
			return true
		}
	}
	return false
}
