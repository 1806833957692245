// Stage 2 (000 "Component Resources", on Container Apps): the environment with its Dapr
// components, the four services of the one image, the migrate job and the db-roles job.
// Variables are exactly those the code reads (deploy/aca/aca-infrastructure.test.ts checks it).
param name string
param location string
param tags object
// Stage 1's outputs, one parameter each: main.bicep passes them one by one, never the stage's
// whole `outputs` object (Bicep compiles that to reference(...).outputs, whose entries are
// {type, value} wrappers: Azure/bicep#16792, #13947).
@description('Resource id per identity role (admin-api, orchestrator, scheduler, worker, dapr-state, migrate, scaler).')
param identityIds object
@description('Client id per identity role.')
param identityClientIds object
@description('Principal (object) id per identity role.')
param identityPrincipalIds object
@description('Name per identity role: the PostgreSQL role name of its Entra principal.')
param identityNames object
param containerAppsSubnetId string
param logAnalyticsWorkspaceName string
param appInsightsName string
param registryLoginServer string
@description('URI of the vault with the worker\'s target-tenant certificate.')
param keyVaultUri string
@description('URI of the vault with the webhook secrets key.')
param secretsKeyVaultUri string
param serviceBusName string
param serviceBusFqdn string
param postgresFqdn string
param postgresDatabase string
@description('Image per azd service name (azd records SERVICE_<NAME>_IMAGE_NAME after a deploy); empty or missing: the placeholder.')
param images object
@description('Per azd service name: \'true\' when its container app exists (azd\'s SERVICE_<NAME>_RESOURCE_EXISTS).')
param imagesExist object
@description('What a service runs before azd deployed it once (container-app.bicep: no Dapr, probes or command).')
param placeholderImage string
param workerId string
param workerMaxReplicas int
param workerConcurrency int
@description('Messages waiting on the worker subscription per replica (about concurrency x 2).')
param workerMessagesPerReplica int
@description('Entra tenant of the admin API app registration.')
param adminApiTenantId string
@description('Application (client) id of the admin API app registration.')
param adminApiClientId string
@allowed(['none', 'entra'])
param tenantMode string
param targetTenantId string
param targetClientId string
param targetCertificateName string
param logLevel string
param environmentInternal bool

var ids = identityIds
var clientIds = identityClientIds
var names = identityNames
var workerAppId = 'matoolkit-worker'

module environment 'environment.bicep' = {
  name: 'environment'
  params: {
    name: name
    location: location
    tags: tags
    infrastructureSubnetId: containerAppsSubnetId
    logAnalyticsWorkspaceName: logAnalyticsWorkspaceName
    appInsightsName: appInsightsName
    internal: environmentInternal
    serviceBusFqdn: serviceBusFqdn
    postgresFqdn: postgresFqdn
    databaseName: postgresDatabase
    clientIds: clientIds
    daprStateRoleName: names['dapr-state']
    workerAppId: workerAppId
  }
}

// Passwordless PostgreSQL (deployment contract): the role is the identity's name, no password.
var databaseUrl = 'postgres://${postgresFqdn}:5432/${postgresDatabase}?sslmode=require'
func databaseUrlFor(role string, url string) string => replace(url, 'postgres://', 'postgres://${role}@')

// What every service sets: the aca preset, the app's pub/sub component, the data directory.
func daprEnv(service string, port int, level string) array => [
  { name: 'MATOOLKIT_RUNTIME', value: 'aca' }
  { name: 'MATOOLKIT_DAPR_APP_PORT', value: string(port) }
  { name: 'MATOOLKIT_DAPR_APP_HOST', value: '0.0.0.0' }
  { name: 'MATOOLKIT_DAPR_PUBSUB', value: 'matoolkit-pubsub-${service}' }
  // One publish per message, not Dapr's alpha bulk publish API: "Azure Container Apps doesn't
  // guarantee the availability of Dapr alpha APIs" (learn.microsoft.com/azure/container-apps/
  // dapr-overview, "Limitations"). Also the aca runtime's default; set to be seen here.
  { name: 'MATOOLKIT_DAPR_BULK_PUBLISH', value: 'false' }
  { name: 'MATOOLKIT_DATA_DIR', value: '/data' }
  { name: 'LOG_LEVEL', value: level }
  { name: 'OTEL_SERVICE_NAME', value: 'matoolkit-${service}' }
  // The environment's managed OpenTelemetry agent (environment.bicep) injects
  // OTEL_EXPORTER_OTLP_ENDPOINT, a gRPC endpoint (…:4317), and "only supports grpc"
  // (learn.microsoft.com/azure/container-apps/opentelemetry-agents, "Environment variables"): the
  // code exports over gRPC when told so (libs/runtime/src/telemetry/tracing.ts). The agent sets the
  // same value; set here too, a value in the container's specification wins over the injected one.
  { name: 'OTEL_EXPORTER_OTLP_PROTOCOL', value: 'grpc' }
]

