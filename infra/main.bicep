// Everything the blog backend needs, keyless: a resource group with Cosmos DB (NoSQL, Entra ID
// only), a Flex Consumption Function App running as a user-assigned managed identity, its
// storage (identity-based, also the Durable Functions state), and monitoring.
// Subscription scope, so `azd up` and `az deployment sub create` create the resource group too.
targetScope = 'subscription'

@minLength(1)
@maxLength(64)
@description('Name of the environment; used to name resources and as the azd environment tag.')
param environmentName string

@minLength(1)
@description('Azure region for every resource: one that offers the Flex Consumption plan.')
@allowed([
  'australiaeast'
  'australiasoutheast'
  'brazilsouth'
  'canadacentral'
  'centralindia'
  'centralus'
  'eastasia'
  'eastus'
  'eastus2'
  'francecentral'
  'germanywestcentral'
  'italynorth'
  'japaneast'
  'koreacentral'
  'northcentralus'
  'northeurope'
  'norwayeast'
  'southafricanorth'
  'southcentralus'
  'southeastasia'
  'southindia'
  'spaincentral'
  'swedencentral'
  'uaenorth'
  'uksouth'
  'ukwest'
  'westcentralus'
  'westeurope'
  'westus'
  'westus2'
  'westus3'
])
@metadata({ azd: { type: 'location' } })
param location string

@description('Optional e-mail address for the alerts (API 5xx, Cosmos DB throttling and RU consumption, change feed lag, failed orchestrations and executions).')
param alertEmail string = ''

@description('Optional object id of the deploying user or group: gets data-plane access to Cosmos DB and storage for local runs and debugging.')
param principalId string = ''

@allowed(['User', 'Group', 'ServicePrincipal'])
param principalType string = 'User'

@allowed(['serverless', 'autoscale'])
@description('serverless: pay per request, nothing at rest beyond storage. autoscale: provisioned throughput shared by the database, scaling between 10% and 100% of the maximum.')
param cosmosThroughputMode string = 'serverless'

@minValue(1000)
@description('Maximum RU/s of the shared autoscale throughput (autoscale mode only).')
param cosmosAutoscaleMaxThroughput int = 1000

@description('OIDC issuer of the bearer tokens the API accepts, e.g. https://login.microsoftonline.com/<tenant>/v2.0')
param authIssuer string

@description('Audiences the tokens must be issued for, comma-separated: the API\'s application ID URI api://<client id> also admits the bare client id, which v2.0 access tokens carry.')
param authAudience string

@description('The API\'s delegated scope a user\'s token must carry in scp (the bare name, e.g. access_as_user); empty: no scope required.')
param authScope string = 'access_as_user'

@description('App roles, comma-separated, any of which in an application\'s token (client credentials, no user) admits it instead of the delegated scope; empty: applications are refused.')
param authAppRoles string = ''

@description('App roles, comma-separated, any of which in a token lets its caller erase any account (DELETE /api/users/{userId}); empty: only the account\'s owner may.')
param authAdminRoles string = ''

@description('Origins a browser front end may call the API from, comma-separated (e.g. https://blog.example.com), or empty for none.')
param corsAllowedOrigins string = ''

@description('Client id of the web front end\'s Entra ID app registration (a single-page application); empty: the web app is read-only.')
param webClientId string = ''

@description('The API scope the web front end asks tokens for, e.g. api://<api client id>/access_as_user.')
param apiScope string = ''

@allowed(['westus2', 'centralus', 'eastus2', 'westeurope', 'eastasia'])
@description('Region of the Static Web App serving the web front end (offered in these regions only).')
param webLocation string = 'eastus2'

@description('A private network, as Azure\'s Functions templates offer: the Function App integrated with a virtual network, Storage and Cosmos DB reached through private endpoints, their public access off.')
param vnetEnabled bool = true

@description('With vnetEnabled: public addresses (or CIDR ranges) Cosmos DB still accepts, comma-separated, e.g. a developer\'s for local runs against the account; empty: none.')
param cosmosAllowedIpAddresses string = ''

@minValue(60)
@description('Seconds a soft-deleted post, its comments and likes stay before Cosmos DB expires them.')
param softDeleteTtlSeconds int = 86400

var abbrs = loadJsonContent('abbreviations.json')
var definitions = loadJsonContent('containers.json')
var resourceToken = toLower(uniqueString(subscription().id, environmentName, location))
var tags = { 'azd-env-name': environmentName }
var functionAppName = '${abbrs.webSitesFunctions}api-${resourceToken}'

resource rg 'Microsoft.Resources/resourceGroups@2025-04-01' = {
  name: '${abbrs.resourcesResourceGroups}${environmentName}'
  location: location
  tags: tags
}

module identity 'app/identity.bicep' = {
  name: 'identity'
  scope: rg
  params: {
    name: '${abbrs.managedIdentityUserAssignedIdentities}api-${resourceToken}'
    location: location
    tags: tags
  }
}

module monitoring 'app/monitoring.bicep' = {
  name: 'monitoring'
  scope: rg
  params: {
    logAnalyticsName: '${abbrs.operationalInsightsWorkspaces}${resourceToken}'
    applicationInsightsName: '${abbrs.insightsComponents}${resourceToken}'
    location: location
    tags: tags
  }
}

