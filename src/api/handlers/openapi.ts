import { entityTagOf } from "../conditional";
import { endpoint } from "../http";
import { openApiDocument, type OpenApiDocument } from "../openapi";
import { routes } from "../routes";

let described: { document: OpenApiDocument; etag: string } | undefined;

/** GET /openapi.json — the OpenAPI 3.1 description of this API, generated (and tagged) once per instance from the route table. */
export const getOpenApiDocument = endpoint(async () => {
  // Built on first use: the route table imports this handler, so it is complete only by then.
  if (!described) {
    const document = openApiDocument(routes);
    described = { document, etag: entityTagOf(document) };
  }
  return { status: 200, body: described.document, etag: described.etag, headers: { "cache-control": "public, max-age=300" } };
});
