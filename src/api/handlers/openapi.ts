import { endpoint, entityTagOf } from "../http";
import type { OpenApiDocument } from "../openapi";
import type { Route } from "../route-definition";

/**
 * GET /openapi.json — the OpenAPI 3.1 description of the routes `described` gives, generated
 * (and tagged) once per instance, on first use: the route table holds this endpoint, so it
 * hands the table over lazily. The generator, zod-to-openapi and the response schemas load
 * with the first request for it: no other request needs them, so a cold start does not pay
 * for them (about 15 ms).
 */
export function openApiEndpoint(described: () => readonly Route[]) {
  let document: { body: OpenApiDocument; etag: string } | undefined;
  return endpoint({}, async () => {
    if (!document) {
      const { openApiDocument } = await import("../openapi.js");
      const body = openApiDocument(described());
      document = { body, etag: entityTagOf(body) };
    }
    return { status: 200, body: document.body, etag: document.etag, headers: { "cache-control": "public, max-age=300" } };
  });
}
