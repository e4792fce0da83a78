/**
 * The names telemetry is recorded under, in one place: the instrumentation scope, span and
 * attribute names (OpenTelemetry's semantic conventions where one exists, this app's otherwise),
 * and the metrics. Dashboards, alerts (infra/) and the operations page read these names.
 */
export const SCOPE = "blog-backend";

export const ATTRIBUTES = {
  // HTTP (semantic conventions)
  method: "http.request.method",
  route: "http.route",
  status: "http.response.status_code",
  scheme: "url.scheme",
  /** The caller's user id, hashed: who it is stays private, how many distinct callers does not. */
  caller: "enduser.pseudo.id",
  /** Why an operation failed (OpenTelemetry's general attribute): a status code, or an exception's type. */
  errorType: "error.type",
  // Cosmos DB (semantic conventions for Azure Cosmos DB)
  dbSystem: "db.system.name",
  dbNamespace: "db.namespace",
  container: "db.collection.name",
  operation: "db.operation.name",
  cosmosStatus: "db.response.status_code",
  subStatus: "azure.cosmosdb.response.sub_status_code",
  requestCharge: "azure.cosmosdb.operation.request_charge",
  partitionKey: "azure.cosmosdb.partition_key",
  activityId: "azure.cosmosdb.activity_id",
  // Change feed
  /**
   * The name Azure Monitor's exporter gives a CONSUMER span's row in AppRequests: it names
   * server spans from the span, consumer spans only from this attribute (Name is empty without it).
   */
  azureMonitorOperationName: "ai.operation.name",
  consumer: "blog.change_feed.consumer",
  lease: "blog.change_feed.lease",
  // A batch as the messaging conventions describe processing one (the change feed has no registered messaging system: the database's name stands in)
  messagingSystem: "messaging.system",
  messagingOperationType: "messaging.operation.type",
  messagingOperationName: "messaging.operation.name",
  messagingDestination: "messaging.destination.name",
  messagingConsumerGroup: "messaging.consumer.group.name",
  items: "messaging.batch.message_count",
  lagSeconds: "blog.change_feed.lag_seconds",
  // Orchestrations and activities
  orchestration: "blog.orchestration.name",
  instanceId: "blog.orchestration.instance_id",
  activity: "blog.activity.name",
  outcome: "blog.outcome",
  // Likes and the feed
  cacheResult: "blog.cache.result",
} as const;

export const METRICS = {
  /** Request units of each Cosmos DB request, by container, operation and status (histogram, RU; the Cosmos DB conventions' name). */
  requestCharge: "azure.cosmosdb.client.operation.request_charge",
  /** Each Cosmos DB request's duration by container, operation and status (histogram, s; its count is the requests: 429 and 503 are the ones to watch). */
  cosmosDuration: "db.client.operation.duration",
  /** Request units an API request cost in all, by route (histogram, RU): what each of the article's requests costs. */
  routeCharge: "blog.http.request_charge",
  /** Each API request's duration by route, method and status (histogram, s; its count is the requests). */
  httpDuration: "http.server.request.duration",
  /** How far a change feed consumer is behind the newest change: seconds, and items where the host can count them (gauges, per lease). */
  changeFeedLagSeconds: "blog.change_feed.lag_seconds",
  changeFeedLagItems: "blog.change_feed.lag_items",
  /** Documents handed to a change feed consumer. */
  changeFeedItems: "blog.change_feed.items",
  /** Orchestrations by name and outcome: started, restarted, completed, failed, retrying (an activity attempt failed). */
  orchestrations: "blog.orchestrations",
  /** Orchestrations running for more than 30 minutes, by name (gauge, the backlog timer's). */
  longRunningOrchestrations: "blog.orchestrations.long_running",
  /** Orchestration instances by runtime status (gauge; the local host's, Azure's are the Durable extension's own). */
  orchestrationInstances: "blog.orchestrations.instances",
  /** Likes and unlikes per changeLikes stored procedure call (histogram): the group commit at work. */
  likeBatchSize: "blog.likes.batch_size",
  /** Q6 micro-cache lookups, hit or miss. */
  feedCache: "blog.feed_cache.lookups",
} as const;
