{{/* Name of the release's objects: the release name, with the chart's
name appended unless it already contains it. */}}
{{- define "coordinator.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "coordinator.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "coordinator.labels" -}}
{{ include "coordinator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "coordinator.secretName" -}}
{{- .Values.auth.existingSecret | default (printf "%s-auth" (include "coordinator.fullname" .)) -}}
{{- end -}}

{{/* "true" when the coordinators authenticate members:
config.api.authenticate-member-api, on unless it is false (a ${VARIABLE}
placeholder counts as on; an absent key too, and the ConfigMap then sets
it). */}}
{{- define "coordinator.memberAuth" -}}
{{- if ne (toString (dig "api" "authenticate-member-api" true (.Values.config | default dict))) "false" -}}true{{- end -}}
{{- end -}}

{{/* The users the chart adds to config.api.users while members
authenticate, as JSON {"users": [...]}: auth.adminUsername with the role
ADMIN when config.api.users is empty (a users list replaces the admin pair,
which held every role), and auth.memberUsername with the role MEMBER
unless config.api.users has a user of that name. Their passwords are
placeholders of variables the Deployment sets from the Secret. */}}
{{- define "coordinator.chartUsers" -}}
{{- $users := list -}}
{{- if include "coordinator.memberAuth" . -}}
{{- $configured := dig "api" "users" list (.Values.config | default dict) | default list -}}
{{- $names := list -}}
{{- range $configured -}}
{{- $names = append $names (toString (get . "username")) -}}
{{- end -}}
{{- if not $configured -}}
{{- $users = append $users (dict "username" .Values.auth.adminUsername "password" "${COORDINATOR_ADMIN_PASSWORD}" "roles" (list "ADMIN")) -}}
{{- end -}}
{{- if not (has .Values.auth.memberUsername $names) -}}
{{- $users = append $users (dict "username" .Values.auth.memberUsername "password" "${COORDINATOR_MEMBER_PASSWORD}" "roles" (list "MEMBER")) -}}
{{- end -}}
{{- end -}}
{{- dict "users" $users | toJson -}}
{{- end -}}

{{/* "true" when the chart adds the members' user (auth.memberUsername),
whose password the Deployment sets as COORDINATOR_MEMBER_PASSWORD. */}}
{{- define "coordinator.chartMember" -}}
{{- range (include "coordinator.chartUsers" . | fromJson).users -}}
{{- if eq (get . "username") $.Values.auth.memberUsername -}}true{{- end -}}
{{- end -}}
{{- end -}}

{{/* The API's scheme, also the name of its port: https with tls.enabled. */}}
{{- define "coordinator.scheme" -}}
{{- ternary "https" "http" (.Values.tls.enabled | default false) -}}
{{- end -}}

{{/* The most coordinators the release runs at once (before a rollout's
surge): autoscaling.maxReplicas with autoscaling, else replicaCount. */}}
{{- define "coordinator.maxReplicas" -}}
{{- if .Values.autoscaling.enabled -}}
{{- .Values.autoscaling.maxReplicas | int -}}
{{- else -}}
{{- .Values.replicaCount | int -}}
{{- end -}}
{{- end -}}

{{/* The fewest coordinators the release runs outside a rollout. */}}
{{- define "coordinator.minReplicas" -}}
{{- if .Values.autoscaling.enabled -}}
{{- .Values.autoscaling.minReplicas | int -}}
{{- else -}}
{{- .Values.replicaCount | int -}}
{{- end -}}
{{- end -}}

{{/* The store the coordinators use: config.store.type, memory (the
coordinator's default) when unset. */}}
{{- define "coordinator.storeType" -}}
{{- dig "store" "type" "memory" (.Values.config | default dict) -}}
{{- end -}}

{{/* Where the TLS Secret and the Redis CA are mounted (beside, not inside,
the ConfigMap's /etc/coordinator). */}}
{{- define "coordinator.tlsDir" -}}/etc/coordinator-tls{{- end -}}
{{- define "coordinator.redisCADir" -}}/etc/coordinator-redis-ca{{- end -}}

{{/* GOMEMLIMIT in bytes: goMemLimitPercent of resources.limits.memory, a
Kubernetes quantity (a number, optionally with a decimal fraction, and a
decimal or binary suffix). Empty when either is unset. */}}
{{- define "coordinator.goMemLimit" -}}
{{- $limit := dig "limits" "memory" "" (.Values.resources | default dict) -}}
{{- $percent := .Values.goMemLimitPercent | default 0 | float64 -}}
{{- if and $limit (gt $percent 0.0) -}}
{{- if kindIs "float64" $limit -}}{{- $limit = $limit | int64 -}}{{- end -}}
{{- $limit = toString $limit -}}
{{- $number := regexFind "^[0-9]+(\\.[0-9]+)?" $limit -}}
{{- $suffix := trimPrefix $number $limit -}}
{{- $factors := dict "" 1 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 "P" 1000000000000000 "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 "Pi" 1125899906842624 -}}
{{- if or (not $number) (not (hasKey $factors $suffix)) -}}
{{- fail (printf "resources.limits.memory %q: GOMEMLIMIT is computed from it, and only a number with an optional k, M, G, T, P, Ki, Mi, Gi, Ti or Pi suffix is read; write it so, or set goMemLimitPercent: 0 (or GOMEMLIMIT in extraEnv)" $limit) -}}
{{- end -}}
{{- divf (mulf (float64 $number) (get $factors $suffix) $percent) 100 | floor | int64 -}}
{{- end -}}
{{- end -}}
