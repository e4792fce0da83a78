/** What the router needs of an HTTP function: its route template and methods, as registered. */
export interface RoutedFunction {
  route: string;
  methods: readonly string[];
}

export type RouteMatch<Route extends RoutedFunction> = { route: Route; params: Record<string, string> } | { status: 404 | 405; allow?: string[] };

interface CompiledRoute<Route> {
  route: Route;
  pattern: RegExp;
  names: string[];
}

/** Matches request paths (under the route prefix, `/api` by default) to HTTP functions' routes as the Functions host does. */
export class Router<Route extends RoutedFunction> {
  private readonly compiled: CompiledRoute<Route>[];

  constructor(
    routes: readonly Route[],
    private readonly prefix = "/api",
  ) {
    this.compiled = routes.map((route) => {
      const names: string[] = [];
      // Segments: literal, {name}, {name?} (optional, last), {*name} (the rest); a constraint ({id:int}) is not checked.
      const source = route.route
        .split("/")
        .map((segment, i) => {
          const param = /^\{(\*)?(\w+)(?::[^}?]+)?(\?)?\}$/.exec(segment);
          const slash = i === 0 ? "" : "/";
          if (!param) return slash + segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
          names.push(param[2]);
          if (param[1]) return `(?:${slash}(.*))?`;
          return param[3] ? `(?:${slash}([^/]+))?` : `${slash}([^/]+)`;
        })
        .join("");
      return { route, names, pattern: new RegExp(`^${source}/?$`, "i") };
    });
  }

  match(method: string, pathname: string): RouteMatch<Route> {
    if (!pathname.toLowerCase().startsWith(`${this.prefix}/`)) return { status: 404 };
    const path = pathname.slice(this.prefix.length + 1);
    const allow: string[] = [];
    for (const { route, pattern, names } of this.compiled) {
      const found = pattern.exec(path);
      if (!found) continue;
      if (!route.methods.includes(method.toUpperCase())) {
        allow.push(...route.methods);
        continue;
      }
      let params: Record<string, string>;
      try {
        params = Object.fromEntries(names.flatMap((name, i) => (found[i + 1] === undefined ? [] : [[name, decodeURIComponent(found[i + 1])]])));
      } catch {
        return { status: 404 };
      }
      return { route, params };
    }
    return allow.length > 0 ? { status: 405, allow } : { status: 404 };
  }
}
