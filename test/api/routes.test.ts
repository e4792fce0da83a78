import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { routes } from "../../src/api/routes";

/** docs/api.md's table of routes is the route table's: a route added or removed without its row fails here. */
it("lists every route of the route table in docs/api.md, and no other", () => {
  const page = readFileSync(join(__dirname, "../../docs/api.md"), "utf8");
  const documented = [...page.matchAll(/^\| (GET|POST|PUT|PATCH|DELETE) `\/api\/([^`]+)` \|/gm)].map((m) => `${m[1]} ${m[2]}`);
  const registered = routes.map((route) => `${route.method} ${route.route}`);
  expect(documented.sort()).toEqual(registered.sort());
});
