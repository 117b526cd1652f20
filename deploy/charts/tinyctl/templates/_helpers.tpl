{{/* The chart name, which is also the app.kubernetes.io/name label. */}}
{{- define "tinyctl.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The name of the release's objects: the release name when it already
contains the chart name, else <release>-<chart>. */}}
{{- define "tinyctl.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* The name of cluster-scoped objects, unique per release namespace. */}}
{{- define "tinyctl.clusterName" -}}
{{- printf "%s:%s" .Release.Namespace (include "tinyctl.fullname" .) }}
{{- end }}

{{/* Labels that select the controller pods. */}}
{{- define "tinyctl.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tinyctl.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Labels on every object. */}}
{{- define "tinyctl.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "tinyctl.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: tinyctl
app.kubernetes.io/component: controller
{{- end }}

{{/* k=v,k=v from a map, keys sorted. */}}
{{- define "tinyctl.pairs" -}}
{{- $out := list }}
{{- range $k, $v := . }}
{{- $out = append $out (printf "%s=%s" $k $v) }}
{{- end }}
{{- join "," $out }}
{{- end }}

{{/* The rules on the kinds the controller manages in a namespace. Every
verb is used: get (read before apply), list and watch (the metadata-only
informers that detect drift), create and patch (server-side apply creates
and updates), delete (a component removed or a child no longer rendered). */}}
{{- define "tinyctl.childRules" -}}
- apiGroups: ["apps"]
  resources: ["deployments"]
  verbs: ["get", "list", "watch", "create", "patch", "delete"]
- apiGroups: ["networking.k8s.io"]
  resources: ["networkpolicies"]
  verbs: ["get", "list", "watch", "create", "patch", "delete"]
- apiGroups: ["keda.sh"]
  resources: ["scaledobjects"]
  verbs: ["get", "list", "watch", "create", "patch", "delete"]
# A component with more than one pod keeps all but one through drains.
- apiGroups: ["policy"]
  resources: ["poddisruptionbudgets"]
  verbs: ["get", "list", "watch", "create", "patch", "delete"]
# The workers' pods, read only: a component is Ready when its pods run,
# and says why not (ImagePullBackOff, CrashLoopBackOff, Unschedulable).
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["list", "watch"]
# Kubernetes Events about each component's children, Deployment or namespace (docs/events.md):
# written, and patched when one repeats; never read.
- apiGroups: ["events.k8s.io"]
  resources: ["events"]
  verbs: ["create", "patch"]
{{- if .Values.nats.identity.signerSecret }}
# Each worker's credentials Secret: read by name before it is written (to
# check it is the component's own), never listed or watched.
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["get", "create", "patch", "delete"]
{{- end }}
{{- end }}
