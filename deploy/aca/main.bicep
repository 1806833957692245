// matoolkit on Azure Container Apps (azd: azure.yaml at the repository root, `azd up`).
// Two stages, as spec 000 "Deployment Topology": stage 1 (modules/foundation.bicep) is the shared
// infrastructure (identities, network, private DNS, monitoring, registry, Key Vault, Service Bus,
// PostgreSQL), stage 2 (modules/apps.bicep) the Container Apps environment with its Dapr
// components, the four services, the migrate and db-roles jobs. Both run in one deployment here;
// either module can also be deployed on its own at resource-group scope.
targetScope = 'subscription'

@minLength(1)
@maxLength(14)
@description('azd environment name (AZURE_ENV_NAME): prefix of every resource name (14 characters at most: container app names are limited to 32).')
param environmentName string
@description('Azure region (AZURE_LOCATION).')
param location string
@description('Object id of the deployer (azd sets AZURE_PRINCIPAL_ID): PostgreSQL Entra administrator.')
param principalId string
@description('Name of that principal as PostgreSQL knows it: the UPN of a user, the display name of a group.')
param principalName string
@allowed(['User', 'Group', 'ServicePrincipal'])
param principalType string = 'User'

@description('Standard (public endpoint, Entra-only) or Premium (private endpoint, required for a fully private network).')
@allowed(['Standard', 'Premium'])
param serviceBusSku string = 'Premium'
param postgresSkuName string = 'Standard_D2ds_v5'
@allowed(['Burstable', 'GeneralPurpose', 'MemoryOptimized'])
param postgresSkuTier string = 'GeneralPurpose'
param postgresHighAvailability bool = false
param keyVaultAllowedIpRanges array = []
param environmentInternal bool = false

@description('Image per azd service (admin-api, orchestrator, scheduler, worker) once azd deployed it; a re-provision keeps it. Missing: the placeholder.')
param serviceImages object = {}
@description('Per azd service: \'true\' when its container app exists (azd sets SERVICE_<NAME>_RESOURCE_EXISTS before each provision); otherwise its recorded image is not used.')
param serviceImagesExist object = {}
@description('The worker pool\'s WorkerId (MATOOLKIT_WORKER_ID) and subscription filter.')
param workerId string = 'worker-01'
param workerMaxReplicas int = 10
param workerConcurrency int = 4
param workerMessagesPerReplica int = 8
@description('Entra tenant of the admin API app registration; default: this deployment\'s tenant.')
param adminApiTenantId string = tenant().tenantId
@description('Application (client) id of the admin API app registration (deploy/README.md: create it first).')
param adminApiClientId string
@description('none: diagnostic functions only; entra: the target tenant with the Key Vault certificate.')
@allowed(['none', 'entra'])
param tenantMode string = 'none'
param targetTenantId string = ''
param targetClientId string = ''
param targetCertificateName string = 'matoolkit-worker'
@description('Azure Monitor log alerts of the alert conditions (modules/alerts.bicep, generated; docs/observability.md "Alerts").')
param alertsEnabled bool = false
@description('Action groups the alerts notify (resource ids); empty: the portal only.')
param alertActionGroupIds array = []
@allowed(['fatal', 'error', 'warn', 'info', 'debug', 'trace'])
param logLevel string = 'info'

var name = toLower(environmentName)
// What an app runs until its first deploy (modules/container-app.bicep: no Dapr, probes or
// command); hooks/migrate.sh finds the apps still running it.
var placeholderImage = 'mcr.microsoft.com/k8se/quickstart:latest'
var tags = { 'azd-env-name': environmentName, application: 'matoolkit' }

resource group 'Microsoft.Resources/resourceGroups@2024-11-01' = {
  name: 'rg-${name}'
  location: location
  tags: tags
}