// The SQL services: their own PostgreSQL role; the schema is migrated by the migrate job.
func sqlEnv(role string, clientId string, url string) array => [
  { name: 'DATABASE_URL', value: databaseUrlFor(role, url) }
  { name: 'DATABASE_AUTH', value: 'entra' }
  { name: 'DATABASE_AUTH_CLIENT_ID', value: clientId }
  { name: 'MATOOLKIT_MIGRATE_ON_START', value: 'false' }
  // The identity of MATOOLKIT_AZURE_CREDENTIAL's default (data sources: Dataverse, Databricks).
  { name: 'AZURE_CLIENT_ID', value: clientId }
]

// The webhook secrets key: every enabled version of one Key Vault secret, read with the app's own
// identity (AZURE_CLIENT_ID above); the admin API creates it on its first start, the orchestrator
// waits for it. Never generated by the template: a redeployment would replace it.
func secretsKeyEnv(vaultUri string) array => [
  { name: 'MATOOLKIT_SECRETS_KEYVAULT_URL', value: vaultUri }
  { name: 'MATOOLKIT_SECRETS_KEYVAULT_SECRET', value: 'matoolkit-secrets-key' }
]

var adminApiEnv = concat(
  daprEnv('admin-api', 3004, logLevel),
  sqlEnv(names['admin-api'], clientIds['admin-api'], databaseUrl),
  secretsKeyEnv(secretsKeyVaultUri),
  [
    { name: 'PORT', value: '8080' }
    { name: 'MATOOLKIT_API_HOST', value: '0.0.0.0' }
    { name: 'MATOOLKIT_AUTH_MODE', value: 'entra' }
    { name: 'AZURE_AD_TENANT_ID', value: adminApiTenantId }
    { name: 'AZURE_AD_CLIENT_ID', value: adminApiClientId }
  ]
)
var orchestratorEnv = concat(
  daprEnv('orchestrator', 3001, logLevel),
  sqlEnv(names.orchestrator, clientIds.orchestrator, databaseUrl),
  secretsKeyEnv(secretsKeyVaultUri)
)
var schedulerEnv = concat(
  daprEnv('scheduler', 3003, logLevel),
  sqlEnv(names.scheduler, clientIds.scheduler, databaseUrl)
)
// The worker: no DATABASE_URL (deployment contract); its tenant from Key Vault with its identity.
var workerTenantEnv = tenantMode == 'entra'
  ? [
      { name: 'MATOOLKIT_TENANT', value: 'entra' }
      { name: 'MATOOLKIT_TENANT_ID', value: targetTenantId }
      { name: 'MATOOLKIT_CLIENT_ID', value: targetClientId }
      { name: 'MATOOLKIT_TENANT_AUTH', value: 'key-vault-certificate' }
      { name: 'MATOOLKIT_KEY_VAULT_URL', value: keyVaultUri }
      { name: 'MATOOLKIT_KEY_VAULT_CERTIFICATE_NAME', value: targetCertificateName }
      { name: 'MATOOLKIT_MANAGED_IDENTITY_CLIENT_ID', value: clientIds.worker }
    ]
  : [{ name: 'MATOOLKIT_TENANT', value: 'none' }]
