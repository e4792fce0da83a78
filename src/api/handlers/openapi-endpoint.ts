import { endpoint, keptAnswer, type ApiResult } from "../endpoint";
import type { Route } from "../route-definition";

/**
 * GET /openapi.json — the OpenAPI 3.1 description of the routes `described` gives, generated
 * (and tagged) once per instance, on first use: the route table holds this endpoint, so it
 * hands the table over lazily. The generator, zod-to-openapi and the response schemas load
 * with the first request for it: no other request needs them, so a cold start does not pay
 * for them (about 15 ms).
 */
export function openApiEndpoint(described: () => readonly Route[]) {
  let document: ApiResult | undefined;
  return endpoint({}, async () => {
    if (!document) {
      const { openApiDocument } = await import("../openapi.js");
      document = keptAnswer(openApiDocument(described()), { "cache-control": "public, max-age=300" });
    }
    return document;
  });
}
