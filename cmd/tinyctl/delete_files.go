package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/decode"
	"github.com/tinyctl/tinyctl/client"
	"github.com/tinyctl/tinyctl/internal/manifest"
)

// runFiles deletes the components the documents of -f name: every one is
// looked up and described first, and none is deleted when one is missing
// or a confirmation is refused.
func (d *deleteOptions) runFiles(cmd *cobra.Command, o *options) error {
	metas, err := d.files.names(cmd, o)
	if err != nil {
		return err
	}
	ctx, cancel := o.withTimeout(cmd.Context())
	s, err := o.open(ctx, "", false)
	if err != nil {
		cancel()
		return err
	}
	entries := make([]client.Revision, len(metas))
	for i, m := range metas {
		if entries[i], err = s.Get(ctx, m.Namespace, m.Name); errors.Is(err, client.ErrNotFound) {
			err = fmt.Errorf("component %q not found in namespace %q; nothing was deleted", m.Name, m.Namespace)
		}
		if err != nil {
			s.Close()
			cancel()
			return err
		}
		client.PlanRemoval(entries[i]).Describe(o.out, d.purge)
	}
	s.Close()
	cancel()
	what := "component " + entries[0].Key
	if len(entries) > 1 {
		what = plural(len(entries), "component")
	}
	if err := d.confirm(cmd, o, what); err != nil {
		return err
	}
	for i, m := range metas {
		ctx, cancel := o.withTimeout(cmd.Context())
		err := d.remove(ctx, o, m.Namespace, m.Name, entries[i])
		cancel()
		if err != nil {
			return err
		}
	}
	return nil
}

// names reads which components the documents of -f name. Each document
// must decode, as apply reads it; the spec's rules (subjects and this
// cluster's tenancy, limits) are not checked: a component must stay
// deletable by file after the rules changed. -n fills in documents without
// a namespace and must match the others.
func (f *fileFlags) names(cmd *cobra.Command, o *options) ([]api.Metadata, error) {
	srcs, err := manifest.Read(f.paths, f.recursive, cmd.InOrStdin())
	if err != nil {
		return nil, err
	}
	var out []api.Metadata
	var problems []string
	seen := map[string]bool{}
	for _, src := range srcs {
		r, err := src.Open()
		if err != nil {
			return nil, err
		}
		docs, err := decode.All(r)
		r.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", src.Name, err)
		}
		for _, doc := range docs {
			m, err := o.nameOf(cmd, doc)
			switch {
			case err != nil:
				problems = append(problems, fmt.Sprintf("%s: document %d (line %d): %v", src.Name, doc.Index+1, doc.Line, err))
			case !seen[api.KeyOf(api.Component{Metadata: m})]:
				seen[api.KeyOf(api.Component{Metadata: m})] = true
				out = append(out, m)
			}
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s; nothing was deleted", strings.Join(problems, "\n"))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no components found in %s", strings.Join(f.paths, ", "))
	}
	return out, nil
}

// nameOf is the component a decoded document names.
func (o *options) nameOf(cmd *cobra.Command, doc decode.Document) (api.Metadata, error) {
	if doc.Err != nil {
		return api.Metadata{}, firstLineError(doc.Err)
	}
	m := doc.Component.Metadata
	if cmd.Flags().Changed("namespace") {
		if m.Namespace != "" && m.Namespace != o.namespace {
			return api.Metadata{}, fmt.Errorf("metadata.namespace %q differs from -n %q", m.Namespace, o.namespace)
		}
		m.Namespace = o.namespace
	}
	if m.Namespace == "" {
		m.Namespace = o.namespace
	}
	if _, _, err := api.ParseKey(api.Key(m.Namespace, m.Name)); err != nil {
		return api.Metadata{}, fmt.Errorf("metadata: %w", err)
	}
	return m, nil
}

// firstLineError keeps the first line of a multi-line decode error.
func firstLineError(err error) error {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return errors.New(msg)
}
