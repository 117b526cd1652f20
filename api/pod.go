package api

// The fields below give the worker's pod what a real workload needs from
// its namespace (Secrets, ConfigMaps, a registry's pull secret) and from
// the cluster's scheduler. Their names and shapes are Kubernetes' own, so
// a pod spec's fragment can be copied into a component; only what a
// restricted, read-only worker may use is accepted.

// EnvSource is where a variable's value comes from instead of Value: one
// key of a Secret or of a ConfigMap in the component's namespace. The
// value never enters the spec bucket; the kubelet reads it.
type EnvSource struct {
	SecretKeyRef    *KeyRef `json:"secretKeyRef,omitempty"`
	ConfigMapKeyRef *KeyRef `json:"configMapKeyRef,omitempty"`
}

// KeyRef names one key of a Secret or ConfigMap. Optional lets the pod
// start when the object or the key is missing (the variable is then
// unset).
type KeyRef struct {
	Name     string `json:"name"`
	Key      string `json:"key"`
	Optional bool   `json:"optional,omitempty"`
}

// EnvFromSource adds every key of a Secret or ConfigMap as a variable,
// each name after Prefix. Variables tinyctl sets and those of spec.env win
// over a key of the same name.
type EnvFromSource struct {
	Prefix       string     `json:"prefix,omitempty"`
	SecretRef    *ObjectRef `json:"secretRef,omitempty"`
	ConfigMapRef *ObjectRef `json:"configMapRef,omitempty"`
}

// ObjectRef names a Secret or ConfigMap in the component's namespace.
type ObjectRef struct {
	Name     string `json:"name"`
	Optional bool   `json:"optional,omitempty"`
}

// Volume mounts a Secret or a ConfigMap, read-only, at MountPath in the
// worker container: every key as a file, or only Items.
type Volume struct {
	Name      string      `json:"name"`
	MountPath string      `json:"mountPath"`
	Secret    *ObjectRef  `json:"secret,omitempty"`
	ConfigMap *ObjectRef  `json:"configMap,omitempty"`
	Items     []KeyToPath `json:"items,omitempty"`
}

// KeyToPath puts one key at Path, relative to the volume's mount path.
type KeyToPath struct {
	Key  string `json:"key"`
	Path string `json:"path"`
}

// LocalObjectReference names an object in the component's namespace.
type LocalObjectReference struct {
	Name string `json:"name"`
}

// Toleration lets the worker's pods run on nodes with a matching taint.
type Toleration struct {
	Key      string `json:"key,omitempty"`
	Operator string `json:"operator,omitempty"` // Equal (default) | Exists
	Value    string `json:"value,omitempty"`
	Effect   string `json:"effect,omitempty"` // NoSchedule | PreferNoSchedule | NoExecute; empty: all
	// TolerationSeconds bounds how long a NoExecute taint is tolerated.
	TolerationSeconds *int64 `json:"tolerationSeconds,omitempty"`
}
