import type { Route } from "../../src/api/route-definition";

export type RouteMatch = { route: Route; params: Record<string, string> } | { status: 404 | 405; allow?: string[] };

interface CompiledRoute {
  route: Route;
  pattern: RegExp;
  names: string[];
}

/** Matches request paths (under the `/api` prefix) to the route table as the Functions host does. */
export class Router {
  private readonly compiled: CompiledRoute[];

  constructor(
    routes: readonly Route[],
    private readonly prefix = "/api",
  ) {
    this.compiled = routes.map((route) => {
      const names: string[] = [];
      const source = route.route
        .split("/")
        .map((segment) => {
          const param = /^\{(\w+)\}$/.exec(segment);
          if (!param) return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
          names.push(param[1]);
          return "([^/]+)";
        })
        .join("/");
      return { route, names, pattern: new RegExp(`^${source}/?$`, "i") };
    });
  }

  match(method: string, pathname: string): RouteMatch {
    if (!pathname.toLowerCase().startsWith(`${this.prefix}/`)) return { status: 404 };
    const path = pathname.slice(this.prefix.length + 1);
    const allow: string[] = [];
    for (const { route, pattern, names } of this.compiled) {
      const found = pattern.exec(path);
      if (!found) continue;
      if (!route.methods.includes(method.toUpperCase() as Route["method"])) {
        allow.push(...route.methods);
        continue;
      }
      let params: Record<string, string>;
      try {
        params = Object.fromEntries(names.map((name, i) => [name, decodeURIComponent(found[i + 1])]));
      } catch {
        return { status: 404 };
      }
      return { route, params };
    }
    return allow.length > 0 ? { status: 405, allow } : { status: 404 };
  }
}
