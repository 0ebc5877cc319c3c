{{/* Chart name, truncated to the 63 characters a label value allows. */}}
{{- define "kubesched.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Full name: the release name, prefixed with the chart name unless it already contains it. */}}
{{- define "kubesched.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "kubesched.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "kubesched.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kubesched.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "kubesched.labels" -}}
helm.sh/chart: {{ include "kubesched.chart" . }}
{{ include "kubesched.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: scheduler
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "kubesched.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "kubesched.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "kubesched.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* "true" when replicas elect a leader: asked for, or forced by more than one replica. */}}
{{- define "kubesched.leaderElect" -}}
{{- if or .Values.leaderElection.leaderElect (gt (int .Values.replicaCount) 1) -}}
true
{{- else -}}
false
{{- end -}}
{{- end -}}

{{- define "kubesched.leaseName" -}}
{{- default (include "kubesched.fullname" .) .Values.leaderElection.resourceName -}}
{{- end -}}

{{- define "kubesched.leaseNamespace" -}}
{{- default .Release.Namespace .Values.leaderElection.resourceNamespace -}}
{{- end -}}

{{/* Where the initContainer installs extraPackages; the scheduler's Python user site. */}}
{{- define "kubesched.extraPackagesDir" -}}
/opt/kubesched/extra
{{- end -}}

{{/*
The KubeSchedulerConfiguration, as YAML. Profiles (plugins, pluginConfig) and schedulerConfig
pass through untouched; leader election and the client rate limit come from their own values.
*/}}
{{- define "kubesched.config" -}}
{{- $le := .Values.leaderElection -}}
{{- $leaderElection := dict
      "leaderElect" (eq (include "kubesched.leaderElect" .) "true")
      "resourceLock" "leases"
      "resourceName" (include "kubesched.leaseName" .)
      "resourceNamespace" (include "kubesched.leaseNamespace" .)
      "leaseDuration" $le.leaseDuration
      "renewDeadline" $le.renewDeadline
      "retryPeriod" $le.retryPeriod -}}
{{- $clientConnection := dict
      "qps" .Values.clientConnection.qps
      "burst" (int .Values.clientConnection.burst) -}}
{{- $config := dict
      "apiVersion" "kubescheduler.config.k8s.io/v1"
      "kind" "KubeSchedulerConfiguration"
      "leaderElection" $leaderElection
      "clientConnection" $clientConnection
      "profiles" .Values.profiles -}}
{{- $config = merge $config (deepCopy .Values.schedulerConfig) -}}
{{- toYaml $config -}}
{{- end -}}
