// The Function App on Flex Consumption (Node.js 22), running as the user-assigned identity.
// Every connection is identity-based: no keys or connection strings in its settings.
param name string
param planName string
param location string
param tags object
param identityId string
param identityClientId string
param storageAccountName string
param deploymentContainerName string
param applicationInsightsName string
@description('App settings of the blog backend (Cosmos DB endpoint, auth, ...).')
param appSettings object
@description('Origins browsers may call the API from (the platform answers CORS preflights).')
param corsAllowedOrigins array = []
@description('The subnet the app integrates with (vnetEnabled), through which it reaches Storage and Cosmos DB; empty: none.')
param subnetId string = ''

resource storage 'Microsoft.Storage/storageAccounts@2025-06-01' existing = {
  name: storageAccountName
}

resource applicationInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: applicationInsightsName
}

resource plan 'Microsoft.Web/serverfarms@2025-03-01' = {
  name: planName
  location: location
  tags: tags
  kind: 'functionapp'
  sku: { name: 'FC1', tier: 'FlexConsumption' }
  properties: { reserved: true }
}

var hostSettings = {
  // Functions host and Durable Functions state, through the managed identity.
  AzureWebJobsStorage__credential: 'managedidentity'
  AzureWebJobsStorage__clientId: identityClientId
  AzureWebJobsStorage__blobServiceUri: storage.properties.primaryEndpoints.blob
  AzureWebJobsStorage__queueServiceUri: storage.properties.primaryEndpoints.queue
  AzureWebJobsStorage__tableServiceUri: storage.properties.primaryEndpoints.table
  // Application Insights accepts only Entra ID tokens (local auth is disabled on the component).
  APPLICATIONINSIGHTS_CONNECTION_STRING: applicationInsights.properties.ConnectionString
  APPLICATIONINSIGHTS_AUTHENTICATION_STRING: 'ClientId=${identityClientId};Authorization=AAD'
}

resource functionApp 'Microsoft.Web/sites@2025-03-01' = {
  name: name
  location: location
  // azd finds the service to deploy by this tag: on the site only (azd before 1.23.4 refuses two matches).
  tags: union(tags, { 'azd-service-name': 'api' })
  kind: 'functionapp,linux'
  identity: {
    type: 'UserAssigned'
    userAssignedIdentities: { '${identityId}': {} }
  }
  properties: {
    serverFarmId: plan.id
    httpsOnly: true
    virtualNetworkSubnetId: empty(subnetId) ? null : subnetId
    siteConfig: {
      minTlsVersion: '1.2'
      ftpsState: 'Disabled'
      cors: { allowedOrigins: corsAllowedOrigins, supportCredentials: false }
    }
    functionAppConfig: {
      deployment: {
        storage: {
          type: 'blobContainer'
          value: '${storage.properties.primaryEndpoints.blob}${deploymentContainerName}'
          authentication: { type: 'UserAssignedIdentity', userAssignedIdentityResourceId: identityId }
        }
      }
      scaleAndConcurrency: { maximumInstanceCount: 100, instanceMemoryMB: 2048 }
      runtime: { name: 'node', version: '22' }
    }
  }

  resource settings 'config' = {
    name: 'appsettings'
    properties: union(hostSettings, appSettings)
  }

  // No publishing with basic credentials: deployments authenticate with Entra ID.
  resource ftpCredentials 'basicPublishingCredentialsPolicies' = {
    name: 'ftp'
    properties: { allow: false }
  }

  resource scmCredentials 'basicPublishingCredentialsPolicies' = {
    name: 'scm'
    properties: { allow: false }
  }
}

output name string = functionApp.name
output uri string = 'https://${functionApp.properties.defaultHostName}'
