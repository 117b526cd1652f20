package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tinyctl/tinyctl/api/validate"
	"github.com/tinyctl/tinyctl/internal/manifest"
)

// fileFlags are -f and -R, shared by apply, render and diff.
type fileFlags struct {
	paths     []string
	recursive bool
}

func (f *fileFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringArrayVarP(&f.paths, "filename", "f", nil, "file, directory or - (stdin) holding component documents; repeatable")
	fs.BoolVarP(&f.recursive, "recursive", "R", false, "also read the subdirectories of directories given with -f")
}

// load reads and validates every document. It prints warnings, and when
// any document is invalid prints every problem and returns an error saying
// nothing was done (verb: "published", "rendered", ...). Subjects are
// scoped by tenancy. -n, when given,
// fills in documents without a namespace and must match the others.
func (f *fileFlags) load(cmd *cobra.Command, o *options, verb string, tenancy validate.Tenancy) ([]manifest.Component, error) {
	if len(f.paths) == 0 {
		return nil, usageError{errors.New("give at least one -f FILE, DIR or - (stdin)")}
	}
	srcs, err := manifest.Read(f.paths, f.recursive, cmd.InOrStdin())
	if err != nil {
		return nil, err
	}
	opts := manifest.Options{Tenancy: tenancy}
	if cmd.Flags().Changed("namespace") {
		opts.Namespace = o.namespace
	}
	set := manifest.Load(srcs, opts)
	for _, w := range set.Warnings {
		o.warn(w.String())
	}
	if len(set.Problems) > 0 {
		for _, p := range set.Problems {
			fmt.Fprintln(o.errOut, p)
		}
		return nil, fmt.Errorf("%s in %s; nothing was %s", plural(len(set.Problems), "problem"), plural(documents(set.Problems), "document"), verb)
	}
	if len(set.Components) == 0 {
		return nil, fmt.Errorf("no components found in %s", strings.Join(f.paths, ", "))
	}
	return set.Components, nil
}

// documents counts the distinct documents problems are about.
func documents(problems []manifest.Problem) int {
	seen := map[string]bool{}
	for _, p := range problems {
		seen[fmt.Sprintf("%s\x00%d", p.Source, p.Document)] = true
	}
	return len(seen)
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
