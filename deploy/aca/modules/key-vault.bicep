// Stage 1: Key Vault for the worker's target-tenant certificate (000 "Secrets Management"): RBAC
// authorization (no access policies), soft delete 7 days, purge protection, firewall deny with
// the Azure services bypass, and a private endpoint. Nothing else needs a secret: PostgreSQL and
// Service Bus are passwordless, KEDA uses a managed identity.
param name string
param location string
param tags object
param privateEndpointsSubnetId string
param privateDnsZoneId string
@description('Public IPs allowed through the firewall (e.g. the operator importing the certificate); empty: private endpoint only.')
param allowedIpRanges array = []
@description('principalIds that read secrets (the worker: its PFX/PEM is the certificate\'s secret, read with getSecret).')
param secretReaderPrincipalIds array

var keyVaultSecretsUser = '4633458b-17de-408a-b874-0445c86b69e6'

resource vault 'Microsoft.KeyVault/vaults@2023-07-01' = {
  name: take('kv-${name}-${uniqueString(resourceGroup().id)}', 24) // at most 3 + 14 + 1 + 6
  location: location
  tags: tags
  properties: {
    tenantId: tenant().tenantId
    sku: { family: 'A', name: 'standard' }
    enableRbacAuthorization: true
    enableSoftDelete: true
    softDeleteRetentionInDays: 7
    enablePurgeProtection: true
    publicNetworkAccess: 'Enabled'
    networkAcls: {
      defaultAction: 'Deny'
      bypass: 'AzureServices'
      ipRules: [for range in allowedIpRanges: { value: range }]
    }
  }
}

module endpoint 'private-endpoint.bicep' = {
  name: 'pe-kv'
  params: {
    name: 'pe-${vault.name}'
    location: location
    tags: tags
    subnetId: privateEndpointsSubnetId
    targetResourceId: vault.id
    groupId: 'vault'
    privateDnsZoneId: privateDnsZoneId
  }
}

resource readers 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for principalId in secretReaderPrincipalIds: {
    scope: vault
    name: guid(vault.id, principalId, keyVaultSecretsUser)
    properties: {
      principalId: principalId
      principalType: 'ServicePrincipal'
      roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', keyVaultSecretsUser)
    }
  }
]

output name string = vault.name
output uri string = vault.properties.vaultUri
