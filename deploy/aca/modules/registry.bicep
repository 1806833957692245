// Stage 1: the container registry azd pushes the image to (000: Basic; pulls go over the Azure
// backbone, not the VNet: a private registry needs Premium). No admin user: apps pull with
// their managed identity (AcrPull on this registry only).
param name string
param location string
param tags object
@description('principalId of each identity that pulls images.')
param pullerPrincipalIds array

var acrPull = '7f951dda-4ed3-4680-a7ca-43fe172d538d'

resource registry 'Microsoft.ContainerRegistry/registries@2025-11-01' = {
  name: replace('cr${name}${uniqueString(resourceGroup().id)}', '-', '')
  location: location
  tags: tags
  sku: { name: 'Basic' }
  properties: {
    adminUserEnabled: false
  }
}

resource pull 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for principalId in pullerPrincipalIds: {
    scope: registry
    name: guid(registry.id, principalId, acrPull)
    properties: {
      principalId: principalId
      principalType: 'ServicePrincipal'
      roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', acrPull)
    }
  }
]

output name string = registry.name
output loginServer string = registry.properties.loginServer
