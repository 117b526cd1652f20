package provision

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StorageType is where the broker keeps its JetStream store: the nats
// chart's storage.type.
type StorageType string

// The broker's storage types.
const (
	// StoragePVC is a PersistentVolumeClaim per server, from a class.
	StoragePVC StorageType = "pvc"
	// StorageEmptyDir is the pod's scratch space: lost with the pod.
	StorageEmptyDir StorageType = "emptyDir"
	// StorageExisting is a PersistentVolumeClaim made beforehand.
	StorageExisting StorageType = "existing"
)

// defaultClassAnnotation marks a cluster's default StorageClass.
const defaultClassAnnotation = "storageclass.kubernetes.io/is-default-class"

// BrokerStorage is where the broker keeps its JetStream store. Its zero
// value lets Install decide (ResolveBrokerStorage).
type BrokerStorage struct {
	Type StorageType
	// Class is the StorageClass of a StoragePVC claim; empty is the
	// cluster's default class.
	Class string
	// Claim names the claim of StorageExisting.
	Claim string
	// Why says how it was decided, when Install decided it.
	Why string
	// Fallback is set when nothing chose a storage and the cluster offered
	// no default StorageClass, so the store lives in an emptyDir: callers
	// should warn.
	Fallback bool
}

// ParseBrokerStorage reads `tinyctl install --broker-storage`: emptyDir,
// pvc, pvc:CLASS or existing:CLAIM ("" is the zero value: decide).
func ParseBrokerStorage(s string) (BrokerStorage, error) {
	kind, arg, hasArg := strings.Cut(s, ":")
	switch {
	case s == "":
		return BrokerStorage{}, nil
	case kind == string(StorageEmptyDir) && !hasArg:
		return BrokerStorage{Type: StorageEmptyDir}, nil
	case kind == string(StoragePVC) && (!hasArg || arg != ""):
		return BrokerStorage{Type: StoragePVC, Class: arg}, nil
	case kind == string(StorageExisting) && arg != "":
		return BrokerStorage{Type: StorageExisting, Claim: arg}, nil
	}
	return BrokerStorage{}, fmt.Errorf("broker storage %q: want emptyDir, pvc, pvc:CLASS or existing:CLAIM", s)
}

// String renders s as ParseBrokerStorage reads it.
func (s BrokerStorage) String() string {
	switch {
	case s.Type == StoragePVC && s.Class != "":
		return "pvc:" + s.Class
	case s.Type == StorageExisting:
		return "existing:" + s.Claim
	}
	return string(s.Type)
}

// values are the nats chart's storage values of s.
func (s BrokerStorage) values() map[string]any {
	return map[string]any{"storage": map[string]any{
		"type": string(s.Type), "storageClassName": s.Class, "existingClaim": s.Claim,
	}}
}

// ResolveBrokerStorage decides the broker's storage when want is the zero
// value: the values file's storage.type when it sets one; else the
// installed broker's; else a claim from the default StorageClass when the
// cluster has one; else emptyDir, whose Why warns that the store is lost
// with the pod. A storage other than the installed broker's fails when
// either uses claims from a template: a StatefulSet cannot change them in
// place. It fails when the release or the StorageClasses cannot be read.
func (p *Provisioner) ResolveBrokerStorage(ctx context.Context, want BrokerStorage, values map[string]any) (BrokerStorage, error) {
	installed, err := p.installedStorage()
	if err != nil {
		return want, err
	}
	if want.Type == "" {
		want, err = p.decideStorage(ctx, installed, values)
		if err != nil {
			return want, err
		}
	}
	if installed != nil && changesClaims(*installed, want) {
		return want, fmt.Errorf("broker storage %s: the installed broker keeps its store in %s, and a StatefulSet's volume claims cannot change in place; "+
			"keep --broker-storage %s, or remove the broker first (`tinyctl uninstall`; its JetStream data is lost)", want, installed, installed)
	}
	return want, nil
}

func (p *Provisioner) decideStorage(ctx context.Context, installed *BrokerStorage, values map[string]any) (BrokerStorage, error) {
	if t, err := nestedString(values, "", "storage", "type"); err != nil || t != "" {
		class, _ := nestedString(values, "", "storage", "storageClassName")
		claim, _ := nestedString(values, "", "storage", "existingClaim")
		return BrokerStorage{Type: StorageType(t), Class: class, Claim: claim, Why: "from the broker values file"}, err
	}
	if installed != nil {
		s := *installed
		s.Why = "kept from the installed broker"
		return s, nil
	}
	classes, err := p.kube.StorageV1().StorageClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return BrokerStorage{}, fmt.Errorf("broker storage: list StorageClasses: %w", err)
	}
	for _, c := range classes.Items {
		if c.Annotations[defaultClassAnnotation] == "true" {
			return BrokerStorage{Type: StoragePVC, Why: "a claim from the default StorageClass " + c.Name}, nil
		}
	}
	return BrokerStorage{Type: StorageEmptyDir, Fallback: true, Why: "the cluster has no default StorageClass, so the JetStream store (specs, status, queued jobs) " +
		"lives in the broker pod's emptyDir and is lost when the pod is deleted or moved; give --broker-storage pvc:CLASS or existing:CLAIM to keep it"}, nil
}

// installedStorage is the storage of the installed broker release, or nil
// when there is none. A release from before storage.type was pvc.
func (p *Provisioner) installedStorage() (*BrokerStorage, error) {
	last, err := p.lastRelease(p.opts.Namespace, ChartBroker)
	if err != nil || last == nil || last.Chart == nil {
		return nil, err
	}
	vals := mergeValues(last.Chart.Values, last.Config)
	t, _ := nestedString(vals, string(StoragePVC), "storage", "type")
	class, _ := nestedString(vals, "", "storage", "storageClassName")
	claim, _ := nestedString(vals, "", "storage", "existingClaim")
	return &BrokerStorage{Type: StorageType(t), Class: class, Claim: claim}, nil
}

// changesClaims reports whether going from a to b changes the claims a
// StatefulSet makes from its template (which it cannot do in place).
func changesClaims(a, b BrokerStorage) bool {
	if a.Type != StoragePVC && b.Type != StoragePVC {
		return false
	}
	return a.Type != b.Type || a.Class != b.Class
}
