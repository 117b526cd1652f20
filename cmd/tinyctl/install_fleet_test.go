//go:build !noinstall

package main

import (
	"reflect"
	"testing"

	"github.com/tinyctl/tinyctl/provision"
)

func TestFleetFlagsSetTheBrokerAndControllerValues(t *testing.T) {
	f := fleetFlags{labels: map[string]string{"region": "eu"}, hubURLs: []string{"nats-leaf://hub.example.com:7422"},
		hubDomain: "hub", hubCredSecret: "hub-creds"}
	plan := provision.Plan{BrokerAuth: provision.AuthJWT, BrokerValues: map[string]any{"jetstream": map[string]any{"maxFileStore": "20G"}}}
	if err := f.apply(&plan, "eu-1"); err != nil {
		t.Fatal(err)
	}
	wantBroker := map[string]any{
		"jetstream": map[string]any{"maxFileStore": "20G", "domain": "eu-1"},
		"fleet":     map[string]any{"hubURLs": []any{"nats-leaf://hub.example.com:7422"}, "hubCredentialsSecret": "hub-creds"},
	}
	if !reflect.DeepEqual(plan.BrokerValues, wantBroker) {
		t.Errorf("broker values %v, want %v", plan.BrokerValues, wantBroker)
	}
	wantCtrl := map[string]any{"clusterLabels": map[string]any{"region": "eu"}, "hubDomain": "hub"}
	if !reflect.DeepEqual(plan.ControllerValues, wantCtrl) {
		t.Errorf("controller values %v, want %v", plan.ControllerValues, wantCtrl)
	}
	none := provision.Plan{}
	if err := (&fleetFlags{hubDomain: "hub"}).apply(&none, "eu-1"); err != nil || none.BrokerValues != nil || none.ControllerValues != nil {
		t.Errorf("no fleet flags: values %v %v, err %v", none.BrokerValues, none.ControllerValues, err)
	}
}
