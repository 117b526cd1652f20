package statusview

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tinyctl/tinyctl/client"
)

// KEDAWarnings turns the rows client.WithoutKEDA picked into one warning
// per cluster, naming its scaled components (namespace/name), clusters in
// name order.
func KEDAWarnings(rows []client.Row) []string {
	byCluster := map[string][]string{}
	for _, r := range rows {
		byCluster[r.Cluster()] = append(byCluster[r.Cluster()], r.Namespace()+"/"+r.Name())
	}
	var out []string
	for _, cluster := range slices.Sorted(maps.Keys(byCluster)) {
		names := byCluster[cluster]
		out = append(out, fmt.Sprintf("cluster %s runs no KEDA operator, so its scaled components (spec.scaling) do not scale: %s. "+
			"Install KEDA there (tinyctl install --with-keda).", cluster, strings.Join(names, ", ")))
	}
	return out
}