module storage 'app/storage.bicep' = {
  name: 'storage'
  scope: rg
  params: {
    name: '${abbrs.storageStorageAccounts}${resourceToken}'
    location: location
    tags: tags
    deploymentContainerName: 'app-package-${take(resourceToken, 7)}'
    vnetEnabled: vnetEnabled
  }
}

module cosmos 'app/cosmos.bicep' = {
  name: 'cosmos'
  scope: rg
  params: {
    accountName: '${abbrs.documentDBDatabaseAccounts}${resourceToken}'
    location: location
    tags: tags
    throughputMode: cosmosThroughputMode
    autoscaleMaxThroughput: cosmosAutoscaleMaxThroughput
    appPrincipalId: identity.outputs.principalId
    userPrincipalId: principalId
    vnetEnabled: vnetEnabled
    allowedIpAddresses: empty(cosmosAllowedIpAddresses) ? [] : map(split(cosmosAllowedIpAddresses, ','), address => trim(address))
  }
}

module network 'app/network.bicep' = if (vnetEnabled) {
  name: 'network'
  scope: rg
  params: {
    name: '${abbrs.networkVirtualNetworks}${resourceToken}'
    location: location
    tags: tags
  }
}

module privateEndpoints 'app/private-endpoints.bicep' = if (vnetEnabled) {
  name: 'private-endpoints'
  scope: rg
  params: {
    location: location
    tags: tags
    networkName: network!.outputs.name
    subnetId: network!.outputs.privateEndpointSubnetId
    storageAccountName: storage.outputs.name
    cosmosAccountName: cosmos.outputs.accountName
  }
}

module web 'app/web.bicep' = {
  name: 'web'
  scope: rg
  params: {
    name: '${abbrs.webStaticSites}${resourceToken}'
    location: webLocation
    tags: tags
  }
}

module api 'app/api.bicep' = {
  name: 'api'
  scope: rg
  params: {
    name: functionAppName
    planName: '${abbrs.webServerFarms}${resourceToken}'
    location: location
    tags: tags
    identityId: identity.outputs.id
    identityClientId: identity.outputs.clientId
    storageAccountName: storage.outputs.name
    deploymentContainerName: storage.outputs.deploymentContainerName
    applicationInsightsName: monitoring.outputs.applicationInsightsName
    subnetId: vnetEnabled ? network!.outputs.appSubnetId : ''
    // The web front end's own origin, and any configured.
    corsAllowedOrigins: union([web.outputs.origin], empty(corsAllowedOrigins) ? [] : map(split(corsAllowedOrigins, ','), origin => trim(origin)))
    appSettings: {
      COSMOS__accountEndpoint: cosmos.outputs.endpoint
      COSMOS__credential: 'managedidentity'
      COSMOS__clientId: identity.outputs.clientId
      COSMOS_DATABASE: definitions.databaseName
      // The change feed estimator's timer (functions/backlog-timer.ts): each minute, the lag alert's grain.
      BACKLOG_SCHEDULE: '0 */1 * * * *'
      AZURE_CLIENT_ID: identity.outputs.clientId
      AUTH_ISSUER: authIssuer
      AUTH_AUDIENCE: authAudience
      AUTH_SCOPE: authScope
      AUTH_APP_ROLES: authAppRoles
      AUTH_ADMIN_ROLES: authAdminRoles
      SOFT_DELETE_TTL_SECONDS: string(softDeleteTtlSeconds)
    }
  }
}

module observability 'app/observability.bicep' = {
  name: 'observability'
  scope: rg
  params: {
    location: location
    tags: tags
    cosmosAccountName: cosmos.outputs.accountName
    logAnalyticsName: monitoring.outputs.logAnalyticsName
    applicationInsightsName: monitoring.outputs.applicationInsightsName
    functionAppName: api.outputs.name
    actionGroupName: 'ag-${resourceToken}'
    throughputMode: cosmosThroughputMode
    alertEmail: alertEmail
  }
}

module rbac 'app/rbac.bicep' = {
  name: 'rbac'
  scope: rg
  params: {
    storageAccountName: storage.outputs.name
    applicationInsightsName: monitoring.outputs.applicationInsightsName
    appPrincipalId: identity.outputs.principalId
    userPrincipalId: principalId
    userPrincipalType: principalType
  }
}

output AZURE_LOCATION string = location
output AZURE_TENANT_ID string = tenant().tenantId
output AZURE_RESOURCE_GROUP string = rg.name
output AZURE_FUNCTION_APP_NAME string = api.outputs.name
output SERVICE_API_NAME string = api.outputs.name
output SERVICE_API_URI string = api.outputs.uri
output API_BASE_URL string = '${api.outputs.uri}/api'
output COSMOS_ENDPOINT string = cosmos.outputs.endpoint
output COSMOS_ACCOUNT_NAME string = cosmos.outputs.accountName
output COSMOS_DATABASE string = definitions.databaseName
output AZURE_CLIENT_ID string = identity.outputs.clientId
// The app identity's principal: the postprovision hook waits until its new roles can have propagated.
output API_PRINCIPAL_ID string = identity.outputs.principalId
output WEB_URI string = web.outputs.origin
// What web/write-config.mjs writes into the front end's config.json at deploy time.
output WEB_AUTH_CLIENT_ID string = webClientId
output WEB_AUTH_AUTHORITY string = '${environment().authentication.loginEndpoint}${tenant().tenantId}'
output WEB_API_SCOPE string = apiScope
