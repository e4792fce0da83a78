// The private network (vnetEnabled): a virtual network with a subnet the Function App integrates
// with (delegated to Microsoft.App/environments, as Flex Consumption requires) and one for the
// private endpoints of Storage and Cosmos DB, which private-endpoints.bicep makes.
param name string
param location string
param tags object

resource network 'Microsoft.Network/virtualNetworks@2024-07-01' = {
  name: name
  location: location
  tags: tags
  properties: {
    addressSpace: { addressPrefixes: ['10.0.0.0/16'] }
    subnets: [
      {
        name: 'app'
        properties: {
          addressPrefix: '10.0.1.0/24'
          delegations: [{ name: 'flex-consumption', properties: { serviceName: 'Microsoft.App/environments' } }]
        }
      }
      {
        name: 'private-endpoints'
        properties: {
          addressPrefix: '10.0.2.0/24'
          privateEndpointNetworkPolicies: 'Disabled'
        }
      }
    ]
  }
}

output name string = network.name
output appSubnetId string = resourceId('Microsoft.Network/virtualNetworks/subnets', network.name, 'app')
output privateEndpointSubnetId string = resourceId('Microsoft.Network/virtualNetworks/subnets', network.name, 'private-endpoints')
