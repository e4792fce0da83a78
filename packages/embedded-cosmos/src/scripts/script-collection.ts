import { randomUUID } from "node:crypto";
import type { Container } from "../engine/container";
import { badRequest, CosmosError, notFound } from "../wire/errors";
import { isObject, type Json, type JsonObject } from "../wire/json";
import { cost, uncharged } from "../limits/request-units";
import { prepareQuery } from "../query/sql-support";

export interface ScriptLimits {
  /** Collection calls a script may make before they start returning `false` (isAccepted). */
  operationLimit: number;
  /** Wall-clock budget; a script still running then is stopped and rolled back with 408. */
  timeoutMs: number;
}

/** What a collection call answers the script: a resource, or an error it sees as `err`. */
export interface CollectionReply {
  accepted: boolean;
  resource?: Json;
  options?: JsonObject;
  error?: { number: number; message: string };
}

/** The document id a link like `dbs/x/colls/y/docs/<id>` (or a `_self` link) names. */
function documentRef(link: unknown): string {
  const match = typeof link === "string" ? /\/docs\/([^/]+)\/?$/.exec(link) : null;
  if (!match) throw badRequest(`Invalid document link '${String(link)}'.`);
  try {
    return decodeURIComponent(match[1]);
  } catch {
    throw badRequest(`Invalid document link '${link as string}': a malformed percent-escape.`);
  }
}

/**
 * Collection operations as a script sees them: always scoped to the partition the request named.
 * Writes go through the container, inside the transaction the caller opened.
 */
export class ScriptCollection {
  operations = 0;

  constructor(
    private readonly container: Container,
    private readonly pk: string,
    private readonly limits: ScriptLimits,
  ) {}

  /** One call; a failure that is not a CosmosError (the server's own) is thrown. */
  handle(op: string, args: Json[]): CollectionReply {
    if (this.operations >= this.limits.operationLimit) return { accepted: false };
    this.operations += 1;
    try {
      return { accepted: true, ...this.run(op, args) };
    } catch (error) {
      if (!(error instanceof CosmosError)) throw error;
      return { accepted: true, error: { number: error.status, message: error.message } };
    }
  }

  private run(op: string, args: Json[]): { resource?: Json; options?: JsonObject } {
    const options = (isObject(args[args.length - 1]) ? args[args.length - 1] : {}) as JsonObject;
    const etag = typeof options.etag === "string" ? options.etag : undefined;
    switch (op) {
      case "read": {
        let found: JsonObject | undefined;
        try {
          found = this.find(documentRef(args[0]));
          return { resource: found };
        } finally {
          cost.read(found ? JSON.stringify(found).length : 0); // a miss is charged too
        }
      }
      case "query":
        return this.query(args[1], options);
      case "create": {
        const doc = this.document(args[1]);
        if (doc.id === undefined && options.disableAutomaticIdGeneration !== true) doc.id = randomUUID();
        return { resource: this.container.create(this.pk, doc) };
      }
      case "replace": {
        const doc = this.document(args[1]);
        const current = this.find(documentRef(args[0]));
        return { resource: this.container.replace(this.pk, current.id as string, doc, etag) };
      }
      case "upsert":
        return { resource: this.container.upsert(this.pk, this.document(args[1]), etag).doc };
      case "delete": {
        const current = this.find(documentRef(args[0]));
        this.container.delete(this.pk, current.id as string, etag);
        return {};
      }
      default:
        throw badRequest(`Unknown script operation '${op}'.`);
    }
  }

  private document(value: Json): JsonObject {
    if (!isObject(value)) throw badRequest("The document must be an object.");
    return value;
  }

  /**
   * A document of this partition by id or by `_rid` (scripts often pass `doc._self`). Uncharged:
   * Azure resolves a link as part of the operation that names it; a read charges itself.
   */
  private find(ref: string): JsonObject {
    return uncharged(() => {
      const byId = this.container.read(this.pk, ref);
      if (byId) return byId;
      const page = this.container.query(
        { pk: this.pk },
        prepareQuery({ query: "SELECT * FROM c WHERE c._rid = @rid", parameters: [{ name: "@rid", value: ref }] }),
      );
      if (page.items.length === 0) throw notFound();
      return page.items[0] as JsonObject;
    });
  }

  private query(spec: Json, options: JsonObject): { resource: Json; options: JsonObject } {
    const querySpec = typeof spec === "string" ? { query: spec } : isObject(spec) && typeof spec.query === "string" ? spec : undefined;
    if (!querySpec) throw badRequest("Invalid query.");
    const page = this.container.query(
      { pk: this.pk },
      prepareQuery({ query: querySpec.query as string, parameters: (querySpec.parameters ?? []) as { name: string; value: Json }[] }),
      typeof options.continuation === "string" ? options.continuation : undefined,
      typeof options.pageSize === "number" && options.pageSize > 0 ? options.pageSize : 100,
    );
    return { resource: page.items, options: page.continuation ? { continuation: page.continuation } : {} };
  }
}
