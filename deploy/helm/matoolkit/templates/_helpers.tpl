{{/*
Shared helpers. Dapr app ids, app ports and component names are fixed conventions of the code
(dapr/README.md, libs/platform platform-config): they do not follow the release name.
*/}}

{{- define "matoolkit.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "matoolkit.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "matoolkit.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "matoolkit.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: matoolkit
{{- end -}}

{{/* Selector labels of one service; argument: dict "root" $ "component" "<service>". */}}
{{- define "matoolkit.selectorLabels" -}}
app.kubernetes.io/name: {{ include "matoolkit.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "matoolkit.image" -}}
{{- $repository := required "image.repository is required: the registry path of the matoolkit image (root Dockerfile)" .Values.image.repository -}}
{{- printf "%s:%s" $repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The identity of a service: its own clientId, else workloadIdentity.clientId. Argument: dict "root" $ "clientId" "<override>". */}}
{{- define "matoolkit.clientId" -}}
{{- if .root.Values.workloadIdentity.enabled -}}
{{- default (required "workloadIdentity.clientId is required when workloadIdentity.enabled: the client id of the user-assigned managed identity" .root.Values.workloadIdentity.clientId) .clientId -}}
{{- end -}}
{{- end -}}

{{/* Client id of the identity in the Azure Dapr components. */}}
{{- define "matoolkit.componentClientId" -}}
{{- default (include "matoolkit.clientId" (dict "root" . "clientId" "")) .Values.dapr.components.azureClientId -}}
{{- end -}}

{{/*
Every Dapr app id this release runs: the four services and one per extra worker pool. The
components list exactly these in their scopes.
*/}}
{{- define "matoolkit.appIds" -}}
{{- $ids := list -}}
{{- if .Values.adminApi.enabled }}{{ $ids = append $ids "matoolkit-admin-api" }}{{ end -}}
{{- $ids = append $ids "matoolkit-orchestrator" -}}
{{- $ids = append $ids "matoolkit-scheduler" -}}
{{- if .Values.worker.enabled }}{{ $ids = append $ids "matoolkit-worker" }}{{ end -}}
{{- range .Values.workerPools -}}
{{- $ids = append $ids (printf "matoolkit-worker-%s" (required "workerPools[].name is required" .name)) -}}
{{- end -}}
{{- toYaml $ids -}}
{{- end -}}

{{/*
Hook annotations of the Dapr Components, Configuration and Resiliency: a sidecar reads them once,
when it starts (docs.dapr.io/operations/components/component-updates: without the HotReload
preview feature a change needs a restart), and Helm creates ordinary custom resources after
every kind it knows, Deployments included (helm.sh/helm/v3 pkg/releaseutil/kind_sorter.go,
InstallOrder). As pre-install/pre-upgrade hooks they exist before any pod of the release starts.
Helm runs hooks by weight, then name (pkg/action/hooks.go, hookByWeight): the migrate
ServiceAccount (-10), these (-5), then the migrate Job (0). before-hook-creation replaces them
on each upgrade (a hook is created, never patched); they are not deleted after success, since
the sidecars need them. `helm uninstall` leaves hooks in place (deploy/README.md, section 6).
*/}}
{{- define "matoolkit.daprResourceHook" -}}
helm.sh/hook: pre-install,pre-upgrade
helm.sh/hook-weight: "-5"
helm.sh/hook-delete-policy: before-hook-creation
{{- end -}}

{{/*
Pod annotation: a digest of the Dapr resources the sidecar loads at start, so an upgrade that
changes them rolls the Deployments (a running sidecar keeps what it loaded). Argument: $.
*/}}
{{- define "matoolkit.daprResourcesChecksum" -}}
{{- $rendered := list -}}
{{- range list "dapr-components.yaml" "dapr-configuration.yaml" "dapr-resiliency.yaml" -}}
{{- $rendered = append $rendered (include (print $.Template.BasePath "/" .) $) -}}
{{- end -}}
{{- join "\n---\n" $rendered | sha256sum -}}
{{- end -}}

{{/* ServiceAccount; argument: dict "root" $ "component" "<service>" "clientId" "<override>" "hook" bool. */}}
{{- define "matoolkit.serviceAccount" -}}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ include "matoolkit.fullname" .root }}-{{ .component }}
  labels:
    {{- include "matoolkit.labels" .root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
    {{- if .root.Values.workloadIdentity.enabled }}
    azure.workload.identity/use: "true"
    {{- end }}
  {{- if or .root.Values.workloadIdentity.enabled .hook }}
  annotations:
    {{- if .root.Values.workloadIdentity.enabled }}
    azure.workload.identity/client-id: {{ include "matoolkit.clientId" . | quote }}
    {{- with .root.Values.workloadIdentity.tenantId }}
    azure.workload.identity/tenant-id: {{ . | quote }}
    {{- end }}
    {{- end }}
    {{- if .hook }}
    helm.sh/hook: pre-install,pre-upgrade
    helm.sh/hook-weight: "-10"
    helm.sh/hook-delete-policy: before-hook-creation
    {{- end }}
  {{- end }}
{{- end -}}

{{/*
The identity whose Entra token a SQL service presents (DATABASE_AUTH_CLIENT_ID): database.clientId,
else the service's own workload identity. With clientId "" it is the identity database.url's role
belongs to. Argument: dict "root" $ "clientId" "<the service's serviceAccount.clientId>".
*/}}
{{- define "matoolkit.databaseClientId" -}}
{{- default (include "matoolkit.clientId" .) .root.Values.database.clientId -}}
{{- end -}}

{{/*
A postgres:// URL in three parts, as Go's net/url and the WHATWG URL parser (pg-connection-string)
split it: 1 the scheme and "//", 2 the user info (before the authority's LAST "@"), 3 the host
and everything after it. The code takes only postgres:// and postgresql:// URLs
(libs/platform/src/platform-config.ts, databaseUrl).
*/}}
{{- define "matoolkit.databaseUrlPattern" -}}
^(postgres(?:ql)?://)(?:([^/?#]*)@)?([^@/?#]*(?:[/?#].*)?)$
{{- end -}}

{{/* The PostgreSQL role of database.url: its user name, never its password; "" when it names none. */}}
{{- define "matoolkit.databaseUrlRole" -}}
{{- $pattern := include "matoolkit.databaseUrlPattern" . -}}
{{- if regexMatch $pattern (toString .Values.database.url) -}}
{{- regexReplaceAll $pattern (toString .Values.database.url) "${2}" | splitList ":" | first -}}
{{- end -}}
{{- end -}}

{{/*
DATABASE_URL of one SQL service or the migrate job. On Azure Database for PostgreSQL with Entra
authentication the server accepts a token only at the login of its identity's own role
(learn.microsoft.com/azure/postgresql/flexible-server/how-to-configure-sign-in-azure-ad-authentication;
deploy/aca/hooks/db-roles.sh creates one role per identity with pgaadauth_create_principal_with_oid):
a service with its own identity needs its own role in the user part of the URL, <key>.database.user.
Only that user name is replaced; no message below prints database.url (it may hold a password).
database.existingSecret is read as is: the chart cannot rewrite a Secret, so it serves the services
of the one shared identity only (with auth=entra the URL holds no password: use database.url).
Argument: dict "root" $ "clientId" "<serviceAccount.clientId>" "valuesKey" "<adminApi|orchestrator|
scheduler|migrations>" "values" (the values under that key).
*/}}
{{- define "matoolkit.databaseUrlEnv" -}}
{{- $db := .root.Values.database -}}
{{- $key := .valuesKey -}}
{{- $name := get (dict "adminApi" "admin API" "migrations" "migrate job") $key | default $key -}}
{{- $user := dig "database" "user" "" (default dict .values) | toString -}}
{{- $entra := eq $db.auth "entra" -}}
{{- $ownIdentity := and $entra (ne (include "matoolkit.databaseClientId" .) (include "matoolkit.databaseClientId" (dict "root" .root "clientId" ""))) -}}
{{- $why := printf "%s.serviceAccount.clientId gives the %s its own identity" $key $name -}}
{{- if $db.existingSecret.name -}}
{{- if $user -}}
{{- fail (printf "%s.database.user cannot be applied to database.existingSecret: the chart does not rewrite a Secret's URL. With database.auth entra set database.url (it holds no password) instead of database.existingSecret.name" $key) -}}
{{- else if $ownIdentity -}}
{{- fail (printf "%s, whose PostgreSQL role the shared URL of database.existingSecret cannot name: with database.auth entra set database.url (it holds no password) instead of database.existingSecret.name, and %s.database.user to that identity's role" $why $key) -}}
{{- end }}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ $db.existingSecret.name }}
      key: {{ $db.existingSecret.key }}
{{- else -}}
{{- $url := toString (required "database.url is required (or database.existingSecret.name): the PostgreSQL server of the admin API, orchestrator, scheduler and migrate job" $db.url) -}}
{{- $pattern := include "matoolkit.databaseUrlPattern" .root -}}
{{- if $user -}}
{{- if not $entra -}}
{{- fail (printf "%s.database.user applies with database.auth entra only: with password authentication the password in database.url belongs to the URL's own role" $key) -}}
{{- end -}}
{{- if not (regexMatch $pattern $url) -}}
{{- fail (printf "database.url must be a postgres:// or postgresql:// URL for %s.database.user to replace its user name" $key) -}}
{{- end -}}
{{- /* Percent-encoded as pg-connection-string decodes it (decodeURIComponent): urlquery leaves
only A-Z a-z 0-9 - _ . ~ as they are and writes a space as "+", the one thing to undo. A password
stays in place, so the service still refuses it at start ("with entra the password is a token"). */ -}}
{{- $password := regexReplaceAll $pattern $url "${2}" | regexFind ":.*$" -}}
{{- $url = printf "%s%s%s@%s" (regexReplaceAll $pattern $url "${1}") (urlquery $user | replace "+" "%20") $password (regexReplaceAll $pattern $url "${3}") -}}
{{- else if $ownIdentity -}}
{{- $role := include "matoolkit.databaseUrlRole" .root -}}
{{- $shared := ternary "database.clientId" "workloadIdentity.clientId" (ne (toString $db.clientId) "") -}}
{{- $about := printf "database.url's role '%s' belongs to another identity, the one of %s" $role $shared -}}
{{- if eq $role "" }}{{ $about = "database.url names no role" }}{{ end -}}
{{- fail (printf "%s: set %s.database.user to that identity's PostgreSQL role (%s; Azure Database for PostgreSQL accepts an Entra token only at the login of its own identity's role)" $why $key $about) -}}
{{- end }}
- name: DATABASE_URL
  value: {{ $url | quote }}
{{- end -}}
{{- end -}}

{{/*
Environment every service and the migrate job share. Argument: dict "root" $ "clientId" "<override>"
"sql" bool (false for the worker in Dapr mode: no DATABASE_URL, contract), and with sql
"valuesKey" and "values" (matoolkit.databaseUrlEnv).
*/}}
{{- define "matoolkit.commonEnv" -}}
{{- $v := .root.Values -}}
- name: MATOOLKIT_DATA_DIR
  value: /data
- name: LOG_LEVEL
  value: {{ $v.logLevel | quote }}
{{- if .sql }}
{{- if not (has $v.database.auth (list "entra" "password")) }}
{{- fail (printf "database.auth must be entra or password, not %q" $v.database.auth) }}
{{- end }}
{{- include "matoolkit.databaseUrlEnv" . | trim | nindent 0 }}
- name: DATABASE_AUTH
  value: {{ $v.database.auth | quote }}
{{- if eq $v.database.auth "entra" }}
{{- $dbClient := include "matoolkit.databaseClientId" . }}
{{- if $dbClient }}
- name: DATABASE_AUTH_CLIENT_ID
  value: {{ $dbClient | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- with $v.observability.otlpEndpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ . | quote }}
{{- end }}
{{- end -}}

{{/*
Environment of a Dapr-mode service: commonEnv plus the runtime and the app port. Argument: dict
"root" $ "appPort" int "clientId" "<override>" "sql" bool "valuesKey" "<key>" "values" (its values).
*/}}
{{- define "matoolkit.serviceEnv" -}}
{{- $v := .root.Values -}}
{{- if not (has $v.runtime (list "dapr" "aca")) }}
{{- fail (printf "runtime must be dapr or aca, not %q" $v.runtime) }}
{{- end }}
{{- include "matoolkit.commonEnv" . }}
- name: MATOOLKIT_RUNTIME
  value: {{ $v.runtime | quote }}
- name: MATOOLKIT_DAPR_APP_PORT
  value: {{ .appPort | quote }}
{{- /* Listen on every interface: the kubelet probes the pod IP, not the sidecar's 127.0.0.1. */}}
- name: MATOOLKIT_DAPR_APP_HOST
  value: "0.0.0.0"
{{- /* The app's key to its sidecar, and the sidecar's key to the app (same Secrets as the annotations). */}}
- name: DAPR_API_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "matoolkit.daprApiTokenSecret" .root }}
      key: token
- name: APP_API_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "matoolkit.appApiTokenSecret" .root }}
      key: token
{{- if .sql }}
{{- /* The migrate hook Job migrates once per deploy (contract). */}}
- name: MATOOLKIT_MIGRATE_ON_START
  value: {{ not $v.migrations.enabled | toString | quote }}
{{- end }}
{{- end -}}