var workerEnv = concat(
  daprEnv('worker', 3002, logLevel),
  [
    { name: 'MATOOLKIT_WORKER_ID', value: workerId }
    { name: 'MATOOLKIT_WORKER_CONCURRENCY', value: string(workerConcurrency) }
  ],
  workerTenantEnv
)
var migrateEnv = [
  { name: 'DATABASE_URL', value: databaseUrlFor(names.migrate, databaseUrl) }
  { name: 'DATABASE_AUTH', value: 'entra' }
  { name: 'DATABASE_AUTH_CLIENT_ID', value: clientIds.migrate }
  { name: 'MATOOLKIT_DATA_DIR', value: '/data' }
  { name: 'LOG_LEVEL', value: logLevel }
]

// The image azd deployed for the service, while its container app exists; else the placeholder.
// azd records SERVICE_<NAME>_IMAGE_NAME at each deploy and SERVICE_<NAME>_RESOURCE_EXISTS before
// each provision (whether the app tagged azd-service-name exists: Azure/azure-dev,
// cli/azd/pkg/project/service_target_containerapp.go): after `azd down` the recorded image names a
// registry that is gone, and the next provision must start from the placeholder again.
func imageOf(images object, deployed object, service string, placeholder string) string =>
  (deployed[?service] ?? 'false') == 'true' && !empty(images[?service] ?? '') ? images[service] : placeholder

var common = {
  location: location
  tags: tags
  environmentId: environment.outputs.id
  registryServer: registryLoginServer
}

module adminApi 'container-app.bicep' = {
  name: 'app-admin-api'
  params: {
    ...common
    name: 'ca-${name}-admin-api'
    serviceName: 'admin-api'
    image: imageOf(images, imagesExist, 'admin-api', placeholderImage)
    placeholder: imageOf(images, imagesExist, 'admin-api', placeholderImage) == placeholderImage
    command: 'admin-api'
    identityId: ids['admin-api']
    extraIdentityIds: [ids['dapr-state']]
    env: adminApiEnv
    daprAppId: 'matoolkit-admin-api'
    daprAppPort: 3004
    ingressTargetPort: 8080
    ingressExternal: true
    healthPort: 8080
    minReplicas: 1
    maxReplicas: 3
  }
}

// One replica, always: the aca preset runs the in-process workflow engine, which keeps a batch's
// workflow in the process that started it (a second replica would run duplicate workflows), and
// resumes from SQL after a restart.
module orchestrator 'container-app.bicep' = {
  name: 'app-orchestrator'
  params: {
    ...common
    name: 'ca-${name}-orchestrator'
    serviceName: 'orchestrator'
    image: imageOf(images, imagesExist, 'orchestrator', placeholderImage)
    placeholder: imageOf(images, imagesExist, 'orchestrator', placeholderImage) == placeholderImage
    command: 'orchestrator'
    identityId: ids.orchestrator
    extraIdentityIds: [ids['dapr-state']]
    env: orchestratorEnv
    daprAppId: 'matoolkit-orchestrator'
    daprAppPort: 3001
    healthPort: 3001
    minReplicas: 1
    maxReplicas: 1
  }
}

// One replica, always: its ticks are timers inside the process (the aca preset has no Jobs API),
// so zero replicas would stop every tick; more would only contend for the guarded tick's lease.
module scheduler 'container-app.bicep' = {
  name: 'app-scheduler'
  params: {
    ...common
    name: 'ca-${name}-scheduler'
    serviceName: 'scheduler'
    image: imageOf(images, imagesExist, 'scheduler', placeholderImage)
    placeholder: imageOf(images, imagesExist, 'scheduler', placeholderImage) == placeholderImage
    command: 'scheduler'
    identityId: ids.scheduler
    extraIdentityIds: [ids['dapr-state']]
    env: schedulerEnv
    daprAppId: 'matoolkit-scheduler'
    daprAppPort: 3003
    healthPort: 3003
    minReplicas: 1
    maxReplicas: 1
  }
}

