import { h, show } from "./dom";
import type { OpsFigures } from "../../src/telemetry/ops-figures";
import type { App } from "./app";

const REFRESH_MS = 2000;
const n = (value: number, digits = 0) => value.toLocaleString("en", { maximumFractionDigits: digits, minimumFractionDigits: digits });

const tile = (label: string, value: string, test: string) =>
  h("div", { class: "tile", "data-test": test }, h("div", { class: "tile-value" }, value), h("div", { class: "meta" }, label));

type Cell = string | number | HTMLElement;

/** A table whose cells carry their column's name, so a phone shows each row as a card of labelled figures (styles.css). */
function table(headers: string[], rows: Cell[][], test: string, empty: string): HTMLElement {
  if (rows.length === 0) return h("p", { class: "meta", "data-test": test }, empty);
  return h(
    "table",
    { "data-test": test },
    h("thead", {}, h("tr", {}, ...headers.map((header) => h("th", {}, header)))),
    h(
      "tbody",
      {},
      ...rows.map((row) => h("tr", {}, ...row.map((cell, i) => h("td", { "data-label": headers[i] }, typeof cell === "object" ? cell : String(cell))))),
    ),
  );
}

const ms = (value: number | null) => (value === null ? "–" : n(value, value < 10 ? 1 : 0));
const percent = (share: number) => `${n(share * 100, share > 0 && share < 0.01 ? 2 : 0)} %`;
const BARS = "▁▂▃▄▅▆▇█";

/** Requests per second over the last five minutes as a line of bars, oldest on the left. */
function sparkline(series: number[]): HTMLElement {
  const top = Math.max(...series, 0);
  const bars = series.map((value) => (top === 0 ? BARS[0] : BARS[Math.min(BARS.length - 1, Math.floor((value / top) * (BARS.length - 1)))])).join("");
  return h("span", { class: "sparkline", title: `requests / s, last 5 min, peak ${n(top, 1)}` }, bars || "–");
}

/** A link to a trace in the OTLP UI, when the host names one. */
const traceLink = (url: string | undefined, label: string) => (url ? h("a", { href: url, target: "_blank", rel: "noopener" }, label) : "");

function routeRow(route: OpsFigures["routes"][number]): Cell[] {
  const traces = h(
    "span",
    {},
    traceLink(route.slowestTraceUrl, "slowest"),
    route.slowestTraceUrl && route.errorTraceUrl ? " · " : "",
    traceLink(route.errorTraceUrl, "last 5xx"),
  );
  // Each window's figures in one cell, the last minute above the last five: the table fits a desktop column.
  const windows = (last1m: string, last5m: string) => h("span", { class: "windows" }, h("span", {}, last1m), h("span", {}, last5m));
  const latency = (w: OpsFigures["routes"][number]["last1m"]) => `${ms(w.p50Ms)} / ${ms(w.p95Ms)} / ${ms(w.p99Ms)}`;
  return [
    h("span", { class: "route" }, `${route.method} ${route.route}`),
    windows(n(route.last1m.perSecond, 1), n(route.last5m.perSecond, 1)),
    windows(latency(route.last1m), latency(route.last5m)),
    windows(percent(route.last1m.errorRate), percent(route.last5m.errorRate)),
    n(route.last5m.requests),
    n(route.requestUnitsPerRequest, 2),
    sparkline(route.series),
    traces,
  ];
}

/** A lease as a reader knows it: its consumer is a column already, so the range it covers (the lease id, whole, on hover). */
const leaseCell = (lease: string) => h("span", { title: lease }, `range ${lease.includes("..") ? lease.slice(lease.lastIndexOf("..") + 2) : lease}`);

