//go:build !noinstall

package main

import (
	"fmt"
	"maps"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tinyctl/tinyctl/provision"
)

// fleetFlags make an installed cluster a member of a fleet (docs/fleet.md).
type fleetFlags struct {
	labels        map[string]string
	hubURLs       []string
	hubDomain     string
	hubCredSecret string
	acceptLeaves  bool
}

func (f *fleetFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringToStringVar(&f.labels, "cluster-labels", nil, "this cluster's labels for placement.clusterSelector, k=v,k=v (kept from the installed release when not given)")
	fs.StringSliceVar(&f.hubURLs, "hub-url", nil, "leafnode URL of a fleet hub (nats-leaf://hub.example.com:7422): the broker joins it in its own JetStream domain, named after --cluster-name, and the controller reads a mirror of the hub's specs")
	fs.StringVar(&f.hubDomain, "hub-domain", "hub", "JetStream domain of the fleet hub (with --hub-url)")
	fs.BoolVar(&f.acceptLeaves, "accept-leafnodes", false, "make this cluster's broker a fleet hub: it listens for the members' leafnode connections on port 7422 (authenticated like clients) in JetStream domain --hub-domain; without it the port is closed")
	fs.StringVar(&f.hubCredSecret, "hub-credentials-secret", "", "Secret in the runtime namespace whose key hub.creds the broker presents to the hub (with --hub-url)")
}

// apply adds the fleet settings to plan's values for the cluster named
// cluster.
func (f *fleetFlags) apply(plan *provision.Plan, cluster string) error {
	if len(f.labels) > 0 {
		plan.ControllerValues = withValue(plan.ControllerValues, "clusterLabels", toAnyMap(f.labels))
	}
	if f.acceptLeaves {
		if len(f.hubURLs) > 0 {
			return usageError{fmt.Errorf("--accept-leafnodes (a hub) and --hub-url (a member of a hub) exclude each other")}
		}
		plan.BrokerValues = withPath(plan.BrokerValues, true, "fleet", "acceptLeafnodes")
		plan.BrokerValues = withPath(plan.BrokerValues, f.hubDomain, "jetstream", "domain")
	}
	if len(f.hubURLs) == 0 {
		if f.hubCredSecret != "" {
			return usageError{fmt.Errorf("--hub-credentials-secret needs --hub-url")}
		}
		return nil
	}
	for _, u := range f.hubURLs {
		if !strings.Contains(u, "://") {
			return usageError{fmt.Errorf("--hub-url %q: want a leafnode URL such as nats-leaf://hub.example.com:7422", u)}
		}
	}
	if plan.BrokerAuth != provision.AuthJWT {
		// One account holds the job streams and joins the hub: the
		// leafnode carries job subjects both ways, so every member whose
		// stream takes a subject would store (and run) each job.
		return usageError{fmt.Errorf("--hub-url with --broker-auth %s: a fleet member needs --broker-auth jwt (the default), "+
			"which keeps its job streams in accounts that do not join the hub; in one account every member would store and run "+
			"every job published anywhere in the fleet (docs/fleet.md#jobs-stay-where-they-are-published)", plan.BrokerAuth)}
	}
	if cluster == f.hubDomain {
		return usageError{fmt.Errorf("--cluster-name %q is the hub's JetStream domain: give this cluster a name of its own", cluster)}
	}
	plan.BrokerValues = withPath(plan.BrokerValues, cluster, "jetstream", "domain")
	plan.BrokerValues = withPath(plan.BrokerValues, toAny(f.hubURLs), "fleet", "hubURLs")
	if f.hubCredSecret != "" {
		plan.BrokerValues = withPath(plan.BrokerValues, f.hubCredSecret, "fleet", "hubCredentialsSecret")
	}
	plan.ControllerValues = withValue(plan.ControllerValues, "hubDomain", f.hubDomain)
	return nil
}

// withPath sets vals[path[0]][path[1]]... to v, keeping the other keys of
// the maps on the way.
func withPath(vals map[string]any, v any, path ...string) map[string]any {
	if vals == nil {
		vals = map[string]any{}
	}
	if len(path) == 1 {
		vals[path[0]] = v
		return vals
	}
	inner, _ := vals[path[0]].(map[string]any)
	vals[path[0]] = withPath(maps.Clone(inner), v, path[1:]...)
	return vals
}

func toAnyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
