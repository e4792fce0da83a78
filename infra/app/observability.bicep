// What an operator watches: Cosmos DB's own logs in the workspace (resource-specific tables),
// alerts on what matters (API 5xx, Cosmos DB throttling and RU consumption, change feed lag,
// failed orchestrations and function executions) to an action group, and a workbook with the
// views of the local operations page. Names of metrics and attributes: docs/operations.md.
param location string
param tags object
param cosmosAccountName string
param logAnalyticsName string
@description('Names the alerts on the app telemetry Application Insights writes to the workspace.')
param applicationInsightsName string
param functionAppName string
param actionGroupName string
@description('serverless or autoscale: normalized RU consumption measures provisioned throughput only, so its alert exists only with autoscale.')
@allowed(['serverless', 'autoscale'])
param throughputMode string

@description('Optional e-mail address the alerts are sent to; without one they only show in the portal.')
param alertEmail string = ''

resource cosmosAccount 'Microsoft.DocumentDB/databaseAccounts@2025-10-15' existing = {
  name: cosmosAccountName
}

resource logAnalytics 'Microsoft.OperationalInsights/workspaces@2025-02-01' existing = {
  name: logAnalyticsName
}

resource functionApp 'Microsoft.Web/sites@2024-11-01' existing = {
  name: functionAppName
}

// Cosmos DB's request logs in tables of their own (CDBDataPlaneRequests, CDBPartitionKeyRUConsumption, ...).
resource cosmosDiagnostics 'Microsoft.Insights/diagnosticSettings@2021-05-01-preview' = {
  name: 'to-log-analytics'
  scope: cosmosAccount
  properties: {
    workspaceId: logAnalytics.id
    logAnalyticsDestinationType: 'Dedicated'
    logs: [
      { category: 'DataPlaneRequests', enabled: true }
      { category: 'QueryRuntimeStatistics', enabled: true }
      { category: 'PartitionKeyStatistics', enabled: true }
      { category: 'PartitionKeyRUConsumption', enabled: true }
      { category: 'ControlPlaneRequests', enabled: true }
    ]
    metrics: [{ category: 'Requests', enabled: true }]
  }
}

resource actionGroup 'Microsoft.Insights/actionGroups@2023-01-01' = {
  name: actionGroupName
  location: 'Global'
  tags: tags
  properties: {
    groupShortName: 'blogops'
    enabled: true
    emailReceivers: empty(alertEmail) ? [] : [{ name: 'operator', emailAddress: alertEmail, useCommonAlertSchema: true }]
  }
}

resource throttled 'Microsoft.Insights/metricAlerts@2018-03-01' = {
  name: 'cosmos-throttled-${cosmosAccountName}'
  location: 'global'
  tags: tags
  properties: {
    description: 'Cosmos DB answered 429 (throttled) to more than 50 requests in 5 minutes: the API answers 429 with Retry-After beyond the SDK retries.'
    severity: 2
    enabled: true
    scopes: [cosmosAccount.id]
    evaluationFrequency: 'PT1M'
    windowSize: 'PT5M'
    criteria: {
      'odata.type': 'Microsoft.Azure.Monitor.SingleResourceMultipleMetricCriteria'
      allOf: [
        {
          criterionType: 'StaticThresholdCriterion'
          name: 'throttled'
          metricName: 'TotalRequests'
          dimensions: [{ name: 'StatusCode', operator: 'Include', values: ['429'] }]
          operator: 'GreaterThan'
          threshold: 50
          timeAggregation: 'Count'
        }
      ]
    }
    actions: [{ actionGroupId: actionGroup.id }]
  }
}

