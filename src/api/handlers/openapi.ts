import { entityTagOf } from "../conditional";
import { endpoint } from "../http";
import { openApiDocument, type OpenApiDocument } from "../openapi";
import { routes } from "../routes";

let document: OpenApiDocument | undefined;

/** GET /openapi.json — the OpenAPI 3.1 description of this API, generated once per instance from the route table. */
export const getOpenApiDocument = endpoint(async () => {
  // Built on first use: the route table imports this handler, so it is complete only by then.
  document ??= openApiDocument(routes);
  return { status: 200, body: document, etag: entityTagOf(document), headers: { "cache-control": "public, max-age=300" } };
});
