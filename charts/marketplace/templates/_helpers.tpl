{{/*
Helpers of the component loop. Every per-component helper takes a dict:
  root: the chart's top-level context ($), name: the component key (gateway, listing...), c: its values merged
  over .Values.defaults (see "marketplace.component").
*/}}

{{- define "marketplace.fullname" -}}
{{- printf "%s-%s" .root.Release.Name .name | trunc 63 | trimSuffix "-" -}}
{{- end }}

{{/* The component's values: .Values.defaults, overridden by .Values.components.<name>. Returns YAML. */}}
{{- define "marketplace.component" -}}
{{- $defaults := deepCopy .root.Values.defaults -}}
{{- toYaml (mergeOverwrite $defaults (deepCopy .component)) -}}
{{- end }}

{{- define "marketplace.selectorLabels" -}}
app.kubernetes.io/name: {{ .name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- end }}

{{- define "marketplace.labels" -}}
{{ include "marketplace.selectorLabels" . }}
app.kubernetes.io/part-of: marketplace
app.kubernetes.io/component: {{ .name }}
app.kubernetes.io/version: {{ .root.Values.image.tag | default .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- with .root.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "marketplace.image" -}}
{{- $image := .root.Values.image -}}
{{- $base := printf "%s/%s/%s" $image.registry $image.repository .name -}}
{{- if $image.digest -}}
{{ $base }}@{{ $image.digest }}
{{- else -}}
{{ $base }}:{{ $image.tag | default .root.Chart.AppVersion }}
{{- end -}}
{{- end }}

{{/* Plain environment of a component: the ConfigMap's data and the migrations Job's env. Returns YAML. */}}
{{- define "marketplace.env" -}}
{{- $v := .root.Values -}}
{{- $c := .c -}}
{{- $env := dict
  "NODE_ENV" "production"
  "LOG_LEVEL" $v.observability.logLevel
  "DATA_DIR" "/tmp/marketplace"
  "EVENT_LOG" $v.eventLog.kind
  "EVENT_LOG_NAMESPACE" $v.eventLog.namespace
  "EVENT_LOG_PARTITIONS" (toString $v.eventLog.partitions)
  "STARTUP_TIMEOUT_MS" (toString (mul $v.startupTimeoutSeconds 1000))
  "SHUTDOWN_TIMEOUT_MS" (toString (mul $v.shutdown.timeoutSeconds 1000))
  "PUBLIC_BASE_URL" $v.publicBaseUrl
  "OTEL_SERVICE_NAME" .name
-}}
{{- if eq $v.eventLog.kind "nats" }}
{{- $_ := set $env "NATS_URL" (required "eventLog.nats.url is required with eventLog.kind=nats" $v.eventLog.nats.url) }}
{{- $_ := set $env "EVENT_LOG_ACK_WAIT_MS" (toString $v.eventLog.nats.ackWaitMs) }}
{{- else }}
{{- if not $v.eventLog.kafka.brokers }}{{ fail "eventLog.kafka.brokers is required with eventLog.kind=kafka" }}{{ end }}
{{- $_ := set $env "KAFKA_BROKERS" (join "," $v.eventLog.kafka.brokers) }}
{{- end }}
{{- if $v.observability.enabled }}
{{- $_ := set $env "OTEL_SDK_DISABLED" "false" }}
{{- $_ := set $env "OTEL_EXPORTER_OTLP_ENDPOINT" (required "observability.otlpEndpoint is required when observability is enabled" $v.observability.otlpEndpoint) }}
{{- $_ := set $env "OTEL_EXPORTER_OTLP_PROTOCOL" "http/protobuf" }}
{{- $_ := set $env "OTEL_TRACES_SAMPLER" "parentbased_traceidratio" }}
{{- $_ := set $env "OTEL_TRACES_SAMPLER_ARG" (toString $v.observability.traceSampleRatio) }}
{{- $_ := set $env "OTEL_LOGS_EXPORTER" "none" }}
{{- else }}
{{- $_ := set $env "OTEL_SDK_DISABLED" "true" }}
{{- end }}
{{- if eq $c.protocol "grpc" }}
{{- $_ := set $env "GRPC_HOST" "0.0.0.0" }}
{{- $_ := set $env "GRPC_PORT" (toString $c.port) }}
{{- else }}
{{- $_ := set $env "HOST" "0.0.0.0" }}
{{- $_ := set $env "PORT" (toString $c.port) }}
{{- end }}
{{- range $callee := $c.calls }}
{{- $target := index $v.components $callee | default dict }}
{{- if $target.enabled }}
{{- /* The callee's headless Service: the client balances over its pods (round robin) and follows them. */}}
{{- $_ := set $env (printf "%s_GRPC_ADDR" (upper $callee)) (printf "dns:///%s-pods.%s.svc:%v" (include "marketplace.fullname" (dict "root" $.root "name" $callee)) $.root.Release.Namespace $target.port) }}
{{- end }}
{{- end }}
{{- if $c.grpcDeadlineMs }}
{{- $_ := set $env "GRPC_DEADLINE_MS" (toString $c.grpcDeadlineMs) }}
{{- end }}
{{- if has .name (list "gateway" "listing") }}
{{- $_ := set $env "BLOB_STORE" $v.blobStore.kind }}
{{- if eq $v.blobStore.kind "s3" }}
{{- $_ := set $env "S3_BUCKET" $v.blobStore.s3.bucket }}
{{- $_ := set $env "S3_REGION" $v.blobStore.s3.region }}
{{- $_ := set $env "S3_FORCE_PATH_STYLE" (toString $v.blobStore.s3.forcePathStyle) }}
{{- with $v.blobStore.s3.endpoint }}{{ $_ := set $env "S3_ENDPOINT" . }}{{ end }}
{{- with $v.blobStore.s3.prefix }}{{ $_ := set $env "S3_PREFIX" . }}{{ end }}
{{- end }}
{{- end }}
{{- if eq .name "listing" }}
{{- $_ := set $env "MAIL_FROM" $v.mail.from }}
{{- with $c.outboundAllowHosts }}{{ $_ := set $env "OUTBOUND_ALLOW_HOSTS" . }}{{ end }}
{{- end }}
{{- if and (eq .name "catalog") $c.search }}
{{- $_ := set $env "SEARCH_BACKEND" $c.search.backend }}
{{- if eq $c.search.backend "elasticsearch" }}
{{- $_ := set $env "ELASTICSEARCH_URL" (required "elasticsearch.url is required with components.catalog.search.backend=elasticsearch" $v.elasticsearch.url) }}
{{- $_ := set $env "ELASTICSEARCH_INDEX" $v.elasticsearch.index }}
{{- end }}
{{- end }}
{{- range $name, $value := $c.env }}
{{- $_ := set $env $name (toString $value) }}
{{- end }}
{{- toYaml $env -}}
{{- end }}

