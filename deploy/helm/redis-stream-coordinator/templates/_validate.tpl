{{/* coordinator.validate fails the render on settings that cannot work
(values.schema.json has already checked the keys and types). Each message
names the value and what to do instead. deployment.yaml includes it. */}}
{{- define "coordinator.validate" -}}
{{- $cfg := .Values.config | default dict -}}
{{- $store := include "coordinator.storeType" . -}}
{{- $max := include "coordinator.maxReplicas" . | int -}}

{{- /* Several coordinators need one shared store. */}}
{{- if and (eq $store "memory") (ge $max 2) -}}
{{- fail (printf "refused: config.store.type is memory with %d replicas (%s): each coordinator would keep its own groups in its own process, so clients would see a different state on every pod and lose it on every restart. Use config.store.type redis or jdbc, or replicaCount: 1 for a single in-memory coordinator" $max (ternary "autoscaling.maxReplicas" "replicaCount" .Values.autoscaling.enabled)) -}}
{{- end -}}
{{- if and .Values.autoscaling.enabled (eq $store "memory") -}}
{{- fail "refused: autoscaling.enabled with config.store.type memory: every pod the autoscaler adds would be a coordinator of its own with an empty store. Use config.store.type redis or jdbc" -}}
{{- end -}}
{{- if and .Values.autoscaling.enabled (gt (.Values.autoscaling.minReplicas | int) (.Values.autoscaling.maxReplicas | int)) -}}
{{- fail (printf "refused: autoscaling.minReplicas %d is above autoscaling.maxReplicas %d" (.Values.autoscaling.minReplicas | int) (.Values.autoscaling.maxReplicas | int)) -}}
{{- end -}}

{{- /* Keys of config that the chart sets itself: a value here would be
overridden by the pod's environment, or would replace what the chart sets
(the Secret's credentials), or would put a secret in a ConfigMap. */}}
{{- $managed := list
  (list "id" "the chart sets each coordinator's id to its pod name (COORDINATOR_ID, which overrides the file): one fixed id would be shared by every replica. Remove it")
  (list "server.address" "the chart makes every coordinator listen on :8080 (COORDINATOR_SERVER_ADDRESS, which overrides the file). Remove it; service.port is the Service's port")
  (list "server.tls" "the chart sets it from tls.enabled, tls.secretName, tls.minVersion and tls.clientAuth. Use those")
  (list "cluster.advertise-url" "each pod advertises its own http(s)://<pod IP>:8080 (COORDINATOR_CLUSTER_ADVERTISE_URL, which overrides the file); one URL shared by the replicas would send every forwarded request to the same coordinator. Remove it")
  (list "cluster.tls" "the chart sets it from tls.* (the CA of tls.secretName's caKey). Use those")
  (list "api.admin-username" "set auth.adminUsername")
  (list "api.admin-password" "it would replace the password of the chart's Secret and sit in a ConfigMap. Set auth.adminPassword or auth.existingSecret")
  (list "api.token-secret" "it would replace the token secret of the chart's Secret and sit in a ConfigMap. Set auth.tokenSecret or auth.existingSecret")
  (list "redis.host" "set redis.host")
  (list "redis.port" "set redis.port")
  (list "redis.database" "set redis.database")
  (list "redis.tls" "set redis.tls")
  (list "redis.password" "a password in a ConfigMap is readable by anyone who can read the ConfigMap. Set redis.passwordSecret")
  (list "monitoring.metrics-auth" "a credential in a ConfigMap is readable by anyone who can read the ConfigMap. Set metricsAuth.bearerToken or metricsAuth.basicAuth (Secrets)")
-}}
{{- range $rule := $managed -}}
{{- $node := $cfg -}}
{{- $found := true -}}
{{- range $key := splitList "." (first $rule) -}}
{{- if and $found (kindIs "map" $node) (hasKey $node $key) -}}
{{- $node = get $node $key -}}
{{- else -}}
{{- $found = false -}}
{{- end -}}
{{- end -}}
{{- if $found -}}
{{- fail (printf "refused: config.%s: %s" (first $rule) (last $rule)) -}}
{{- end -}}
{{- end -}}

{{- /* Member credentials. */}}
{{- if and (include "coordinator.memberAuth" .) (eq (toString .Values.auth.memberUsername) (toString .Values.auth.adminUsername)) -}}
{{- fail (printf "refused: auth.memberUsername %q is auth.adminUsername: the members' user (role MEMBER) and the admin are two users. Give the members a name of their own" (toString .Values.auth.memberUsername)) -}}
{{- end -}}

{{- /* Secrets that only the configuration can hold are ${VARIABLE}
placeholders, filled from a Secret through extraEnv. */}}
{{- range $i, $user := dig "api" "users" (list) $cfg -}}
{{- $password := get $user "password" | default "" | toString -}}
{{- if and $password (not (regexMatch "^\\$\\{.+\\}$" $password)) -}}
{{- fail (printf "refused: config.api.users[%d].password is a literal password, which would sit in a ConfigMap. Write a placeholder such as ${%s_PASSWORD} and set that variable from a Secret in extraEnv" $i (upper (regexReplaceAll "[^A-Za-z0-9]" (get $user "username" | default "user" | toString) "_"))) -}}
{{- end -}}
{{- end -}}
{{- $jdbcURL := dig "store" "jdbc" "url" "" $cfg | toString -}}
{{- if or (regexMatch "://[^/@$]*:[^/@$]+@" $jdbcURL) (regexMatch "(?i)[?&][a-z]*password=[^&$]" $jdbcURL) -}}
{{- fail "refused: config.store.jdbc.url carries a literal password, which would sit in a ConfigMap. Leave the password out of the URL and write a placeholder for it, e.g. postgres://coordinator:${PGPASSWORD}@db:5432/coordinator with PGPASSWORD set from a Secret in extraEnv (or the whole URL as ${COORDINATOR_JDBC_URL})" -}}
{{- end -}}

{{- /* TLS. */}}
{{- if and .Values.tls.enabled (not .Values.tls.secretName) -}}
{{- fail "refused: tls.enabled without tls.secretName: name the kubernetes.io/tls Secret holding tls.crt and tls.key (e.g. the one a cert-manager Certificate writes)" -}}
{{- end -}}
{{- if eq (toString .Values.tls.clientAuth) "require" -}}
{{- fail "refused: tls.clientAuth require: the kubelet's HTTPS liveness and readiness probes present no client certificate, so no pod would ever be ready. Use request (a certificate presented is verified)" -}}
{{- end -}}
{{- if and (ne (toString .Values.tls.clientAuth) "none") (not .Values.tls.enabled) -}}
{{- fail (printf "refused: tls.clientAuth %s without tls.enabled" (toString .Values.tls.clientAuth)) -}}
{{- end -}}
{{- if and .Values.redis.tlsCA.secretName (not .Values.redis.tls) -}}
{{- fail "refused: redis.tlsCA.secretName without redis.tls: true; the CA would never be used" -}}
{{- end -}}

{{- /* Disruptions. */}}
{{- if and .Values.podDisruptionBudget.enabled (ge (include "coordinator.minReplicas" . | int) 2) (has (toString .Values.podDisruptionBudget.maxUnavailable) (list "0" "0%")) -}}
{{- fail "refused: podDisruptionBudget.maxUnavailable 0 would block every node drain forever. Use 1 (the coordinators hand their groups over on SIGTERM)" -}}
{{- end -}}
{{- end -}}