module foundation 'modules/foundation.bicep' = {
  scope: group
  name: 'stage1-foundation'
  params: {
    name: name
    location: location
    tags: tags
    workerId: workerId
    serviceBusSku: serviceBusSku
    postgresSkuName: postgresSkuName
    postgresSkuTier: postgresSkuTier
    postgresHighAvailability: postgresHighAvailability
    deployerPrincipalId: principalId
    deployerPrincipalName: principalName
    deployerPrincipalType: principalType
    keyVaultAllowedIpRanges: keyVaultAllowedIpRanges
  }
}

module apps 'modules/apps.bicep' = {
  scope: group
  name: 'stage2-apps'
  params: {
    name: name
    location: location
    tags: tags
    // Each output on its own: a module's whole `outputs` object compiles to
    // reference(...).outputs, whose entries are {type, value} wrappers (Azure/bicep#16792, #13947).
    identityIds: foundation.outputs.identityIds
    identityClientIds: foundation.outputs.identityClientIds
    identityPrincipalIds: foundation.outputs.identityPrincipalIds
    identityNames: foundation.outputs.identityNames
    containerAppsSubnetId: foundation.outputs.containerAppsSubnetId
    logAnalyticsWorkspaceName: foundation.outputs.logAnalyticsWorkspaceName
    appInsightsName: foundation.outputs.appInsightsName
    registryLoginServer: foundation.outputs.registryLoginServer
    keyVaultUri: foundation.outputs.keyVaultUri
    secretsKeyVaultUri: foundation.outputs.secretsKeyVaultUri
    serviceBusName: foundation.outputs.serviceBusName
    serviceBusFqdn: foundation.outputs.serviceBusFqdn
    postgresFqdn: foundation.outputs.postgresFqdn
    postgresDatabase: foundation.outputs.postgresDatabase
    images: serviceImages
    imagesExist: serviceImagesExist
    placeholderImage: placeholderImage
    workerId: workerId
    workerMaxReplicas: workerMaxReplicas
    workerConcurrency: workerConcurrency
    workerMessagesPerReplica: workerMessagesPerReplica
    adminApiTenantId: adminApiTenantId
    adminApiClientId: adminApiClientId
    tenantMode: tenantMode
    targetTenantId: targetTenantId
    targetClientId: targetClientId
    targetCertificateName: targetCertificateName
    logLevel: logLevel
    environmentInternal: environmentInternal
  }
}

// Generated from libs/domain/src/alerts/definitions.ts (npm run alerts:generate).
module alerts 'modules/alerts.bicep' = if (alertsEnabled) {
  scope: group
  name: 'alerts'
  params: {
    name: name
    location: location
    tags: tags
    workspaceId: foundation.outputs.logAnalyticsWorkspaceId
    actionGroupIds: alertActionGroupIds
  }
}

// azd reads these into the environment (.azure/<env>/.env); the hooks use them.
output AZURE_RESOURCE_GROUP string = group.name
output AZURE_CONTAINER_REGISTRY_ENDPOINT string = foundation.outputs.registryLoginServer
output AZURE_CONTAINER_REGISTRY_NAME string = foundation.outputs.registryName
output AZURE_CONTAINER_APPS_ENVIRONMENT_NAME string = apps.outputs.environmentName
output AZURE_KEY_VAULT_NAME string = foundation.outputs.keyVaultName
// The vault of the webhook secrets key (deploy/README.md: rotation is a new version there).
output AZURE_SECRETS_KEY_VAULT_NAME string = foundation.outputs.secretsKeyVaultName
output AZURE_SERVICE_BUS_NAMESPACE string = foundation.outputs.serviceBusName
output AZURE_POSTGRES_SERVER string = foundation.outputs.postgresFqdn
output ADMIN_API_APP_NAME string = apps.outputs.adminApiName
output MIGRATE_JOB_NAME string = apps.outputs.migrateJobName
output DB_ROLES_JOB_NAME string = apps.outputs.dbRolesJobName
output AZURE_PLACEHOLDER_IMAGE string = placeholderImage
output MATOOLKIT_API_URL string = 'https://${apps.outputs.adminApiFqdn}'
