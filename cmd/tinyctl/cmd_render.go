package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tinyctl/tinyctl/internal/cli"
	"github.com/tinyctl/tinyctl/render"
)

func newRenderCmd(o *options) *cobra.Command {
	var (
		files   fileFlags
		output  string
		cluster clusterFlag
	)
	cmd := &cobra.Command{
		Use:   "render -f FILE|DIR|-",
		Short: "Print the Kubernetes objects and JetStream configs components produce (offline)",
		Long: `Render validates the components given with -f and prints what the controller
makes of each one for a cluster installed with default settings (or, with
--cluster, with the settings that cluster's controller reports), with the
overrides that select that cluster (by its name and labels; without --cluster
the cluster is named "default" and has no labels) merged in: the
Deployment, NetworkPolicy and ScaledObject as YAML documents, then the
JetStream stream and consumer configurations (JetStream API JSON fields), each
document headed by a comment. Without --cluster it needs neither NATS nor
Kubernetes.
-o json prints a RenderList (see docs/cli.md).`,
		Example: `  tinyctl render -f resizer.yaml
  tinyctl render -f examples/ -o json
  tinyctl render -f resizer.yaml --cluster east`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return renderRun(cmd, o, &files, output, &cluster) },
	}
	files.addFlags(cmd.Flags())
	addOutputFlag(cmd, &output, "yaml", cli.FormatYAML, cli.FormatJSON)
	cluster.addFlag(cmd.Flags())
	return cmd
}

func renderRun(cmd *cobra.Command, o *options, files *fileFlags, output string, cluster *clusterFlag) error {
	f, err := format(output, cli.FormatYAML, cli.FormatYAML, cli.FormatJSON)
	if err != nil {
		return err
	}
	ctx, cancel := o.withTimeout(cmd.Context())
	defer cancel()
	view, err := cluster.view(ctx, o)
	if err != nil {
		return err
	}
	comps, err := files.load(cmd, o, "rendered", view.tenancy)
	if err != nil {
		return err
	}
	items := make([]cli.Rendered, 0, len(comps))
	for _, c := range comps {
		comp, err := view.resolve(c.Component)
		if err != nil {
			return fmt.Errorf("component %s: %w", c.Key, err)
		}
		objs, err := render.Render(comp, 0, view.render)
		if err != nil {
			return err
		}
		kids, err := objs.Children()
		if err != nil {
			return err
		}
		items = append(items, cli.Rendered{Key: c.Key, Objects: kids, Stream: objs.Stream, Consumer: objs.Consumer})
	}
	if f == cli.FormatJSON {
		return cli.WriteJSON(o.out, cli.NewRenderList(items))
	}
	return cli.WriteRenderedYAML(o.out, items)
}
