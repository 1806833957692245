// Stage 2: the Container Apps environment (VNet-integrated, workload profiles) and the Dapr
// components in Container Apps' schema (componentType, version, metadata, scopes), the same
// types, versions and metadata fields as components/azure/*.yaml. Differences, on purpose:
// - one pub/sub component per app (matoolkit-pubsub-<service>, named by MATOOLKIT_DAPR_PUBSUB),
//   each authenticating as its own app's identity: a component carries a single azureClientId,
//   and per-app components are what lets each identity hold only its own Service Bus roles;
// - disableEntityManagement "true": service-bus.bicep creates every topic and subscription;
// - one state store, matoolkit-state, for every app, as the dapr-state identity (a PostgreSQL
//   role limited to the dapr_* tables).
param name string
param location string
param tags object
param infrastructureSubnetId string
param logAnalyticsWorkspaceName string
param appInsightsName string
@description('true: no public ingress at all (000: internal when VNet-integrated); the admin API then needs a gateway in the VNet.')
param internal bool = false
param serviceBusFqdn string
param postgresFqdn string
param databaseName string
@description('Client id per identity (identities.bicep).')
param clientIds object
param daprStateRoleName string
param workerAppId string

resource workspace 'Microsoft.OperationalInsights/workspaces@2022-10-01' existing = {
  name: logAnalyticsWorkspaceName
}

resource appInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: appInsightsName
}

resource environment 'Microsoft.App/managedEnvironments@2025-02-02-preview' = {
  name: 'cae-${name}'
  location: location
  tags: tags
  properties: {
    vnetConfiguration: {
      infrastructureSubnetId: infrastructureSubnetId
      internal: internal
    }
    workloadProfiles: [{ name: 'Consumption', workloadProfileType: 'Consumption' }]
    appLogsConfiguration: {
      destination: 'log-analytics'
      logAnalyticsConfiguration: {
        customerId: workspace.properties.customerId
        sharedKey: workspace.listKeys().primarySharedKey
      }
    }
    // Dapr sidecars' traces and the managed OpenTelemetry agent's, to Application Insights.
    daprAIConnectionString: appInsights.properties.ConnectionString
    appInsightsConfiguration: { connectionString: appInsights.properties.ConnectionString }
    openTelemetryConfiguration: {
      tracesConfiguration: { destinations: ['appInsights'] }
    }
  }
}

var pubsubOwners = [
  { service: 'admin-api', appId: 'matoolkit-admin-api' }
  { service: 'orchestrator', appId: 'matoolkit-orchestrator' }
  { service: 'scheduler', appId: 'matoolkit-scheduler' }
  { service: 'worker', appId: workerAppId }
]

resource pubsub 'Microsoft.App/managedEnvironments/daprComponents@2025-02-02-preview' = [
  for owner in pubsubOwners: {
    parent: environment
    name: 'matoolkit-pubsub-${owner.service}'
    properties: {
      componentType: 'pubsub.azure.servicebus.topics'
      version: 'v1'
      metadata: [
        { name: 'namespaceName', value: serviceBusFqdn }
        { name: 'azureClientId', value: clientIds[owner.service] }
        { name: 'disableEntityManagement', value: 'true' }
        { name: 'maxDeliveryCount', value: '10' }
        { name: 'lockDurationInSec', value: '60' }
        { name: 'defaultMessageTimeToLiveInSec', value: '1209600' }
        { name: 'lockRenewalInSec', value: '20' }
        { name: 'handlerTimeoutInSec', value: '300' }
      ]
      scopes: [owner.appId]
    }
  }
]

resource state 'Microsoft.App/managedEnvironments/daprComponents@2025-02-02-preview' = {
  parent: environment
  name: 'matoolkit-state'
  properties: {
    componentType: 'state.postgresql'
    version: 'v2'
    metadata: [
      { name: 'useAzureAD', value: 'true' }
      {
        name: 'connectionString'
        value: 'host=${postgresFqdn} user=${daprStateRoleName} port=5432 database=${databaseName} sslmode=require'
      }
      { name: 'azureClientId', value: clientIds['dapr-state'] }
      { name: 'tablePrefix', value: 'dapr_' }
      { name: 'metadataTableName', value: 'dapr_metadata' }
      { name: 'actorStateStore', value: 'true' }
    ]
    scopes: [
      'matoolkit-orchestrator'
      workerAppId
      'matoolkit-scheduler'
      'matoolkit-admin-api'
    ]
  }
}

output id string = environment.id
output name string = environment.name
output defaultDomain string = environment.properties.defaultDomain
