// One container of ../containers.json with its stored procedures and triggers.
param accountName string
param databaseName string

@description('One entry of containers.json: name, partitionKeyPath, indexingPolicy, defaultTtl?, fullTextPolicy?, storedProcedures, triggers.')
param definition object

// loadTextContent needs literal paths: one entry per script declared in containers.json.
var scriptBodies = {
  createComment: loadTextContent('../../sprocs/createComment.js')
  changeLikes: loadTextContent('../../sprocs/changeLikes.js')
  updateUsernames: loadTextContent('../../sprocs/updateUsernames.js')
  deletePost: loadTextContent('../../sprocs/deletePost.js')
  eraseWriter: loadTextContent('../../sprocs/eraseWriter.js')
  truncateFeed: loadTextContent('../../sprocs/truncateFeed.js')
}

resource account 'Microsoft.DocumentDB/databaseAccounts@2025-10-15' existing = {
  name: accountName
}

resource database 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases@2025-10-15' existing = {
  parent: account
  name: databaseName
}

resource container 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2025-10-15' = {
  parent: database
  name: definition.name
  properties: {
    resource: union(
      {
        id: definition.name
        partitionKey: { paths: [definition.partitionKeyPath], kind: 'Hash', version: 2 }
        indexingPolicy: definition.indexingPolicy
      },
      contains(definition, 'defaultTtl') ? { defaultTtl: definition.defaultTtl } : {},
      // What is tokenized for full-text search, and in which language (the posts' title and content).
      contains(definition, 'fullTextPolicy') ? { fullTextPolicy: definition.fullTextPolicy } : {}
    )
  }
}

resource storedProcedures 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers/storedProcedures@2025-10-15' = [
  for name in definition.storedProcedures: {
    parent: container
    name: name
    properties: {
      resource: { id: name, body: scriptBodies[name] }
    }
  }
]

resource triggers 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers/triggers@2025-10-15' = [
  for trigger in definition.triggers: {
    parent: container
    name: trigger.name
    properties: {
      resource: { id: trigger.name, body: scriptBodies[trigger.name], triggerType: trigger.triggerType, triggerOperation: trigger.triggerOperation }
    }
  }
]