function render(figures: OpsFigures): HTMLElement[] {
  const statuses = Object.entries(figures.statusClasses).sort(([a], [b]) => a.localeCompare(b));
  return [
    h(
      "div",
      { class: "tiles" },
      tile("requests / s, last minute", n(figures.requestsPerSecond, 1), "rate"),
      tile("RU of API requests, last 5 min", n(figures.requestUnits.apiLast5m, 1), "ru"),
      tile("RU in the background, last 5 min", n(figures.requestUnits.backgroundLast5m, 1), "ru-background"),
      tile("429 throttled, since start", n(figures.cosmos.throttled), "throttled"),
      tile("503 unavailable, since start", n(figures.cosmos.unavailable), "unavailable"),
    ),
    h("h2", {}, "Routes"),
    table(
      ["route", "req/s (1 / 5 min)", "p50 / p95 / p99 ms (1 / 5 min)", "5xx (1 / 5 min)", "requests, 5 min", "RU / request", "req/s, 5 min", "traces"],
      figures.routes.map(routeRow),
      "routes",
      "No API requests yet.",
    ),
    h(
      "p",
      { class: "meta" },
      `Answers since start: ${statuses.map(([status, count]) => `${status} ${n(count)}`).join(" · ") || "none yet"} · since start: ${n(figures.requestUnits.api, 1)} RU for the API, ${n(figures.requestUnits.background, 1)} RU in the background (change feed, orchestrations, estimator)`,
    ),
    h("h2", {}, "Orchestrations to look at"),
    table(
      ["orchestration", "instance", "state", "reason", "since", "trace"],
      figures.attention.map((a) => [a.name, a.instance, a.state, a.reason, new Date(a.since).toLocaleTimeString(), traceLink(a.traceUrl, "trace")]),
      "attention",
      "None retrying or running long.",
    ),
    h("h2", {}, "Change feed lag"),
    table(
      ["consumer", "lease", "changes waiting", "oldest waiting, s"],
      figures.lag.map((l) => [l.consumer, leaseCell(l.lease), l.items === undefined ? "?" : n(l.items), n(l.seconds, 1)]),
      "lag",
      "No estimate yet.",
    ),
    h("h2", {}, "Orchestrations"),
    table(
      ["", "how many"],
      [
        ...Object.entries(figures.orchestrations).map(([outcome, count]): Cell[] => [`${outcome}, since start`, n(count)]),
        ...Object.entries(figures.instances).map(([status, count]): Cell[] => [`${status} now`, n(count)]),
      ],
      "orchestrations",
      "None yet.",
    ),
    h(
      "p",
      { class: "meta" },
      `Likes per changeLikes call: ${figures.likeBatches.calls ? n(figures.likeBatches.likes / figures.likeBatches.calls, 1) : "–"} · feed cache hits: ${n(figures.feedCache.hits)} of ${n(figures.feedCache.hits + figures.feedCache.misses)} · updated ${new Date(figures.at).toLocaleTimeString()}`,
    ),
  ];
}

/**
 * #/ops: what the system does and costs, live (every two seconds) while the page is shown. The
 * figures come from `npm start` (loopback only); a deployed front end has none and says where
 * the same views are in Azure.
 */
export async function opsView(app: App): Promise<void> {
  const body = h("div", { class: "ops" });
  show(app.view, h("h1", {}, "Operations"), body);
  const refresh = async (): Promise<boolean> => {
    const response = await fetch("/local/ops", { cache: "no-store" });
    if (!response.ok) {
      show(
        body,
        h(
          "p",
          { class: "meta", "data-test": "no-ops" },
          "The live figures come with npm start. In Azure, the Application Insights workbook and the queries in docs/operations.md show the same.",
        ),
      );
      return false;
    }
    show(body, ...render((await response.json()) as OpsFigures));
    return true;
  };
  if (!(await refresh().catch(app.fail))) return;
  const timer = setInterval(() => {
    // Stops when the person leaves the page.
    if (!body.isConnected) return clearInterval(timer);
    void refresh().catch(() => clearInterval(timer));
  }, REFRESH_MS);
}
