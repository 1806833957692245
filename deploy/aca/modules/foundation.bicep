// Stage 1 (000 "Shared Resources"): identities, network and private DNS, monitoring, registry,
// Key Vaults (the worker's certificate; the webhook secrets key), Service Bus, PostgreSQL. Stage 2 (apps.bicep) consumes its outputs.
param name string
param location string
param tags object
param workerId string
param serviceBusSku string
param postgresSkuName string
param postgresSkuTier string
param postgresHighAvailability bool
param deployerPrincipalId string
param deployerPrincipalName string
param deployerPrincipalType string
param keyVaultAllowedIpRanges array

var zoneNames = {
  serviceBus: 'privatelink.servicebus.windows.net'
  keyVault: 'privatelink.vaultcore.azure.net'
  postgres: 'privatelink.postgres.database.azure.com'
}

module identities 'identities.bicep' = {
  name: 'identities'
  params: { name: name, location: location, tags: tags }
}

// By role (admin-api, orchestrator, scheduler, worker, dapr-state, migrate, scaler).
var idOf = toObject(identities.outputs.identities, e => e.role, e => e.id)
var clientIdOf = toObject(identities.outputs.identities, e => e.role, e => e.clientId)
var principalIdOf = toObject(identities.outputs.identities, e => e.role, e => e.principalId)
var nameOf = toObject(identities.outputs.identities, e => e.role, e => e.name)

module network 'network.bicep' = {
  name: 'network'
  params: {
    name: name
    location: location
    tags: tags
    privateDnsZoneNames: [zoneNames.serviceBus, zoneNames.keyVault, zoneNames.postgres]
  }
}

module monitoring 'monitoring.bicep' = {
  name: 'monitoring'
  params: { name: name, location: location, tags: tags }
}

module registry 'registry.bicep' = {
  name: 'registry'
  params: {
    name: name
    location: location
    tags: tags
    pullerPrincipalIds: [
      principalIdOf['admin-api']
      principalIdOf.orchestrator
      principalIdOf.scheduler
      principalIdOf.worker
      principalIdOf.migrate
    ]
  }
}

module keyVault 'key-vault.bicep' = {
  name: 'key-vault'
  params: {
    name: name
    // A new principal id each time the environment is created: a new vault name (key-vault.bicep).
    nameSeed: principalIdOf.migrate
    namePrefix: 'kv'
    location: location
    tags: tags
    privateEndpointsSubnetId: network.outputs.privateEndpointsSubnetId
    privateDnsZoneId: network.outputs.privateDnsZoneIds[1]
    allowedIpRanges: keyVaultAllowedIpRanges
    secretReaderPrincipalIds: [principalIdOf.worker]
  }
}

// The webhook secrets key: a secret that the admin API creates on its first
// start (32 random bytes; never generated here, where each deployment would replace it) and that
// rotates by adding a version. Its own vault: the admin API may write it, not the certificate.
module secretsKeyVault 'key-vault.bicep' = {
  name: 'secrets-key-vault'
  params: {
    name: name
    // A new principal id each time the environment is created: a new vault name (key-vault.bicep).
    nameSeed: principalIdOf.migrate
    namePrefix: 'kvs'
    location: location
    tags: tags
    privateEndpointsSubnetId: network.outputs.privateEndpointsSubnetId
    privateDnsZoneId: network.outputs.privateDnsZoneIds[1]
    allowedIpRanges: keyVaultAllowedIpRanges
    secretReaderPrincipalIds: [principalIdOf.orchestrator]
    secretOfficerPrincipalIds: [principalIdOf['admin-api']]
  }
}

module serviceBus 'service-bus.bicep' = {
  name: 'service-bus'
  params: {
    name: name
    location: location
    tags: tags
    sku: serviceBusSku
    privateEndpointsSubnetId: network.outputs.privateEndpointsSubnetId
    privateDnsZoneId: network.outputs.privateDnsZoneIds[0]
    workerId: workerId
    principalIds: {
      'admin-api': principalIdOf['admin-api']
      orchestrator: principalIdOf.orchestrator
      scheduler: principalIdOf.scheduler
      worker: principalIdOf.worker
      scaler: principalIdOf.scaler
    }
  }
}

module postgres 'postgres.bicep' = {
  name: 'postgres'
  params: {
    name: name
    location: location
    tags: tags
    privateEndpointsSubnetId: network.outputs.privateEndpointsSubnetId
    privateDnsZoneId: network.outputs.privateDnsZoneIds[2]
    skuName: postgresSkuName
    skuTier: postgresSkuTier
    highAvailability: postgresHighAvailability
    deployerPrincipalId: deployerPrincipalId
    deployerPrincipalName: deployerPrincipalName
    deployerPrincipalType: deployerPrincipalType
    migratePrincipalId: principalIdOf.migrate
    migrateIdentityName: nameOf.migrate
  }
}

output identityIds object = idOf
output identityClientIds object = clientIdOf
output identityPrincipalIds object = principalIdOf
output identityNames object = nameOf
output containerAppsSubnetId string = network.outputs.containerAppsSubnetId
output logAnalyticsWorkspaceName string = monitoring.outputs.workspaceName
output logAnalyticsWorkspaceId string = monitoring.outputs.workspaceId
output appInsightsName string = monitoring.outputs.appInsightsName
output registryName string = registry.outputs.name
output registryLoginServer string = registry.outputs.loginServer
output keyVaultName string = keyVault.outputs.name
output keyVaultUri string = keyVault.outputs.uri
output secretsKeyVaultName string = secretsKeyVault.outputs.name
output secretsKeyVaultUri string = secretsKeyVault.outputs.uri
output serviceBusName string = serviceBus.outputs.name
output serviceBusFqdn string = serviceBus.outputs.fqdn
output postgresName string = postgres.outputs.name
output postgresFqdn string = postgres.outputs.fqdn
output postgresDatabase string = postgres.outputs.databaseName
