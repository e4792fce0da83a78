import { describe, expect, it, vi } from "vitest";

const registered = vi.hoisted(() => [] as { name: string; options: Record<string, unknown> }[]);

// The @azure/functions `app` replaced by a recorder: what functions/ would register with the host.
vi.mock("@azure/functions", async (importOriginal) => {
  const actual = await importOriginal<typeof import("@azure/functions")>();
  return { ...actual, app: { ...actual.app, http: (name: string, options: Record<string, unknown>) => registered.push({ name, options }) } };
});

describe("functions/ registrations", () => {
  it("register exactly the route table: names, routes, methods, handlers run with the composition root's store", async () => {
    await import("../../functions/http");
    const { routes } = await import("../../src/api/routes");
    const { withAppServices } = await import("../../functions/composition-root");
    const { HttpRequest, InvocationContext } = await import("@azure/functions");
    expect(registered.map((r) => r.name)).toEqual(routes.map((r) => r.name));
    for (const route of routes) {
      const entry = registered.find((r) => r.name === route.name)!;
      // A GET function answers HEAD too: the host routes HEAD only to functions that list it.
      const methods = route.method === "GET" ? ["GET", "HEAD"] : [route.method];
      expect(entry.options).toMatchObject({ route: route.route, methods, authLevel: "anonymous" });
      // The registered handler runs the route's with the services its host runs the invocation with.
      const services = { store: { name: `the store of ${route.name}` } as never };
      const answer = { status: 204 };
      const handler = vi.spyOn(route, "handler").mockResolvedValue(answer);
      const request = new HttpRequest({ method: route.method, url: "http://localhost/api/x" });
      const context = new InvocationContext();
      const run = entry.options.handler as (request: unknown, context: unknown) => Promise<unknown>;
      expect(await withAppServices(services, () => run(request, context))).toBe(answer);
      expect(handler).toHaveBeenCalledWith(request, context, services);
    }
  });

  it("cover every route of the spec", async () => {
    const { routes } = await import("../../src/api/routes");
    const table = routes.map((r) => `${r.method} /api/${r.route}`);
    // Every route the product contract names; a route added beside them (CONTRIBUTING's recipe) is the table's own.
    expect(table).toEqual(
      expect.arrayContaining([
        "POST /api/users",
        "PUT /api/users/{userId}",
        "GET /api/users/{userId}",
        "GET /api/users/{userId}/posts",
        "DELETE /api/users/{userId}",
        "GET /api/users/{userId}/erasure",
        "GET /api/users/{userId}/export",
        "POST /api/posts",
        "PUT /api/posts/{postId}",
        "GET /api/posts/{postId}",
        "DELETE /api/posts/{postId}",
        "POST /api/posts/{postId}/comments",
        "GET /api/posts/{postId}/comments",
        "POST /api/posts/{postId}/likes",
        "DELETE /api/posts/{postId}/likes",
        "GET /api/posts/{postId}/likes",
        "GET /api/feed",
        "GET /api/openapi.json",
      ]),
    );
  });
});
