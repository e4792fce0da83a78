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
  return [
    `${route.method} ${route.route}`,
    n(route.last5m.requests),
    n(route.last1m.perSecond, 1),
    `${ms(route.last1m.p50Ms)} / ${ms(route.last1m.p95Ms)} / ${ms(route.last1m.p99Ms)}`,
    percent(route.last1m.errorRate),
    n(route.last5m.perSecond, 1),
    `${ms(route.last5m.p50Ms)} / ${ms(route.last5m.p95Ms)} / ${ms(route.last5m.p99Ms)}`,
    percent(route.last5m.errorRate),
    n(route.requestUnitsPerRequest, 2),
    sparkline(route.series),
    traces,
  ];
}

function render(figures: OpsFigures): HTMLElement[] {
  const statuses = Object.entries(figures.statusClasses).sort(([a], [b]) => a.localeCompare(b));
  return [
    h(
      "div",
      { class: "tiles" },
      tile("requests / s, last minute", n(figures.requestsPerSecond, 1), "rate"),
      tile("RU of API requests", n(figures.requestUnits.api, 1), "ru"),
      tile("RU in the background", n(figures.requestUnits.background, 1), "ru-background"),
      tile("429 throttled", n(figures.cosmos.throttled), "throttled"),
      tile("503 unavailable", n(figures.cosmos.unavailable), "unavailable"),
    ),
    h("h2", {}, "Routes"),
    table(
      [
        "route",
        "requests 5 min",
        "req/s 1 min",
        "p50 / p95 / p99 ms, 1 min",
        "5xx 1 min",
        "req/s 5 min",
        "p50 / p95 / p99 ms, 5 min",
        "5xx 5 min",
        "RU / request",
        "last 5 min",
        "traces",
      ],
      figures.routes.map(routeRow),
      "routes",
      "No API requests yet.",
    ),
    h(
      "p",
      { class: "meta" },
      `Answers since start: ${statuses.map(([status, count]) => `${status} ${n(count)}`).join(" · ") || "none yet"} · last 5 min: ${n(figures.requestUnits.apiLast5m, 1)} RU for the API, ${n(figures.requestUnits.backgroundLast5m, 1)} RU in the background (change feed, orchestrations, estimator)`,
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
      figures.lag.map((l) => [l.consumer, l.lease, l.items === undefined ? "?" : n(l.items), n(l.seconds, 1)]),
      "lag",
      "No estimate yet.",
    ),
    h("h2", {}, "Orchestrations"),
    table(
      ["", ...Object.keys(figures.orchestrations), ...Object.keys(figures.instances).map((status) => `now ${status}`)],
      [["count", ...Object.values(figures.orchestrations).map((v) => n(v)), ...Object.values(figures.instances).map((v) => n(v))]],
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
