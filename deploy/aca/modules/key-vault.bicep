// Stage 1: a Key Vault (000 "Secrets Management"): RBAC authorization (no access policies), soft
// delete 7 days, purge protection, firewall deny with the Azure services bypass, and a private
// endpoint. Two are deployed from this module (foundation.bicep), so that no identity reaches a
// secret it does not use: the worker's target-tenant certificate, and the webhook secrets key
// (the admin API creates and reads it, the orchestrator reads it). Nothing else needs a secret:
// PostgreSQL and Service Bus are passwordless, KEDA uses a managed identity.
param name string
@description('A value made anew each time the environment is created (the principal id of one of its managed identities): part of the vault\'s unique name.')
param nameSeed string
@description('First part of the vault name: kv (certificate), kvs (secrets key).')
param namePrefix string
param location string
param tags object
param privateEndpointsSubnetId string
param privateDnsZoneId string
@description('Public IPs allowed through the firewall (e.g. the operator importing the certificate); empty: private endpoint only.')
param allowedIpRanges array = []
@description('principalIds that read secrets (the worker: its PFX/PEM is the certificate\'s secret, read with getSecret; the orchestrator: the secrets key).')
param secretReaderPrincipalIds array
@description('principalIds that also create secret versions (the admin API: the secrets key on its first start).')
param secretOfficerPrincipalIds array = []

// Built-in role definition ids, https://learn.microsoft.com/azure/role-based-access-control/built-in-roles/security
// Key Vault Secrets User: read secret contents (getSecret, readMetadata: listing versions).
var keyVaultSecretsUser = '4633458b-17de-408a-b874-0445c86b69e6'
// Key Vault Secrets Officer: every action on secrets (setSecret: a new version), not on keys or certificates.
var keyVaultSecretsOfficer = 'b86a8fe4-44ce-4948-aee5-eccb2c155cd7'

// The name: prefix, environment name, then as much of a unique string as fits in 24 characters.
// The unique string includes nameSeed, a managed identity's principal id, so it changes whenever
// the environment is created again: with purge protection a deleted vault stays soft-deleted for
// the 7 retention days (it cannot be purged earlier) and keeps its name, so `azd down --purge` then
// `azd up` into the same resource group within 7 days would otherwise collide with it ("You
// cannot reuse the name of a key vault that has been soft-deleted until the retention period has
// passed": learn.microsoft.com/azure/key-vault/general/soft-delete-overview, "Soft-delete
// behavior", "Purge protection"). Recovering it instead (`createMode: 'recover'`) is
// not used: a deployment cannot tell a first creation from a re-creation, and recovery would bring
// back the old environment's secrets key, which the new database never used.
resource vault 'Microsoft.KeyVault/vaults@2023-07-01' = {
  name: take('${namePrefix}-${name}-${uniqueString(resourceGroup().id, nameSeed)}', 24)
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
  name: 'pe-${namePrefix}'
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

resource officers 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for principalId in secretOfficerPrincipalIds: {
    scope: vault
    name: guid(vault.id, principalId, keyVaultSecretsOfficer)
    properties: {
      principalId: principalId
      principalType: 'ServicePrincipal'
      roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', keyVaultSecretsOfficer)
    }
  }
]

output name string = vault.name
output uri string = vault.properties.vaultUri
