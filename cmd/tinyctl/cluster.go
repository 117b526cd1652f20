package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/cluster"
	"github.com/tinyctl/tinyctl/api/overrides"
	"github.com/tinyctl/tinyctl/api/validate"
	"github.com/tinyctl/tinyctl/client"
	"github.com/tinyctl/tinyctl/identity"
	"github.com/tinyctl/tinyctl/internal/cli"
	"github.com/tinyctl/tinyctl/render"
)

// clusterFlag is --cluster: render with the settings a cluster's controller
// reports in its heartbeat instead of the defaults. live makes the default
// the heartbeat of cluster "default" when NATS has it (diff compares with
// a live cluster, so it should render the way that cluster does).
type clusterFlag struct {
	name string
	live bool
}

func (f *clusterFlag) addFlag(fs *pflag.FlagSet) {
	def := "the settings of a default tinyctl install: a cluster named default, without labels, each worker with credentials of its own"
	if f.live {
		def = "the live heartbeat of the cluster named default when NATS has one, else " + def
	}
	fs.StringVar(&f.name, "cluster", "", "render with the settings and overrides of this cluster, as its controller reports them (default: "+def+")")
	cli.BindEnv(fs, "cluster", "TINYCTL_CLUSTER")
}

// installDefaults are the settings of a cluster `tinyctl install` made
// with no options: broker auth jwt, so each worker is given credentials
// minted for it alone, in its namespace's tenant account.
func installDefaults() clusterView {
	cl := render.DefaultCluster()
	cl.NATS.CredentialsSecret = render.PerComponent
	cl.NATS.JSAPIPrefix = identity.JobsAPIPrefix
	return clusterView{render: cl, cluster: cluster.Identity{Name: render.DefaultClusterName}}
}

// clusterView is what commands need to know about the target cluster:
// how it renders, which subjects each namespace may use there, and its
// name and labels, which select the component's overrides.
type clusterView struct {
	render  render.Cluster
	tenancy validate.Tenancy
	cluster cluster.Identity
}

// resolve returns c as it runs on the cluster: with the overrides that
// select it merged in. It returns an error naming the overrides that
// conflict there.
func (v clusterView) resolve(c api.Component) (api.Component, error) {
	return overrides.Resolve(c, v.cluster)
}

// view returns the named cluster's settings and labels as its live
// heartbeat carries them, or without a name the install defaults (for a
// live flag, cluster default's heartbeat when NATS has it).
func (f *clusterFlag) view(ctx context.Context, o *options) (clusterView, error) {
	if f.name == "" {
		if f.live {
			if v, err := f.heartbeat(ctx, o, render.DefaultClusterName); err == nil {
				return v, nil
			}
		}
		return installDefaults(), nil
	}
	return f.heartbeat(ctx, o, f.name)
}

// heartbeat is the view of the cluster name as its live heartbeat says.
func (f *clusterFlag) heartbeat(ctx context.Context, o *options, name string) (clusterView, error) {
	s, err := o.open(ctx, "", false)
	if err != nil {
		return clusterView{}, err
	}
	defer s.Close()
	hb, err := s.Cluster(ctx, name)
	switch {
	case errors.Is(err, client.ErrNotFound):
		return clusterView{}, fmt.Errorf("cluster %q has no live heartbeat: is its controller running? (tinyctl status -A lists the clusters that report)", name)
	case err != nil:
		return clusterView{}, err
	case hb.Settings == nil:
		return clusterView{}, fmt.Errorf("cluster %q: its controller does not report its settings (upgrade it)", name)
	}
	v := clusterView{render: render.Cluster(*hb.Settings).WithDefaults(), cluster: cluster.Identity{Name: hb.Cluster, Labels: hb.Labels}}
	if hb.Tenancy != nil {
		v.tenancy = *hb.Tenancy
	}
	return v, nil
}
