{{/* Chart name, truncated for label values. */}}
{{- define "jakri.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Prefix of every object name; short enough for the "-controller" and "-uninstall" suffixes. */}}
{{- define "jakri.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" }}
{{- else if contains (include "jakri.name" .) .Release.Name }}
{{- .Release.Name | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "jakri.name" .) | trunc 40 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "jakri.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "jakri.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: jakri
{{- end }}

{{/* Selector labels of one component: call with (dict "root" $ "component" "agent"). */}}
{{- define "jakri.selectorLabels" -}}
app.kubernetes.io/name: {{ include "jakri.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* An image reference: call with (dict "root" $ "image" .Values.agent.image). */}}
{{- define "jakri.image" -}}
{{- $tag := .image.tag | default .root.Chart.AppVersion -}}
{{- if .image.registry -}}
{{ printf "%s/%s:%s" .image.registry .image.repository $tag }}
{{- else -}}
{{ printf "%s:%s" .image.repository $tag }}
{{- end -}}
{{- end }}

{{/* The agent's ServiceAccount: serviceAccount.name, else <fullname>-agent; with rbac.enabled
false (the chart makes no ServiceAccount) only serviceAccount.name, else none (the default one). */}}
{{- define "jakri.agent.serviceAccountName" -}}
{{- if .Values.rbac.enabled }}
{{- default (printf "%s-agent" (include "jakri.fullname" .)) .Values.agent.serviceAccount.name }}
{{- else }}
{{- .Values.agent.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "jakri.controller.serviceAccountName" -}}
{{- if .Values.rbac.enabled }}
{{- default (printf "%s-controller" (include "jakri.fullname" .)) .Values.controller.serviceAccount.name }}
{{- else }}
{{- .Values.controller.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The directory inside the agent image that holds the bundled handler plugins. */}}
{{- define "jakri.agent.pluginsDir" -}}
/opt/jakri/plugins
{{- end }}

{{/* The logFormat value, which must be text or json (the binaries' --log-format). */}}
{{- define "jakri.logFormat" -}}
{{- if has .Values.logFormat (list "text" "json") -}}
{{ .Values.logFormat }}
{{- else -}}
{{- fail (printf "logFormat must be text or json, not %q" (toString .Values.logFormat)) -}}
{{- end -}}
{{- end -}}

{{/*
Resources from a resources value: Kubernetes' requests, limits (and any other field, e.g. claims)
as given, with Akri's memoryRequest, cpuRequest, memoryLimit and cpuLimit mapped onto
requests/limits (they win over the same field in requests/limits). Empty when nothing is set.
*/}}
{{- define "jakri.resources" -}}
{{- $akri := dict "memoryRequest" (list "requests" "memory") "cpuRequest" (list "requests" "cpu") "memoryLimit" (list "limits" "memory") "cpuLimit" (list "limits" "cpu") -}}
{{- $out := dict -}}
{{- $parts := dict "requests" (deepCopy (.requests | default dict)) "limits" (deepCopy (.limits | default dict)) -}}
{{- range $key, $value := . -}}
{{- if hasKey $akri $key -}}
{{- if not (kindIs "invalid" $value) -}}
{{- $target := index $akri $key -}}
{{- $_ := set (index $parts (first $target)) (last $target) $value -}}
{{- end -}}
{{- else if not (has $key (list "requests" "limits")) -}}
{{- $_ := set $out $key $value -}}
{{- end -}}
{{- end -}}
{{- range $part, $quantities := $parts -}}
{{- with $quantities -}}
{{- $_ := set $out $part . -}}
{{- end -}}
{{- end -}}
{{- with $out -}}
{{- toYaml . -}}
{{- end -}}
{{- end -}}

{{/* A value of Akri's chart that names the same thing as a jakri value: Akri's when set (and not
empty), else jakri's. Call with (list <akri parent map or nil> "<akri key>" <jakri value>). */}}
{{- define "jakri.akriOr" -}}
{{- $parent := index . 0 | default dict -}}
{{- $akri := get $parent (index . 1) -}}
{{- if or (kindIs "invalid" $akri) (eq (toString $akri) "") -}}
{{- index . 2 -}}
{{- else -}}
{{- $akri -}}
{{- end -}}
{{- end -}}

{{/* Host paths of the agent: jakri's values, or Akri's agent.host.* when set. */}}
{{- define "jakri.agent.devicePluginDir" -}}
{{- include "jakri.akriOr" (list .Values.agent.host "kubeletDevicePlugins" .Values.agent.kubeletDevicePluginDir) -}}
{{- end -}}

{{- define "jakri.agent.podResourcesDir" -}}
{{- include "jakri.akriOr" (list .Values.agent.host "kubeletPodResources" .Values.agent.kubeletPodResourcesDir) -}}
{{- end -}}

{{- define "jakri.agent.discoveryHandlersDir" -}}
{{- include "jakri.akriOr" (list .Values.agent.host "discoveryHandlers" .Values.agent.discoveryHandlers.hostPath) -}}
{{- end -}}

{{/* The host directory mounted at /run/udev: Akri's agent.host.udev or udev.discovery.host.udev, else /run/udev. */}}
{{- define "jakri.agent.udevRunDir" -}}
{{- $discovery := include "jakri.akriOr" (list (dig "discovery" "host" dict (.Values.udev | default dict)) "udev" "/run/udev") -}}
{{- include "jakri.akriOr" (list .Values.agent.host "udev" $discovery) -}}
{{- end -}}

{{/* Whether the agent gets the udev mounts: jakri's agent.udev / handlers.udev, or Akri's udev values. */}}
{{- define "jakri.agent.udev" -}}
{{- $udev := .Values.udev | default dict -}}
{{- if or .Values.agent.udev.enabled .Values.handlers.udev.enabled (dig "configuration" "enabled" false $udev) (dig "discovery" "enabled" false $udev) (dig "host" "udev" "" (.Values.agent | default dict)) -}}
true
{{- end -}}
{{- end -}}

{{/* Whether the agent shares the node's network: agent.hostNetwork, or Akri's agent.full or onvif.discovery.enabled (Akri runs those on the host network). */}}
{{- define "jakri.agent.hostNetwork" -}}
{{- if or .Values.agent.hostNetwork .Values.agent.full (dig "discovery" "enabled" false (.Values.onvif | default dict)) -}}
true
{{- end -}}
{{- end -}}

{{/* Metrics ports: jakri's, or Akri's prometheus.port (one port for both) when set. */}}
{{- define "jakri.agent.metricsPort" -}}
{{- include "jakri.akriOr" (list .Values.prometheus "port" .Values.agent.metrics.port) -}}
{{- end -}}

{{- define "jakri.controller.metricsPort" -}}
{{- include "jakri.akriOr" (list .Values.prometheus "port" .Values.controller.metrics.port) -}}
{{- end -}}

{{/* PodMonitors: podMonitor.enabled, or Akri's prometheus.enabled. */}}
{{- define "jakri.podMonitor" -}}
{{- if or .Values.podMonitor.enabled (dig "enabled" false (.Values.prometheus | default dict)) -}}
true
{{- end -}}
{{- end -}}

{{/* The uninstall hook: uninstallHook.enabled, and Akri's cleanupHook.enabled when set. */}}
{{- define "jakri.uninstallHook" -}}
{{- if and .Values.uninstallHook.enabled (dig "enabled" true (.Values.cleanupHook | default dict)) -}}
true
{{- end -}}
{{- end -}}

{{/* The admission webhook: served when webhookConfiguration.enabled and the controller runs. */}}
{{- define "jakri.webhook.enabled" -}}
{{- if and .Values.webhookConfiguration.enabled .Values.controller.enabled }}true{{ end -}}
{{- end -}}

{{/* The webhook's ValidatingWebhookConfiguration, Service and Secret name. */}}
{{- define "jakri.webhook.name" -}}
{{- default (printf "%s-webhook" (include "jakri.fullname" .)) .Values.webhookConfiguration.name -}}
{{- end -}}

{{/* Where the webhook's certificate comes from: controller (its own CA), secret (caBundle), or
cert-manager. */}}
{{- define "jakri.webhook.certSource" -}}
{{- if .Values.webhookConfiguration.certManager.enabled -}}
{{- if .Values.webhookConfiguration.caBundle -}}
{{- fail "webhookConfiguration.caBundle and webhookConfiguration.certManager.enabled: set one or the other" -}}
{{- end -}}
cert-manager
{{- else if .Values.webhookConfiguration.caBundle -}}
secret
{{- else -}}
controller
{{- end -}}
{{- end -}}

{{/* The DNS names the API server calls the webhook's Service by (a YAML list). */}}
{{- define "jakri.webhook.dnsNames" -}}
{{- $svc := include "jakri.webhook.name" . -}}
- {{ $svc }}.{{ .Release.Namespace }}.svc
- {{ $svc }}.{{ .Release.Namespace }}.svc.cluster.local
{{- end -}}

{{/*
RBAC rules for instance-object kinds (a list of resource[.group]): one rule per API group, groups
in alphabetical order, resources in the order listed, each once.
*/}}
{{- define "jakri.instanceObjects.rules" -}}
{{- $byGroup := dict }}
{{- range . }}
{{- $parts := splitn "." 2 . }}
{{- $group := default "" $parts._1 }}
{{- $_ := set $byGroup $group (append (get $byGroup $group | default list) $parts._0) }}
{{- end }}
{{- range $group := keys $byGroup | sortAlpha }}
- apiGroups: [{{ $group | quote }}]
  resources: [{{ range $i, $r := get $byGroup $group | uniq }}{{ if $i }}, {{ end }}{{ $r | quote }}{{ end }}]
  verbs: ["get", "list", "watch", "create", "patch", "delete"]
{{- end }}
{{- end }}
