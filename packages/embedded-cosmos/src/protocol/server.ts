import type { Clock } from "../engine/clock";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import { Account, isScriptKind } from "../engine/account";
import { isHybridRow } from "../wire/hybrid-row";
import { verifyMasterKey, type VerifiedSignatures } from "./auth";
import { hostnameOf, isAllowedHost } from "./host-names";
import { DocumentRoutes } from "./documents";
import { ResourceRoutes } from "./resources";
import { NO_COST, requestUnits, withMeter, type CostFeatures } from "../limits/request-units";
import { badRequest, CosmosError, entityTooLarge, notFound } from "../wire/errors";
import { ScriptedTransactions } from "../scripts/transactions";
import { QueryThread } from "../query/query-thread";
import { SCAN_PAGE_ITEMS } from "../query/query";
import type { ThroughputBudget } from "../limits/throughput";
import type { FaultInjector } from "../limits/faults";
import { isTrue, operationKind, scopeOf, type Call, type Reply } from "./rest";
import type { ScriptLimits } from "../scripts/script-runner";

const MAX_REQUEST_BYTES = 2 * 1024 * 1024;

/** The Cosmos DB REST protocol over the in-memory account, as `@azure/cosmos` speaks it. */
export class CosmosServer {
  readonly account: Account;
  private readonly transactions: ScriptedTransactions;
  private readonly queries: QueryThread;
  private readonly documents: DocumentRoutes;
  private readonly resources: ResourceRoutes;
  private readonly http: Server;
  private sweeper?: NodeJS.Timeout;
  /** Master-key signatures this server has already checked (see verifyMasterKey). */
  private readonly verifiedSignatures: VerifiedSignatures = new Map();

  private readonly limits: ScriptLimits;
  /** Item operations per second per physical partition; unlimited when absent. */
  private readonly budget?: ThroughputBudget;
  /** Injects Azure's failures into data-plane requests; none when absent. */
  readonly faults?: FaultInjector;
  /** Items an unindexed scan reads per page before it returns (possibly short) with a continuation. */
  private readonly scanPageItems: number;
  /** Told what each request did and was charged (the calibration reads it). */
  private readonly onCharged?: (features: CostFeatures, charge: number) => void;
  /** Host names answered besides loopback ones. */
  private readonly allowedHosts: readonly string[];

  constructor(
    /** The account key every request must be signed with (master-key authorization). */
    private readonly key: string,
    options: {
      limits: ScriptLimits;
      partitions?: number;
      budget?: ThroughputBudget;
      faults?: FaultInjector;
      scanPageItems?: number;
      clock?: Clock;
      onCharged?: (features: CostFeatures, charge: number) => void;
      allowedHosts?: readonly string[];
    },
  ) {
    this.allowedHosts = options.allowedHosts ?? [];
    this.onCharged = options.onCharged;
    this.limits = options.limits;
    this.queries = new QueryThread(options.limits.timeoutMs);
    this.budget = options.budget;
    this.faults = options.faults;
    this.scanPageItems = options.scanPageItems ?? SCAN_PAGE_ITEMS;
    this.account = new Account(options.partitions ?? 1, options.clock);
    this.transactions = new ScriptedTransactions(this.account, this.limits);
    this.documents = new DocumentRoutes(this.account, this.transactions, this.queries, this.scanPageItems);
    this.resources = new ResourceRoutes(this.account, this.transactions, this.budget);
    this.http = createServer((req, res) => void this.serve(req, res));
    this.http.keepAliveTimeout = 60_000;
  }

