// The web front end: Azure Static Web Apps (Free) serving dist/web; azd deploys it as service 'web'.
param name string
@description('Static Web Apps is offered in a few regions only.')
param location string
param tags object = {}

resource web 'Microsoft.Web/staticSites@2025-03-01' = {
  name: name
  location: location
  tags: union(tags, { 'azd-service-name': 'web' })
  sku: { name: 'Free', tier: 'Free' }
  properties: {
    // Content comes from azd deploy, not from a repository.
    allowConfigFileUpdates: true
  }
}

output name string = web.name
output origin string = 'https://${web.properties.defaultHostname}'