resource hotPartition 'Microsoft.Insights/metricAlerts@2018-03-01' = if (throughputMode == 'autoscale') {
  name: 'cosmos-normalized-ru-${cosmosAccountName}'
  location: 'global'
  tags: tags
  properties: {
    description: 'A physical partition used more than 90 % of its request units for 15 minutes: the feed or a viral post is near its ceiling (docs/capacity.md).'
    severity: 2
    enabled: true
    scopes: [cosmosAccount.id]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT15M'
    criteria: {
      'odata.type': 'Microsoft.Azure.Monitor.SingleResourceMultipleMetricCriteria'
      allOf: [
        {
          criterionType: 'StaticThresholdCriterion'
          name: 'normalizedRU'
          metricName: 'NormalizedRUConsumption'
          operator: 'GreaterThan'
          threshold: 90
          // Every minute of the window above 90 %: the Maximum would fire on one hot minute.
          timeAggregation: 'Minimum'
        }
      ]
    }
    actions: [{ actionGroupId: actionGroup.id }]
  }
}

resource serverErrors 'Microsoft.Insights/metricAlerts@2018-03-01' = {
  name: 'api-5xx-${functionAppName}'
  location: 'global'
  tags: tags
  properties: {
    description: 'The API answered 5xx more than 5 times in 5 minutes (a 503 is Cosmos DB unavailable; a 500 is a defect or a malformed stored item).'
    severity: 1
    enabled: true
    scopes: [functionApp.id]
    evaluationFrequency: 'PT1M'
    windowSize: 'PT5M'
    criteria: {
      'odata.type': 'Microsoft.Azure.Monitor.SingleResourceMultipleMetricCriteria'
      allOf: [
        {
          criterionType: 'StaticThresholdCriterion'
          name: 'http5xx'
          metricName: 'Http5xx'
          operator: 'GreaterThan'
          threshold: 5
          timeAggregation: 'Total'
        }
      ]
    }
    actions: [{ actionGroupId: actionGroup.id }]
  }
}

// Alerts on the app's own telemetry: Application Insights writes it to the workspace's App* tables.
var logAlerts = [
  {
    name: 'change-feed-lag'
    description: 'A change feed consumer is more than 60 s behind the writes (the estimator, each minute, whether the consumer runs or not): Q3 and Q6 are falling behind.'
    severity: 2
    query: 'AppMetrics | where Name == "blog.change_feed.lag_seconds" | summarize Lag = max(Sum) by Consumer = tostring(Properties["blog.change_feed.consumer"]) | where Lag > 60'
  }
  {
    name: 'failed-orchestrations'
    description: 'An orchestration failed: a username propagation or feed refresh gave up (docs/failures.md).'
    severity: 1
    query: 'AppMetrics | where Name == "blog.orchestrations" and tostring(Properties["blog.outcome"]) == "failed" | where Sum > 0'
  }
  {
    name: 'retrying-orchestrations'
    description: 'Orchestrations retried failing activities more than 20 times in 5 minutes: one that keeps failing retries rather than failing, so the failed-orchestrations alert alone stays silent (docs/failures.md).'
    severity: 2
    query: 'AppMetrics | where Name == "blog.orchestrations" and tostring(Properties["blog.outcome"]) == "retrying" | summarize Retries = sum(Sum) | where Retries > 20'
  }
  {
    name: 'long-running-orchestrations'
    description: 'An orchestration has been running for more than 30 minutes (the backlog timer counts them): a propagation, claim sweep or feed refresh that does not finish.'
    severity: 2
    query: 'AppMetrics | where Name == "blog.orchestrations.long_running" | summarize Instances = max(Sum) by Orchestration = tostring(Properties["blog.orchestration.name"]) | where Instances > 0'
  }
  {
    name: 'failed-executions'
    description: 'Function executions failed more than 5 times in 5 minutes (a change feed batch retried, a timer that threw).'
    severity: 2
    query: 'AppRequests | where Success == false | summarize Failed = sum(ItemCount) | where Failed > 5'
  }
  {
    name: 'failed-activities'
    description: 'Activity executions failed more than 5 times in 5 minutes: activity spans land in AppDependencies, not AppRequests.'
    severity: 2
    query: 'AppDependencies | where Name startswith "activity " and Success == false | summarize Failed = sum(ItemCount) | where Failed > 5'
  }
]

