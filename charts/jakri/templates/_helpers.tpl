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

{{- define "jakri.agent.serviceAccountName" -}}
{{- default (printf "%s-agent" (include "jakri.fullname" .)) .Values.agent.serviceAccount.name }}
{{- end }}

{{- define "jakri.controller.serviceAccountName" -}}
{{- default (printf "%s-controller" (include "jakri.fullname" .)) .Values.controller.serviceAccount.name }}
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