  listen(port: number, host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.http.once("error", reject);
      this.http.listen(port, host, () => {
        this.sweeper = setInterval(() => this.sweep(), 1000).unref();
        const address = this.http.address();
        resolve(typeof address === "object" && address ? address.port : port);
      });
    });
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
    await this.transactions.close();
    await this.queries.close();
  }

  private sweep(): void {
    for (const db of this.account.databases.values()) for (const c of db.containers.values()) c.data.sweep();
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let reply: Reply;
    const features = { ...NO_COST };
    try {
      this.checkHost(req.headers.host);
      const call = await this.parse(req);
      // What the fault injector has injected is no data: chaos runs read it without the key.
      if (!(call.segments[0] === "_embedded" && call.segments.length === 2))
        verifyMasterKey(this.key, call.method, call.segments, call.header, this.verifiedSignatures);
      call.segments = this.byName(call.segments);
      await this.injectFaults(call);
      call.meter = features;
      const routed = withMeter(features, () => this.route(call));
      reply = routed instanceof Promise ? await routed : routed;
      const session = this.sessionToken(call);
      if (session) reply.headers = { "x-ms-session-token": session, ...reply.headers };
    } catch (error) {
      const cosmosError = error instanceof CosmosError ? error : new CosmosError(500, "InternalServerError", (error as Error).message);
      if (cosmosError.status === 500) console.error("[cosmos] internal error", error);
      const headers: Record<string, string> = { ...cosmosError.headers };
      if (cosmosError.subStatus !== undefined) headers["x-ms-substatus"] = String(cosmosError.subStatus);
      reply = { status: cosmosError.status, body: cosmosError.toBody(), headers };
    }
    // The cost model's charge for what the request did (docs/request-units.md), failed requests included, as Azure charges them.
    const charge = requestUnits(features);
    this.onCharged?.(features, charge);
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "x-ms-activity-id": randomUUID(),
      "x-ms-request-charge": charge.toFixed(2),
      "x-ms-schemaversion": "1.14",
      ...reply.headers,
    };
    const text = reply.body === undefined ? "" : Buffer.isBuffer(reply.body) ? reply.body : JSON.stringify(reply.body);
    if (Buffer.isBuffer(text)) headers["content-type"] = "application/octet-stream";
    res.writeHead(reply.status, { ...headers, "content-length": Buffer.byteLength(text) });
    res.end(text);
  }

  /**
   * A request must name this machine (or a host LOCAL_ALLOWED_HOSTS lists): with the account key
   * public, a page that rebinds its own name to 127.0.0.1 would otherwise read and write the
   * whole account, same-origin and without CORS.
   */
  private checkHost(host: string | undefined): void {
    const name = host === undefined ? "localhost" : hostnameOf(host);
    if (name === undefined) throw badRequest("The Host header is no host name.");
    if (!isAllowedHost(name, this.allowedHosts))
      throw new CosmosError(403, "Forbidden", `This server answers loopback host names only, not '${name}'; LOCAL_ALLOWED_HOSTS lists others it may answer.`);
  }

  private async parse(req: IncomingMessage): Promise<Call> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_REQUEST_BYTES) throw entityTooLarge("Request size is too large.");
      chunks.push(chunk as Buffer);
    }
    const bytes = Buffer.concat(chunks);
    const text = bytes.toString("utf8");
    let body: unknown;
    // The .NET SDK sends batches and bulk as HybridRow; the batch routes read those bytes.
    if (isTrue(req.headers["x-ms-cosmos-is-batch-request"] as string | undefined) && isHybridRow(bytes)) body = bytes;
    else if (text.length > 0) {
      try {
        body = JSON.parse(text);
      } catch {
        throw badRequest("The request payload is invalid JSON.");
      }
    }
    const url = new URL(req.url ?? "/", "http://localhost");
    let segments: string[];
    try {
      segments = url.pathname
        .split("/")
        .filter(Boolean)
        .map((s) => decodeURIComponent(s));
    } catch {
      throw badRequest("The request path has a malformed percent-escape.");
    }
    return { method: req.method ?? "GET", segments, header: (name) => req.headers[name] as string | undefined, body };
  }

  /**
   * The path with resources named by resource id (`dbs/<rid>/colls/<rid>`, as the .NET SDK
   * addresses a container to route by it) turned into the names the routes take. A name is
   * looked up first: a resource id is tried only where no resource has that name.
   */
  private byName(segments: string[]): string[] {
    const [dbs, dbId, colls, collId, kind, childId] = segments;
    if (dbs !== "dbs" || dbId === undefined) return segments;
    const named = [...segments];
    const database = this.account.databases.get(dbId) ?? [...this.account.databases.values()].find((d) => d.resource._rid === dbId);
    if (!database) return segments;
    named[1] = database.resource.id as string;
    if (colls !== "colls" || collId === undefined) return named;
    const state = database.containers.get(collId) ?? [...database.containers.values()].find((c) => c.data.resource._rid === collId);
    if (!state) return named;
    named[3] = state.data.id;
    if (isScriptKind(kind) && childId !== undefined && !state.scripts[kind].has(childId)) {
      const script = [...state.scripts[kind].values()].find((s) => s._rid === childId);
      if (script) named[5] = script.id as string;
    }
    return named;
  }

  /**
   * `x-ms-session-token` of a request to a container's items or scripts: per partition key range
   * it touched, the range's id and its latest LSN (`<range>:-1#<lsn>`), as Azure answers under
   * Session consistency; the .NET SDK's change feed estimator reads the backlog from it.
   */
  private sessionToken(call: Call): string | undefined {
    const [dbs, dbId, colls, collId, kind] = call.segments;
    if (dbs !== "dbs" || colls !== "colls" || collId === undefined || (kind !== "docs" && kind !== "sprocs")) return undefined;
    const data = this.account.databases.get(dbId)?.containers.get(collId)?.data;
    if (!data) return undefined;
    let ranges: number[];
    try {
      const scope = scopeOf(call, data);
      ranges = "pk" in scope ? [data.rangeOfKey(scope.pk)] : "range" in scope ? [scope.range] : data.ranges.map((_, i) => i);
    } catch {
      return undefined;
    }
    return ranges.map((i) => `${data.ranges[i].id}:-1#${data.currentLsn(i)}`).join(",");
  }

  private route(call: Call): Reply | Promise<Reply> {
    const [dbs, dbId, colls, collId, kind, resourceId] = call.segments;
    const n = call.segments.length;
    if (n === 0 && call.method === "GET") return { status: 200, body: this.resources.accountResource(call) };
    // Not part of Azure's protocol: what the fault injector has injected, for runs that restart the process.
    if (dbs === "_embedded" && dbId === "faults" && n === 2 && call.method === "GET")
      return { status: 200, body: { ...this.faults?.injected, total: this.faults?.total ?? 0 } };
    if (dbs === "offers" && n <= 2) return this.resources.offers(call, dbId);
    if (dbs !== "dbs") throw notFound("Unknown resource path.");
    if (n <= 2) return this.resources.databases(call, dbId);
    if (colls !== "colls") throw notFound("Unknown resource path.");
    if (n <= 4) return this.resources.containers(call, dbId, collId);
    if (this.budget && (kind === "docs" || (kind === "sprocs" && n === 6 && call.method === "POST")))
      call.budgetPartition = this.spendBudget(call, dbId, collId);
    if (kind === "docs") return n === 5 ? this.documents.collection(call, dbId, collId) : this.documents.item(call, dbId, collId, resourceId);
    if (kind === "pkranges" && n === 5) return this.resources.partitionKeyRanges(call, dbId, collId);
    if (kind === "operations" && resourceId === "partitionkeydelete" && n === 6 && call.method === "POST")
      return this.documents.deletePartitionKey(call, dbId, collId);
    if (isScriptKind(kind) && n <= 6) return this.resources.scripts(call, dbId, collId, kind, resourceId);
    throw notFound("Unknown resource path.");
  }

  /** Draws this request's faults (data-plane requests only): waits, fails, or marks a sproc call to fail after its work. */
  private async injectFaults(call: Call): Promise<void> {
    const kind = this.faults && operationKind(call);
    if (!kind) return;
    const plan = this.faults!.plan(kind, call.segments[3]);
    call.failAfterWork = plan.afterWork;
    await this.faults!.apply(plan);
  }

  /** Charges the physical partition the request lands on (a cross-partition request: the first), and names it. */
  private spendBudget(call: Call, dbId: string, collId: string): string {
    const { data } = this.account.container(dbId, collId);
    const scope = scopeOf(call, data);
    const range = "pk" in scope ? data.rangeOfKey(scope.pk) : "range" in scope ? scope.range : 0;
    const partition = `${dbId}/${collId}/${range}`;
    this.budget!.spend(partition, call.header("x-ms-cosmos-priority-level")?.toLowerCase() === "low" ? "Low" : "High");
    return partition;
  }
}
