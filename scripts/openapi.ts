import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openApiDocument } from "../src/api/openapi";
import { routes } from "../src/api/routes";

/** The OpenAPI document as the API serves it, pretty-printed: what `docs/openapi.json` holds. */
export const openApiText = () => `${JSON.stringify(openApiDocument(routes), null, 2)}\n`;

/** `npm run build` step: writes docs/openapi.json from the route table and its schemas. */
if (require.main === module) {
  const target = join(__dirname, "../../docs/openapi.json");
  mkdirSync(join(target, ".."), { recursive: true });
  writeFileSync(target, openApiText());
  console.log(`wrote ${target}`);
}
