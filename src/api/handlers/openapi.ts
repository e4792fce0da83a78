import { entityTagOf } from "../http";
import { endpoint } from "../http";
import { openApiDocument, type OpenApiDocument } from "../openapi";
import type { Route } from "../route-definition";

/**
 * GET /openapi.json — the OpenAPI 3.1 description of the routes `described` gives, generated
 * (and tagged) once per instance, on first use: the route table holds this endpoint, so it
 * hands the table over lazily.
 */
export function openApiEndpoint(described: () => readonly Route[]) {
  let document: { body: OpenApiDocument; etag: string } | undefined;
  return endpoint({}, async () => {
    if (!document) {
      const body = openApiDocument(described());
      document = { body, etag: entityTagOf(body) };
    }
    return { status: 200, body: document.body, etag: document.etag, headers: { "cache-control": "public, max-age=300" } };
  });
}
