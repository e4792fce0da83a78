import type { HttpMethod } from "@azure/functions";
import type { ZodTypeAny } from "zod";
import type { ApiHandler, Endpoint } from "./endpoint";
import type { ResponseName } from "./responses";

/** What the OpenAPI document says of a route, from the same schemas the handler validates with. */
export interface OperationDoc {
  summary: string;
  /** The article's request id (C1-C4, Q1-Q6), when it is one. */
  request?: string;
  /** Needs `Authorization: Bearer <JWT>`. */
  auth: boolean;
  /** Why this GET is not one request to one partition (every read is, but a download of a whole account). */
  readsSeveralPartitions?: string;
  query?: ZodTypeAny;
  body?: ZodTypeAny;
  /**
   * Success answers: status, what it means, and the body's shape by name (none for 204/304). By
   * name, so the route table builds no response schema: only the OpenAPI document needs them.
   */
  success: { status: number; description: string; schema?: ResponseName }[];
  /** Problem statuses this route can answer (400, 429, 503 and so on), each problem+json. */
  errors: number[];
  /** Request headers it honours beyond Authorization. */
  headers?: ("If-Match" | "If-None-Match" | "Idempotency-Key")[];
  /** Response headers beyond ETag and Server-Timing. */
  responseHeaders?: ("ETag" | "Location" | "Cache-Control" | "Idempotent-Replayed" | "Retry-After" | "Content-Disposition")[];
}

export interface Route {
  /** The Azure Functions function name (also the OpenAPI operationId). */
  name: string;
  /** The method the route is documented under. */
  method: HttpMethod;
  /** Every method it answers: a GET route answers HEAD too (RFC 9110 9.3.2), with the same handler. */
  methods: readonly HttpMethod[];
  /** Relative to the `api` route prefix (host.json). */
  route: string;
  /** Instrumented; the host registering it passes the app's services. */
  handler: ApiHandler;
  doc: OperationDoc;
}

/**
 * A route as the table gives it: its endpoint, and what the OpenAPI document says beyond what
 * the endpoint declares (caller, query, body and Idempotency-Key come from the endpoint).
 */
export interface RouteEntry {
  name: string;
  method: HttpMethod;
  route: string;
  endpoint: Endpoint;
  doc: Omit<OperationDoc, "auth" | "query" | "body">;
}