resource telemetryAlerts 'Microsoft.Insights/scheduledQueryRules@2023-03-15-preview' = [
  for alert in logAlerts: {
    name: '${alert.name}-${applicationInsightsName}'
    location: location
    tags: tags
    properties: {
      description: alert.description
      severity: alert.severity
      enabled: true
      // On a new workspace the App* tables do not exist until the app first writes telemetry:
      // Azure would reject the query at creation (SEM0100), failing the first provision.
      skipQueryValidation: true
      scopes: [logAnalytics.id]
      evaluationFrequency: 'PT5M'
      windowSize: 'PT5M'
      criteria: {
        allOf: [
          {
            query: alert.query
            timeAggregation: 'Count'
            operator: 'GreaterThan'
            threshold: 0
            failingPeriods: { numberOfEvaluationPeriods: 1, minFailingPeriodsToAlert: 1 }
          }
        ]
      }
      actions: { actionGroups: [actionGroup.id] }
    }
  }
]

// The local operations page's views, over the same metrics in Azure.
var workbookQueries = [
  {
    title: 'Request units per route'
    query: 'AppMetrics | where Name == "blog.http.request_charge" | summarize RU = sum(Sum), Requests = sum(ItemCount) by Route = tostring(Properties["http.route"]) | extend RUPerRequest = round(RU / Requests, 2) | order by RU desc'
    visualization: 'table'
  }
  {
    title: 'API answers by status class'
    query: 'AppMetrics | where Name == "http.server.request.duration" | summarize Requests = sum(ItemCount) by Status = tostring(Properties["http.response.status_code"]), bin(TimeGenerated, 5m)'
    visualization: 'timechart'
  }
  {
    title: 'Cosmos DB 429 and 503'
    query: 'AppMetrics | where Name == "db.client.operation.duration" | extend Status = tostring(Properties["db.response.status_code"]) | where Status in ("429", "503") | summarize Requests = sum(ItemCount) by Status, bin(TimeGenerated, 5m)'
    visualization: 'timechart'
  }
  {
    title: 'Change feed lag (s)'
    query: 'AppMetrics | where Name == "blog.change_feed.lag_seconds" | summarize MaxLag = max(Sum) by Consumer = tostring(Properties["blog.change_feed.consumer"]), bin(TimeGenerated, 5m)'
    visualization: 'timechart'
  }
  {
    title: 'Orchestrations by outcome'
    query: 'AppMetrics | where Name == "blog.orchestrations" | summarize Count = sum(Sum) by Orchestration = tostring(Properties["blog.orchestration.name"]), Outcome = tostring(Properties["blog.outcome"])'
    visualization: 'table'
  }
  {
    title: 'Request units by Cosmos DB operation (Cosmos DB logs)'
    query: 'CDBDataPlaneRequests | summarize RU = sum(RequestCharge), Requests = count() by OperationName, CollectionName | order by RU desc'
    visualization: 'table'
  }
]

var workbookItems = [
  for (item, i) in workbookQueries: {
    type: 3
    name: 'query-${i}'
    content: {
      version: 'KqlItem/1.0'
      title: item.title
      query: item.query
      queryType: 0
      resourceType: 'microsoft.operationalinsights/workspaces'
      visualization: item.visualization
      timeContext: { durationMs: 86400000 }
    }
  }
]

resource workbook 'Microsoft.Insights/workbooks@2023-06-01' = {
  name: guid(resourceGroup().id, 'blog-operations-workbook')
  location: location
  tags: tags
  kind: 'shared'
  properties: {
    displayName: 'Blog backend: operations'
    category: 'workbook'
    sourceId: logAnalytics.id
    serializedData: string({
      version: 'Notebook/1.0'
      items: workbookItems
      isLocked: false
      fallbackResourceIds: [logAnalytics.id]
    })
  }
}

output actionGroupId string = actionGroup.id
output workbookId string = workbook.id