{{/* Names of the Secrets (key "token") holding DAPR_API_TOKEN and APP_API_TOKEN; argument: $. */}}
{{- define "matoolkit.daprApiTokenSecret" -}}
{{- default (printf "%s-dapr-api-token" (include "matoolkit.fullname" .)) .Values.dapr.apiTokens.daprApiTokenSecret -}}
{{- end -}}
{{- define "matoolkit.appApiTokenSecret" -}}
{{- default (printf "%s-app-api-token" (include "matoolkit.fullname" .)) .Values.dapr.apiTokens.appApiTokenSecret -}}
{{- end -}}

{{/* MATOOLKIT_SECRETS_KEY from the secrets-key Secret, as a YAML map (fromYaml it); argument: $. */}}
{{- define "matoolkit.secretsKeyEnvVar" -}}
name: MATOOLKIT_SECRETS_KEY
valueFrom:
  secretKeyRef:
    name: {{ default (printf "%s-secrets-key" (include "matoolkit.fullname" .)) .Values.secretsKey.existingSecret }}
    key: {{ .Values.secretsKey.key | default "key" }}
{{- end -}}

{{/* Dapr sidecar annotations; argument: dict "root" $ "appId" "<id>" "appPort" int. */}}
{{- define "matoolkit.daprAnnotations" -}}
{{- $d := .root.Values.dapr -}}
dapr.io/enabled: "true"
dapr.io/app-id: {{ .appId | quote }}
dapr.io/app-port: {{ .appPort | quote }}
dapr.io/app-protocol: "http"
dapr.io/config: {{ $d.config.name | quote }}
dapr.io/log-level: {{ $d.logLevel | quote }}
dapr.io/enable-app-health-check: "true"
dapr.io/app-health-check-path: "/healthz"
dapr.io/app-health-probe-interval: {{ $d.appHealth.probeIntervalSeconds | quote }}
dapr.io/app-health-threshold: {{ $d.appHealth.threshold | quote }}
dapr.io/enable-metrics: "true"
dapr.io/api-token-secret: {{ include "matoolkit.daprApiTokenSecret" .root | quote }}
dapr.io/app-token-secret: {{ include "matoolkit.appApiTokenSecret" .root | quote }}
{{- if .root.Values.observability.prometheusAnnotations }}
prometheus.io/scrape: "true"
prometheus.io/port: {{ .appPort | quote }}
prometheus.io/path: "/metrics"
{{- end }}
{{- end -}}