{{/* Environment variables read from the Secret, never from values: a list of EnvVar. */}}
{{- define "marketplace.secretEnv" -}}
{{- $v := .root.Values -}}
{{- $secret := required "secrets.existingSecret is required: the chart never templates secrets" $v.secrets.existingSecret -}}
{{- $keys := list (dict "name" "DATABASE_URL" "key" (.c.databaseUrlKey | default $v.postgresql.databaseUrlKey)) -}}
{{- /* Every component signs its calls and verifies its callers with it (docs/security.md, "Internal calls"). */ -}}
{{- $keys = append $keys (dict "name" "INTERNAL_AUTH_KEY" "key" (required "secrets.internalAuthKey is required" $v.secrets.internalAuthKey)) -}}
{{- range .c.secretEnv }}{{ $keys = append $keys (dict "name" . "key" .) }}{{ end -}}
{{- if and (has .name (list "gateway" "listing")) (eq $v.blobStore.kind "s3") $v.blobStore.s3.useStaticCredentials }}
{{- $keys = append $keys (dict "name" "S3_ACCESS_KEY_ID" "key" "S3_ACCESS_KEY_ID") }}
{{- $keys = append $keys (dict "name" "S3_SECRET_ACCESS_KEY" "key" "S3_SECRET_ACCESS_KEY") }}
{{- end }}
{{- if and (eq .name "listing") $v.mail.smtp }}
{{- $keys = append $keys (dict "name" "SMTP_URL" "key" "SMTP_URL") }}
{{- end }}
{{- range $keys }}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ .key }}
{{- end }}
{{- end }}

{{- define "marketplace.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 1000
runAsGroup: 1000
fsGroup: 1000
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- define "marketplace.containerSecurityContext" -}}
allowPrivilegeEscalation: false
privileged: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: [ALL]
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/*
Probes. gRPC services: Kubernetes' native gRPC probes on grpc.health.v1 — readiness asks the overall status
(SERVING only when caught up and not draining), liveness the "liveness" entry (SERVING while the process runs).
The gateway: GET /healthz (alive) and /readyz (its backends and database answer).
*/}}
{{- define "marketplace.probes" -}}
{{- if eq .c.protocol "grpc" }}
startupProbe:
  grpc: { port: {{ .c.port }}, service: liveness }
  periodSeconds: 2
  failureThreshold: {{ div (add .root.Values.startupTimeoutSeconds 30) 2 }}
livenessProbe:
  grpc: { port: {{ .c.port }}, service: liveness }
  periodSeconds: 10
  timeoutSeconds: 2
  failureThreshold: 3
readinessProbe:
  grpc: { port: {{ .c.port }}, service: "" }
  periodSeconds: 5
  timeoutSeconds: 2
  failureThreshold: 2
{{- else }}
startupProbe:
  httpGet: { path: /healthz, port: http }
  periodSeconds: 2
  failureThreshold: {{ div (add .root.Values.startupTimeoutSeconds 30) 2 }}
livenessProbe:
  httpGet: { path: /healthz, port: http }
  periodSeconds: 10
  timeoutSeconds: 2
  failureThreshold: 3
readinessProbe:
  httpGet: { path: /readyz, port: http }
  periodSeconds: 5
  timeoutSeconds: 2
  failureThreshold: 2
{{- end }}
{{- end }}

{{/* The pod spec shared by the Deployment and the migrations Job. */}}
{{- define "marketplace.podSpec" -}}
serviceAccountName: {{ .serviceAccountName }}
automountServiceAccountToken: false
securityContext:
  {{- include "marketplace.podSecurityContext" . | nindent 2 }}
{{- with .root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
volumes:
  - name: tmp
    emptyDir:
      sizeLimit: {{ .c.tmpSizeLimit }}
{{- end }}