// 0..N on the length of its own subscription (000: KEDA Service Bus scaler), read with the scaler
// identity (Data Owner on worker-jobs only, lifecycle None: never available to the container).
module worker 'container-app.bicep' = {
  name: 'app-worker'
  params: {
    ...common
    name: 'ca-${name}-worker'
    serviceName: 'worker'
    image: imageOf(images, imagesExist, 'worker', placeholderImage)
    placeholder: imageOf(images, imagesExist, 'worker', placeholderImage) == placeholderImage
    command: 'worker'
    identityId: ids.worker
    extraIdentityIds: [ids['dapr-state'], ids.scaler]
    platformOnlyIdentityIds: [ids.scaler]
    env: workerEnv
    daprAppId: workerAppId
    daprAppPort: 3002
    healthPort: 3002
    minReplicas: 0
    maxReplicas: workerMaxReplicas
    cpu: '1.0'
    memory: '2Gi'
    scaleRules: [
      {
        name: 'worker-jobs-subscription'
        custom: {
          type: 'azure-servicebus'
          identity: ids.scaler
          metadata: {
            namespace: serviceBusName
            topicName: 'worker-jobs'
            subscriptionName: workerAppId
            messageCount: string(workerMessagesPerReplica)
          }
        }
      }
    ]
  }
}

// `matoolkit migrate`, started by the azd predeploy hook (deploy/aca/hooks/migrate.sh) with the
// release's image, before any app gets it.
resource migrateJob 'Microsoft.App/jobs@2025-02-02-preview' = {
  name: 'caj-${name}-migrate'
  location: location
  tags: tags
  identity: {
    type: 'UserAssigned'
    userAssignedIdentities: { '${ids.migrate}': {} }
  }
  properties: {
    environmentId: environment.outputs.id
    workloadProfileName: 'Consumption'
    configuration: {
      triggerType: 'Manual'
      replicaTimeout: 1800
      replicaRetryLimit: 1
      manualTriggerConfig: { parallelism: 1, replicaCompletionCount: 1 }
      registries: [{ server: registryLoginServer, identity: ids.migrate }]
    }
    template: {
      containers: [
        {
          name: 'migrate'
          image: imageOf(images, imagesExist, 'admin-api', placeholderImage)
          args: ['migrate']
          env: migrateEnv
          resources: { cpu: json('0.5'), memory: '1Gi' }
        }
      ]
    }
  }
}

// Creates the services' PostgreSQL roles and grants (hooks/db-roles.sh), from inside the VNet,
// as the migrate identity (an Entra administrator). Run by the postprovision hook.
resource dbRolesJob 'Microsoft.App/jobs@2025-02-02-preview' = {
  name: 'caj-${name}-db-roles'
  location: location
  tags: tags
  identity: {
    type: 'UserAssigned'
    userAssignedIdentities: { '${ids.migrate}': {} }
  }
  properties: {
    environmentId: environment.outputs.id
    workloadProfileName: 'Consumption'
    configuration: {
      triggerType: 'Manual'
      replicaTimeout: 600
      replicaRetryLimit: 1
      manualTriggerConfig: { parallelism: 1, replicaCompletionCount: 1 }
    }
    template: {
      containers: [
        {
          name: 'db-roles'
          image: 'docker.io/library/postgres:16-alpine'
          command: ['/bin/sh', '-c', loadTextContent('../hooks/db-roles.sh')]
          env: [
            { name: 'PGHOST', value: postgresFqdn }
            { name: 'PGDATABASE', value: postgresDatabase }
            { name: 'PGUSER', value: names.migrate }
            { name: 'MIGRATE_CLIENT_ID', value: clientIds.migrate }
            {
              name: 'APP_ROLES'
              value: join(
                map(['admin-api', 'orchestrator', 'scheduler'], s => '${names[s]}:${identityPrincipalIds[s]}'),
                ','
              )
            }
            { name: 'DAPR_STATE_ROLE', value: '${names['dapr-state']}:${identityPrincipalIds['dapr-state']}' }
          ]
          resources: { cpu: json('0.25'), memory: '0.5Gi' }
        }
      ]
    }
  }
}

output environmentName string = environment.outputs.name
output adminApiName string = adminApi.outputs.name
output adminApiFqdn string = adminApi.outputs.fqdn
output migrateJobName string = migrateJob.name
output dbRolesJobName string = dbRolesJob.name