{{- define "matoolkit.volumes" -}}
- name: data
  emptyDir:
    sizeLimit: {{ .Values.dataVolume.sizeLimit }}
- name: tmp
  emptyDir:
    sizeLimit: 256Mi
{{- end -}}

{{- define "matoolkit.volumeMounts" -}}
- name: data
  mountPath: /data
- name: tmp
  mountPath: /tmp
{{- end -}}

{{- define "matoolkit.podPlacement" -}}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/*
One service: ServiceAccount, Deployment and PodDisruptionBudget. Argument: dict
  "root" $, "component" (resource suffix), "command" (image argument), "appId", "appPort",
  "values" (the service's values), "replicas" (int, or nil to leave them to KEDA),
  "singleton" (bool: Recreate strategy), "sql" (bool), "valuesKey" (with sql: the key of its
  values, e.g. "adminApi", named in messages), "env" (list of extra variables),
  "httpPort" (int: the admin API's port, probed instead of the app port).
*/}}
{{- define "matoolkit.service" -}}
{{- $root := .root -}}
{{- $v := .values -}}
{{- $fullname := include "matoolkit.fullname" $root -}}
{{- $selector := dict "root" $root "component" .component -}}
{{- $probePort := default .appPort .httpPort -}}
{{ include "matoolkit.serviceAccount" (dict "root" $root "component" .component "clientId" $v.serviceAccount.clientId "hook" false) }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $fullname }}-{{ .component }}
  labels:
    {{- include "matoolkit.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
spec:
  {{- if not (kindIs "invalid" .replicas) }}
  replicas: {{ .replicas }}
  {{- end }}
  revisionHistoryLimit: 5
  {{- if .singleton }}
  strategy:
    type: Recreate
  {{- end }}
  selector:
    matchLabels:
      {{- include "matoolkit.selectorLabels" $selector | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "matoolkit.selectorLabels" $selector | nindent 8 }}
        {{- if $root.Values.workloadIdentity.enabled }}
        azure.workload.identity/use: "true"
        {{- end }}
      annotations:
        {{- include "matoolkit.daprAnnotations" (dict "root" $root "appId" .appId "appPort" .appPort) | nindent 8 }}
        checksum/dapr-resources: {{ include "matoolkit.daprResourcesChecksum" $root | quote }}
    spec:
      serviceAccountName: {{ $fullname }}-{{ .component }}
      automountServiceAccountToken: true
      securityContext:
        {{- toYaml $root.Values.podSecurityContext | nindent 8 }}
      {{- with include "matoolkit.podPlacement" $root | trim }}
      {{- . | nindent 6 }}
      {{- end }}
      terminationGracePeriodSeconds: 60
      containers:
        - name: {{ .component }}
          image: {{ include "matoolkit.image" $root | quote }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          args: [{{ .command | quote }}]
          ports:
            - name: app
              containerPort: {{ .appPort }}
              protocol: TCP
            {{- if .httpPort }}
            - name: http
              containerPort: {{ .httpPort }}
              protocol: TCP
            {{- end }}
          env:
            {{- include "matoolkit.serviceEnv" (dict "root" $root "appPort" .appPort "clientId" $v.serviceAccount.clientId "sql" .sql "valuesKey" .valuesKey "values" $v) | nindent 12 }}
            {{- with .env }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
            {{- with $v.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          startupProbe:
            httpGet: { path: /healthz, port: {{ $probePort }} }
            periodSeconds: 5
            failureThreshold: 36
          livenessProbe:
            httpGet: { path: /healthz, port: {{ $probePort }} }
            periodSeconds: 10
            timeoutSeconds: 3
            failureThreshold: 3
          readinessProbe:
            httpGet: { path: /readyz, port: {{ $probePort }} }
            periodSeconds: 5
            timeoutSeconds: 3
            failureThreshold: 3
          resources:
            {{- toYaml $v.resources | nindent 12 }}
          securityContext:
            {{- toYaml $root.Values.containerSecurityContext | nindent 12 }}
          volumeMounts:
            {{- include "matoolkit.volumeMounts" $root | nindent 12 }}
      volumes:
        {{- include "matoolkit.volumes" $root | nindent 8 }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ $fullname }}-{{ .component }}
  labels:
    {{- include "matoolkit.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
spec:
  {{- $pdb := default (dict "maxUnavailable" 1) $v.pdb }}
  {{- if hasKey $pdb "minAvailable" }}
  minAvailable: {{ $pdb.minAvailable }}
  {{- else }}
  maxUnavailable: {{ $pdb.maxUnavailable }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "matoolkit.selectorLabels" $selector | nindent 6 }}
{{- end -}}

{{- define "matoolkit.servicebusNamespace" -}}
{{- $ns := required "broker.servicebus.namespace is required with broker.type servicebus: the Service Bus namespace name, e.g. sb-matoolkit-prod" .Values.broker.servicebus.namespace -}}
{{- if contains "." $ns -}}
{{- fail (printf "broker.servicebus.namespace %q: give the namespace name, not its host name" $ns) -}}
{{- end -}}
{{- $ns -}}
{{- end -}}

{{/* MATOOLKIT_RETENTION_DAYS and _MODE (values "retention"): the scheduler and the admin API read both. */}}
{{- define "matoolkit.retentionEnv" -}}
- name: MATOOLKIT_RETENTION_DAYS
  value: {{ toString .Values.retention.days | quote }}
- name: MATOOLKIT_RETENTION_MODE
  value: {{ .Values.retention.mode | quote }}
{{- end }}
