// Stage 2 (000 "Component Resources", on Container Apps): the environment with its Dapr
// components, the four services of the one image, the migrate job and the db-roles job.
// Variables are exactly those the code reads (deploy/aca/aca-infrastructure.test.ts checks it).
param name string
param location string
param tags object
param foundation object
@description('Image per azd service name (azd records SERVICE_<NAME>_IMAGE_NAME after a deploy); empty or missing: the placeholder.')
param images object
@description('What a service runs before azd deployed it once.')
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

var ids = foundation.identityIds
var clientIds = foundation.identityClientIds
var names = foundation.identityNames
var workerAppId = 'matoolkit-worker'

module environment 'environment.bicep' = {
  name: 'environment'
  params: {
    name: name
    location: location
    tags: tags
    infrastructureSubnetId: foundation.containerAppsSubnetId
    logAnalyticsWorkspaceName: foundation.logAnalyticsWorkspaceName
    appInsightsName: foundation.appInsightsName
    internal: environmentInternal
    serviceBusFqdn: foundation.serviceBusFqdn
    postgresFqdn: foundation.postgresFqdn
    databaseName: foundation.postgresDatabase
    clientIds: clientIds
    daprStateRoleName: names['dapr-state']
    workerAppId: workerAppId
  }
}

// Passwordless PostgreSQL (deployment contract): the role is the identity's name, no password.
var databaseUrl = 'postgres://${foundation.postgresFqdn}:5432/${foundation.postgresDatabase}?sslmode=require'
func databaseUrlFor(role string, url string) string => replace(url, 'postgres://', 'postgres://${role}@')

// What every service sets: the aca preset, the app's pub/sub component, the data directory.
func daprEnv(service string, port int, level string) array => [
  { name: 'MATOOLKIT_RUNTIME', value: 'aca' }
  { name: 'MATOOLKIT_DAPR_APP_PORT', value: string(port) }
  { name: 'MATOOLKIT_DAPR_APP_HOST', value: '0.0.0.0' }
  { name: 'MATOOLKIT_DAPR_PUBSUB', value: 'matoolkit-pubsub-${service}' }
  { name: 'MATOOLKIT_DATA_DIR', value: '/data' }
  { name: 'LOG_LEVEL', value: level }
  { name: 'OTEL_SERVICE_NAME', value: 'matoolkit-${service}' }
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

var adminApiEnv = concat(
  daprEnv('admin-api', 3004, logLevel),
  sqlEnv(names['admin-api'], clientIds['admin-api'], databaseUrl),
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
  sqlEnv(names.orchestrator, clientIds.orchestrator, databaseUrl)
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
      { name: 'MATOOLKIT_KEY_VAULT_URL', value: foundation.keyVaultUri }
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

// The placeholder answers neither /healthz nor /readyz: probes and Dapr app health are on only
// for a real image, i.e. from the `azd provision` after the first deploy (deploy/README.md).
func imageOf(images object, service string, placeholder string) string =>
  empty(images[?service] ?? '') ? placeholder : images[service]

var common = {
  location: location
  tags: tags
  environmentId: environment.outputs.id
  registryServer: foundation.registryLoginServer
}

module adminApi 'container-app.bicep' = {
  name: 'app-admin-api'
  params: {
    ...common
    name: 'ca-${name}-admin-api'
    serviceName: 'admin-api'
    image: imageOf(images, 'admin-api', placeholderImage)
    probesEnabled: imageOf(images, 'admin-api', placeholderImage) != placeholderImage
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
    image: imageOf(images, 'orchestrator', placeholderImage)
    probesEnabled: imageOf(images, 'orchestrator', placeholderImage) != placeholderImage
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
    image: imageOf(images, 'scheduler', placeholderImage)
    probesEnabled: imageOf(images, 'scheduler', placeholderImage) != placeholderImage
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
    image: imageOf(images, 'worker', placeholderImage)
    probesEnabled: imageOf(images, 'worker', placeholderImage) != placeholderImage
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
            namespace: foundation.serviceBusName
            topicName: 'worker-jobs'
            subscriptionName: workerAppId
            messageCount: string(workerMessagesPerReplica)
          }
        }
      }
    ]
  }
}

// `matoolkit migrate`, started by the azd hook (deploy/aca/hooks/migrate.sh) once per deploy.
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
      registries: [{ server: foundation.registryLoginServer, identity: ids.migrate }]
    }
    template: {
      containers: [
        {
          name: 'migrate'
          image: imageOf(images, 'admin-api', placeholderImage)
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
            { name: 'PGHOST', value: foundation.postgresFqdn }
            { name: 'PGDATABASE', value: foundation.postgresDatabase }
            { name: 'PGUSER', value: names.migrate }
            { name: 'MIGRATE_CLIENT_ID', value: clientIds.migrate }
            {
              name: 'APP_ROLES'
              value: join(
                map(['admin-api', 'orchestrator', 'scheduler'], s => '${names[s]}:${foundation.identityPrincipalIds[s]}'),
                ','
              )
            }
            { name: 'DAPR_STATE_ROLE', value: '${names['dapr-state']}:${foundation.identityPrincipalIds['dapr-state']}' }
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
