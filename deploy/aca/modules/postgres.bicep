// Stage 1: Azure Database for PostgreSQL flexible server with Microsoft Entra authentication only
// (no password exists anywhere), reached through a private endpoint (not VNet injection: a
// private endpoint keeps the server out of a delegated subnet and uses the same pattern as Key
// Vault and Service Bus). Entra administrators: the deployer (for break-glass and the role
// bootstrap) and the migration job's identity, which owns the schema. The services' identities are
// ordinary roles created by the db-roles job (deploy/aca/hooks/db-roles.sh), not administrators.
param name string
param location string
param tags object
param privateEndpointsSubnetId string
param privateDnsZoneId string
@description('Compute SKU, e.g. Standard_B1ms (Burstable) or Standard_D2ds_v5 (GeneralPurpose).')
param skuName string
@allowed(['Burstable', 'GeneralPurpose', 'MemoryOptimized'])
param skuTier string
param storageSizeGB int = 32
param highAvailability bool = false
param databaseName string = 'matoolkit'
@description('Object id of the deploying user or group (azd: AZURE_PRINCIPAL_ID).')
param deployerPrincipalId string
@description('Display name / UPN of the deployer, as the administrator\'s PostgreSQL role name.')
param deployerPrincipalName string
@allowed(['User', 'Group', 'ServicePrincipal'])
param deployerPrincipalType string = 'User'
param migratePrincipalId string
param migrateIdentityName string

resource server 'Microsoft.DBforPostgreSQL/flexibleServers@2024-08-01' = {
  name: 'psql-${name}-${uniqueString(resourceGroup().id)}'
  location: location
  tags: tags
  sku: { name: skuName, tier: skuTier }
  properties: {
    version: '16'
    storage: { storageSizeGB: storageSizeGB }
    authConfig: {
      activeDirectoryAuth: 'Enabled'
      passwordAuth: 'Disabled'
      tenantId: tenant().tenantId
    }
    network: { publicNetworkAccess: 'Disabled' }
    highAvailability: { mode: highAvailability ? 'ZoneRedundant' : 'Disabled' }
    backup: { backupRetentionDays: 7, geoRedundantBackup: 'Disabled' }
  }
}

// The Entra administrators first, one at a time (the service refuses concurrent changes), then
// the database: one created before any Entra administrator exists is owned by azuresu (the
// service's superuser), which the administrators cannot take it from ("add explicit dependencies ... to ensure that
// Microsoft Entra authentication is turned on before you create any user databases":
// learn.microsoft.com/azure/postgresql/security/security-entra-concepts, "Limitations and
// considerations"). hooks/db-roles.sh then makes the migrate role its owner.
resource deployerAdmin 'Microsoft.DBforPostgreSQL/flexibleServers/administrators@2024-08-01' = {
  parent: server
  name: deployerPrincipalId
  properties: {
    principalType: deployerPrincipalType
    principalName: deployerPrincipalName
    tenantId: tenant().tenantId
  }
}

resource migrateAdmin 'Microsoft.DBforPostgreSQL/flexibleServers/administrators@2024-08-01' = {
  parent: server
  name: migratePrincipalId
  properties: {
    principalType: 'ServicePrincipal'
    principalName: migrateIdentityName
    tenantId: tenant().tenantId
  }
  dependsOn: [deployerAdmin]
}

resource database 'Microsoft.DBforPostgreSQL/flexibleServers/databases@2024-08-01' = {
  parent: server
  name: databaseName
  properties: { charset: 'UTF8', collation: 'en_US.utf8' }
  dependsOn: [migrateAdmin]
}

module endpoint 'private-endpoint.bicep' = {
  name: 'pe-psql'
  params: {
    name: 'pe-${server.name}'
    location: location
    tags: tags
    subnetId: privateEndpointsSubnetId
    targetResourceId: server.id
    groupId: 'postgresqlServer'
    privateDnsZoneId: privateDnsZoneId
  }
}

output name string = server.name
output fqdn string = server.properties.fullyQualifiedDomainName
output databaseName string = database.name
