import { OpenAPIRegistry, OpenApiGeneratorV31, type ResponseConfig, type RouteConfig } from "@asteasolutions/zod-to-openapi";
import * as z from "zod";
import { problemDetails, RESPONSES } from "./responses";
import type { OperationDoc, Route } from "./route-definition";
import { id, idempotencyKey } from "./schemas";

// responses.ts has extended zod with `.openapi()`, used below for the request headers.

const TITLES: Record<number, string> = {
  400: "Bad input; `errors[]` names each invalid field, header or parameter",
  401: "No token, or an invalid one",
  403: "Not yours (or no profile yet)",
  404: "Does not exist (or was deleted)",
  409: "Conflict: username taken, or the profile exists",
  412: "If-Match or If-None-Match failed on the current version: nothing was written",
  413: "Body larger than 64 KiB",
  415: "Body is not JSON, or not in UTF-8",
  422: "The Idempotency-Key was used before with another body",
  429: "Cosmos DB throttled the request beyond the SDK's retries; retry after Retry-After seconds",
  500: "A stored item is malformed (written behind the API's back) and is not served as it is; the reason is logged",
  503: "Cosmos DB timed out or is unavailable, or the host is shutting down; retry after Retry-After seconds",
};

const header = (description: string, schema: { type: "string" | "integer" } = { type: "string" }) => ({ description, schema });
const RESPONSE_HEADERS = {
  ETag: header("Strong entity tag of the returned representation"),
  "Server-Timing": header("Cosmos DB requests the call made and their duration"),
  Location: header("URL of the created resource"),
  "Cache-Control": header("How long a CDN or browser may reuse the response"),
  "Idempotent-Replayed": header("`true` when this repeats the result of an earlier request with the same Idempotency-Key"),
  "Retry-After": header("Seconds to wait before trying again", { type: "integer" }),
  "Content-Disposition": header("`attachment`, with the file name to save the download under"),
};

const REQUEST_HEADERS = {
  "If-Match": z
    .string()
    .optional()
    .openapi({ description: "Only if the current ETag is one listed (strong comparison; `*`: only if the resource exists): 412 otherwise, nothing changed" }),
  "If-None-Match": z.string().optional().openapi({
    description: "ETags (or `*`) the client holds: a read answers 304 when one still matches (weak comparison), a write is 412 and changes nothing",
  }),
  "Idempotency-Key": idempotencyKey
    .optional()
    .openapi({ description: "A repeat by the same caller with the same key returns the first result and creates nothing" }),
};

/** `users/{userId}` → the path parameters as a zod object. */
function pathParameters(route: string): z.ZodObject | undefined {
  const names = [...route.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
  return names.length === 0 ? undefined : z.object(Object.fromEntries(names.map((name) => [name, id])));
}

type HeaderName = keyof typeof RESPONSE_HEADERS;

/** Response headers by reference to `components/headers`, so each is described once in the document. */
const headerRefs = (names: HeaderName[]) => Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));

/** Every problem answer of a status is the same: one `components/responses` entry per status, referenced by each operation. */
function problem(status: number) {
  const retry = status === 429 || status === 503;
  return {
    description: TITLES[status],
    headers: headerRefs(["Server-Timing", ...(retry ? (["Retry-After"] as const) : [])]),
    content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
  };
}

const problemRef = (status: number) => ({ $ref: `#/components/responses/Problem${status}` });

function success(route: Route, answer: OperationDoc["success"][number]): ResponseConfig {
  const names: HeaderName[] = [
    "Server-Timing",
    ...(route.method === "GET" || route.method === "PUT" ? (["ETag"] as const) : []),
    ...(route.doc.responseHeaders ?? []),
  ];
  return {
    description: answer.description,
    headers: headerRefs(names),
    ...(answer.schema ? { content: { "application/json": { schema: RESPONSES[answer.schema] } } } : {}),
  };
}

function operation(route: Route): RouteConfig {
  const { doc } = route;
  const requestHeaders = (doc.headers ?? []).map((name) => z.object({ [name]: REQUEST_HEADERS[name] }));
  return {
    method: route.method.toLowerCase() as RouteConfig["method"],
    path: `/api/${route.route}`,
    operationId: route.name,
    summary: doc.request ? `${doc.request}: ${doc.summary}` : doc.summary,
    ...(doc.auth ? { security: [{ bearerAuth: [] }] } : {}),
    request: {
      params: pathParameters(route.route),
      query: doc.query as z.ZodObject | undefined,
      headers: requestHeaders.length > 0 ? requestHeaders : undefined,
      // An absent body counts as `{}`: required only where `{}` is not valid.
      body: doc.body ? { required: !doc.body.safeParse({}).success, content: { "application/json": { schema: doc.body } } } : undefined,
    },
    responses: {
      ...Object.fromEntries(doc.success.map((answer) => [String(answer.status), success(route, answer)])),
      ...Object.fromEntries(doc.errors.map((status) => [String(status), problemRef(status)])),
    },
  };
}

/** The version of the HTTP contract (not of the package): it changes when the API does. */
const API_VERSION = "1.0.0";

export type OpenApiDocument = ReturnType<OpenApiGeneratorV31["generateDocument"]>;

/** The OpenAPI 3.1 description of `routes`, generated from the schemas the handlers validate with. */
export function openApiDocument(routes: readonly Route[]): OpenApiDocument {
  const registry = new OpenAPIRegistry();
  registry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description:
      "A token of the configured OIDC issuer (Entra ID in Azure), or locally an HS256 dev token (`npm run token -- <userId>`); the caller is its `sub`.",
  });
  registry.register("Problem", problemDetails);
  for (const [name, header] of Object.entries(RESPONSE_HEADERS)) registry.registerComponent("headers", name, header);
  for (const status of new Set(routes.flatMap((route) => route.doc.errors))) registry.registerComponent("responses", `Problem${status}`, problem(status));
  for (const route of routes) registry.registerPath(operation(route));
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: "3.1.0",
    info: {
      title: "Blog API",
      version: API_VERSION,
      description:
        "Users, posts, comments and likes over Azure Cosmos DB (the V3 model of 'How to model and partition data on Azure Cosmos DB using a real-world example'). Reads are anonymous; writes need a bearer token.",
    },
  });
}
