// Private endpoints (vnetEnabled) for the storage account's blob, queue and table services (the
// Functions host, Durable Functions and the deployment package) and for Cosmos DB's NoSQL API, each
// with the private DNS zone that resolves the service's usual name to its private address inside
// the network, so that the app's settings stay the public names.
param location string
param tags object
param networkName string
param subnetId string
param storageAccountName string
param cosmosAccountName string

resource network 'Microsoft.Network/virtualNetworks@2024-07-01' existing = {
  name: networkName
}

resource storage 'Microsoft.Storage/storageAccounts@2025-06-01' existing = {
  name: storageAccountName
}

resource cosmos 'Microsoft.DocumentDB/databaseAccounts@2025-10-15' existing = {
  name: cosmosAccountName
}

var endpoints = [
  { name: 'blob', groupId: 'blob', zone: 'privatelink.blob.${environment().suffixes.storage}' }
  { name: 'queue', groupId: 'queue', zone: 'privatelink.queue.${environment().suffixes.storage}' }
  { name: 'table', groupId: 'table', zone: 'privatelink.table.${environment().suffixes.storage}' }
  { name: 'cosmos', groupId: 'Sql', zone: 'privatelink.documents.azure.com' }
]

resource zones 'Microsoft.Network/privateDnsZones@2024-06-01' = [
  for endpoint in endpoints: {
    name: endpoint.zone
    location: 'global'
    tags: tags
  }
]

resource links 'Microsoft.Network/privateDnsZones/virtualNetworkLinks@2024-06-01' = [
  for (endpoint, i) in endpoints: {
    parent: zones[i]
    name: '${networkName}-link'
    location: 'global'
    tags: tags
    properties: {
      registrationEnabled: false
      virtualNetwork: { id: network.id }
    }
  }
]

resource privateEndpoints 'Microsoft.Network/privateEndpoints@2024-07-01' = [
  for endpoint in endpoints: {
    name: 'pe-${endpoint.name}-${networkName}'
    location: location
    tags: tags
    properties: {
      subnet: { id: subnetId }
      privateLinkServiceConnections: [
        {
          name: endpoint.name
          properties: { privateLinkServiceId: endpoint.groupId == 'Sql' ? cosmos.id : storage.id, groupIds: [endpoint.groupId] }
        }
      ]
    }
  }
]

resource dnsZoneGroups 'Microsoft.Network/privateEndpoints/privateDnsZoneGroups@2024-07-01' = [
  for (endpoint, i) in endpoints: {
    parent: privateEndpoints[i]
    name: 'default'
    properties: {
      privateDnsZoneConfigs: [{ name: endpoint.name, properties: { privateDnsZoneId: zones[i].id } }]
    }
  }
]
