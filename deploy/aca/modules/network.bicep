// Stage 1: the virtual network, its two subnets and the private DNS zones the private endpoints
// register in (spec 000 "Network", "Private DNS Zones", adapted: one Container Apps subnet
// replaces the three Function App subnets).
param name string
param location string
param tags object
@description('Address space of the VNet (000: 10.0.0.0/16).')
param addressPrefix string = '10.0.0.0/16'
@description('Container Apps environment infrastructure subnet: /23 or larger for a workload-profiles environment is recommended (000: snet-cloud-worker 10.0.4.0/23).')
param containerAppsSubnetPrefix string = '10.0.4.0/23'
@description('Private endpoints subnet (000: snet-private-endpoints 10.0.10.0/24).')
param privateEndpointsSubnetPrefix string = '10.0.10.0/24'
@description('Zones to create and link; one per private-endpoint target.')
param privateDnsZoneNames array

resource vnet 'Microsoft.Network/virtualNetworks@2024-05-01' = {
  name: 'vnet-${name}'
  location: location
  tags: tags
  properties: {
    addressSpace: { addressPrefixes: [addressPrefix] }
    subnets: [
      {
        name: 'snet-container-apps'
        properties: {
          addressPrefix: containerAppsSubnetPrefix
          // A workload-profiles environment requires its subnet delegated to Microsoft.App/environments.
          delegations: [
            {
              name: 'Microsoft.App.environments'
              properties: { serviceName: 'Microsoft.App/environments' }
            }
          ]
        }
      }
      {
        name: 'snet-private-endpoints'
        properties: {
          addressPrefix: privateEndpointsSubnetPrefix
          privateEndpointNetworkPolicies: 'Disabled'
        }
      }
    ]
  }
}

resource zones 'Microsoft.Network/privateDnsZones@2020-06-01' = [
  for zone in privateDnsZoneNames: {
    name: zone
    location: 'global'
    tags: tags
  }
]

resource links 'Microsoft.Network/privateDnsZones/virtualNetworkLinks@2020-06-01' = [
  for (zone, i) in privateDnsZoneNames: {
    parent: zones[i]
    name: 'link-${vnet.name}'
    location: 'global'
    properties: {
      registrationEnabled: false
      virtualNetwork: { id: vnet.id }
    }
  }
]

output vnetId string = vnet.id
output containerAppsSubnetId string = '${vnet.id}/subnets/snet-container-apps'
output privateEndpointsSubnetId string = '${vnet.id}/subnets/snet-private-endpoints'
output privateDnsZoneIds array = [for (zone, i) in privateDnsZoneNames: zones[i].id]
