// One private endpoint in snet-private-endpoints and its DNS registration (000 "Private Endpoints").
param name string
param location string
param tags object
param subnetId string
@description('Resource the endpoint connects to.')
param targetResourceId string
@description('Sub-resource: namespace (Service Bus), vault (Key Vault), postgresqlServer (PostgreSQL flexible server).')
param groupId string
param privateDnsZoneId string

resource endpoint 'Microsoft.Network/privateEndpoints@2024-05-01' = {
  name: name
  location: location
  tags: tags
  properties: {
    subnet: { id: subnetId }
    privateLinkServiceConnections: [
      {
        name: name
        properties: {
          privateLinkServiceId: targetResourceId
          groupIds: [groupId]
        }
      }
    ]
  }
}

resource dnsGroup 'Microsoft.Network/privateEndpoints/privateDnsZoneGroups@2024-05-01' = {
  parent: endpoint
  name: 'default'
  properties: {
    privateDnsZoneConfigs: [
      {
        name: groupId
        properties: { privateDnsZoneId: privateDnsZoneId }
      }
    ]
  }
}

output id string = endpoint.id
