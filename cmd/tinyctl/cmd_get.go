package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/decode"
	"github.com/tinyctl/tinyctl/client"
	"github.com/tinyctl/tinyctl/internal/cli"
)

type getOptions struct {
	listing
}

func newGetCmd(o *options) *cobra.Command {
	g := &getOptions{}
	cmd := &cobra.Command{
		Use:   "get [NAME]",
		Short: "Show a component as stored, or list the components of a namespace",
		Long: `Get NAME prints the component as stored in the spec bucket, as YAML by default:
the output can be edited and applied again. Without NAME it lists components
like "tinyctl list" (-l selects by label, -o name prints names).`,
		Example: `  tinyctl get resizer -n media
  tinyctl get resizer -n media -o json
  tinyctl get -A -l team=media`,
		Args:              usageArgs(cobra.MaximumNArgs(1)),
		ValidArgsFunction: o.completeNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return g.run(cmd.Context(), o)
			}
			if g.all {
				return usageError{errors.New("--all-namespaces cannot be used with a NAME")}
			}
			if g.selector != "" {
				return usageError{errors.New("--selector cannot be used with a NAME")}
			}
			return g.one(cmd.Context(), o, args[0])
		},
	}
	addOutputFlag(cmd, &g.output, "yaml for NAME, table otherwise", getFormats...)
	g.addFlags(cmd)
	return cmd
}

// addOutputFlag registers -o with completion of its values.
func addOutputFlag(cmd *cobra.Command, target *string, def string, formats ...cli.Format) {
	names, completions := make([]string, len(formats)), make([]string, len(formats))
	directive := cobra.ShellCompDirectiveNoFileComp
	for i, f := range formats {
		names[i], completions[i] = string(f), string(f)
		if f == cli.FormatJSONPath { // the template follows without a space
			names[i], completions[i] = "jsonpath=TEMPLATE", "jsonpath="
			directive |= cobra.ShellCompDirectiveNoSpace
		}
	}
	cmd.Flags().StringVarP(target, "output", "o", "", fmt.Sprintf("output format: %v (default %s)", names, def))
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(completions, directive))
}

// format parses -o, using def when it was not given.
func format(value string, def cli.Format, allowed ...cli.Format) (cli.Format, error) {
	if value == "" {
		return def, nil
	}
	f, err := cli.ParseFormat(value, allowed...)
	if err != nil {
		return "", usageError{err}
	}
	return f, nil
}

// one prints component name of the selected namespace.
func (g *getOptions) one(ctx context.Context, o *options, name string) error {
	f, err := format(g.output, cli.FormatYAML, getFormats...)
	if err != nil {
		return err
	}
	if _, err := o.key(name); err != nil {
		return err
	}
	ctx, cancel := o.withTimeout(ctx)
	defer cancel()
	e, err := o.getEntry(ctx, name)
	if err != nil {
		return err
	}
	switch f {
	case cli.FormatName:
		_, err := fmt.Fprintf(o.out, "component/%s\n", e.Key)
		return err
	case cli.FormatTable, cli.FormatWide:
		t := componentTable(o, f == cli.FormatWide)
		componentRow(t, o, e, f == cli.FormatWide)
		return t.Flush()
	}
	return o.printStored(e, f)
}

// getEntry reads the latest value of key, or says component name does not
// exist.
func (o *options) getEntry(ctx context.Context, name string) (client.Revision, error) {
	s, err := o.open(ctx, "", false)
	if err != nil {
		return client.Revision{}, err
	}
	defer s.Close()
	e, err := s.Get(ctx, o.namespace, name)
	if errors.Is(err, client.ErrNotFound) {
		return client.Revision{}, o.notFound(name)
	}
	return e, err
}

// printStored prints a stored component as YAML, JSON or a jsonpath
// template's output. A value that does
// not decode is printed as stored, with a warning.
func (o *options) printStored(e client.Revision, f cli.Format) error {
	c, err := decode.Component(e.Value)
	if err != nil {
		o.warn(fmt.Sprintf("component %s revision %d is not a valid component, shown as stored: %v", e.Key, e.Revision, err))
		_, err := fmt.Fprintf(o.out, "%s\n", e.Value)
		return err
	}
	b, err := api.Canonical(c)
	if err != nil {
		return err
	}
	if f != cli.FormatYAML {
		return cli.WriteData(o.out, f, json.RawMessage(b))
	}
	y, err := cli.JSONToYAML(b)
	if err != nil {
		return err
	}
	_, err = o.out.Write(y)
	return err
}

// getFormats are get's -o values (with NAME, or listing).
var getFormats = []cli.Format{cli.FormatYAML, cli.FormatJSON, cli.FormatJSONPath, cli.FormatTable, cli.FormatWide, cli.FormatName}

// componentTable starts the table get and list print; wide adds SUBJECTS
// and LABELS.
func componentTable(o *options, wide bool) *cli.Table {
	headers := []string{"NAMESPACE", "NAME", "IMAGE", "SCALING", "REVISION", "AGE"}
	if wide {
		headers = append(headers, "SUBJECTS", "LABELS")
	}
	return cli.NewTable(o.out, headers...)
}

func componentRow(t *cli.Table, o *options, e client.Revision, wide bool) {
	ns, name, err := api.ParseKey(e.Key)
	if err != nil {
		ns, name = "<invalid key>", e.Key
	}
	cells := []string{ns, name, cli.ImageOf(e.Value), cli.ScalingOf(e.Value), strconv.FormatUint(e.Revision, 10), cli.Age(e.Created, o.now())}
	if wide {
		subjects, labels := cli.SubjectsAndLabelsOf(e.Value)
		cells = append(cells, subjects, labels)
	}
	t.Row(cells...)
}
