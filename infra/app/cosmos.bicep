// Cosmos DB for NoSQL, Entra ID only (disableLocalAuth), session consistency, continuous
// backup; the database, the containers of ../containers.json (the same file the app's local
// provisioning reads), their stored procedures and trigger, and least-privilege data access.
param accountName string
param location string
param tags object

@allowed(['serverless', 'autoscale'])
param throughputMode string
param autoscaleMaxThroughput int

@description('Principal id of the Function App identity.')
param appPrincipalId string

@description('Optional principal id of the deploying user (Data Contributor, for local runs).')
param userPrincipalId string = ''
@description('With the private network: reachable through its private endpoint, and from these addresses only (a developer\'s, for local runs), none by default.')
param vnetEnabled bool
param allowedIpAddresses array = []

var definitions = loadJsonContent('../containers.json')

resource account 'Microsoft.DocumentDB/databaseAccounts@2025-10-15' = {
  name: accountName
  location: location
  tags: tags
  kind: 'GlobalDocumentDB'
  properties: {
    databaseAccountOfferType: 'Standard'
    disableLocalAuth: true
    disableKeyBasedMetadataWriteAccess: true
    consistencyPolicy: { defaultConsistencyLevel: 'Session' }
    locations: [{ locationName: location, failoverPriority: 0, isZoneRedundant: false }]
    // Full-text search (the posts' full-text policy and indexes, GET /api/search) needs its capability on the account.
    capabilities: concat([{ name: 'EnableNoSQLFullTextSearch' }], throughputMode == 'serverless' ? [{ name: 'EnableServerless' }] : [])
    backupPolicy: {
      type: 'Continuous'
      continuousModeProperties: { tier: 'Continuous7Days' }
    }
    minimalTlsVersion: 'Tls12'
    // Priority-based execution: when a partition runs out of request units, the background's
    // requests (sent as low priority, src/store/priority.ts) are throttled before the API's.
    enablePriorityBasedExecution: true
    defaultPriorityLevel: 'High'
    publicNetworkAccess: vnetEnabled && empty(allowedIpAddresses) ? 'Disabled' : 'Enabled'
    ipRules: vnetEnabled ? map(allowedIpAddresses, address => { ipAddressOrRange: address }) : []
  }
}

resource database 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases@2025-10-15' = {
  parent: account
  name: definitions.databaseName
  properties: {
    resource: { id: definitions.databaseName }
    // Autoscale throughput shared by all containers; serverless accounts take no throughput.
    options: throughputMode == 'autoscale' ? { autoscaleSettings: { maxThroughput: autoscaleMaxThroughput } } : {}
  }
}

// One module per container of containers.json: the container and its scripts.
module containers 'cosmos-container.bicep' = [
  for c in definitions.containers: {
    name: 'cosmos-container-${c.name}'
    params: {
      accountName: account.name
      databaseName: database.name
      definition: c
    }
  }
]

// Only what the app does: read metadata, items CRUD, queries, change feed, stored procedures.
resource appDataRole 'Microsoft.DocumentDB/databaseAccounts/sqlRoleDefinitions@2025-10-15' = {
  parent: account
  name: guid(account.id, 'blog-app-data-access')
  properties: {
    roleName: 'Blog app data access'
    type: 'CustomRole'
    assignableScopes: [account.id]
    permissions: [
      {
        dataActions: [
          'Microsoft.DocumentDB/databaseAccounts/readMetadata'
          'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers/items/create'
          'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers/items/read'
          'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers/items/replace'
          'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers/items/upsert'
          'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers/items/delete'
          'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers/executeQuery'
          'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers/readChangeFeed'
          'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers/executeStoredProcedure'
        ]
      }
    ]
  }
}

resource appDataAccess 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2025-10-15' = {
  parent: account
  name: guid(account.id, appPrincipalId, appDataRole.id)
  properties: {
    roleDefinitionId: appDataRole.id
    principalId: appPrincipalId
    scope: '${account.id}/dbs/${database.name}'
  }
}

// Built-in Cosmos DB Data Contributor for the deploying user, if one was given. After the app's
// assignment: the resource provider rejects concurrent role assignment writes on one account (412).
resource userDataAccess 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2025-10-15' = if (!empty(userPrincipalId)) {
  parent: account
  name: guid(account.id, userPrincipalId, '00000000-0000-0000-0000-000000000002')
  dependsOn: [appDataAccess]
  properties: {
    roleDefinitionId: '${account.id}/sqlRoleDefinitions/00000000-0000-0000-0000-000000000002'
    principalId: userPrincipalId
    scope: account.id
  }
}

output endpoint string = account.properties.documentEndpoint
output accountName string = account.name
