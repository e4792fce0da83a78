import { h, show } from "./dom";
import type { OpsFigures } from "../../src/telemetry/ops-figures";
import type { App } from "./views";

const REFRESH_MS = 2000;
const n = (value: number, digits = 0) => value.toLocaleString("en", { maximumFractionDigits: digits, minimumFractionDigits: digits });

const tile = (label: string, value: string, test: string) =>
  h("div", { class: "tile", "data-test": test }, h("div", { class: "tile-value" }, value), h("div", { class: "meta" }, label));

function table(headers: string[], rows: (string | number)[][], test: string, empty: string): HTMLElement {
  if (rows.length === 0) return h("p", { class: "meta", "data-test": test }, empty);
  return h(
    "table",
    { "data-test": test },
    h("thead", {}, h("tr", {}, ...headers.map((header) => h("th", {}, header)))),
    h("tbody", {}, ...rows.map((row) => h("tr", {}, ...row.map((cell) => h("td", {}, String(cell)))))),
  );
}

function render(figures: OpsFigures): HTMLElement[] {
  const statuses = Object.entries(figures.statusClasses).sort(([a], [b]) => a.localeCompare(b));
  return [
    h(
      "div",
      { class: "tiles" },
      tile("requests / s", n(figures.requestsPerSecond, 1), "rate"),
      tile("Cosmos DB RU in all", n(figures.cosmos.requestUnits, 1), "ru"),
      tile("429 throttled", n(figures.cosmos.throttled), "throttled"),
      tile("503 unavailable", n(figures.cosmos.unavailable), "unavailable"),
    ),
    h("h2", {}, "Request units per route"),
    table(
      ["route", "requests", "RU / request", "RU in all", "mean ms"],
      figures.routes.map((r) => [r.route, n(r.requests), n(r.requestUnitsPerRequest, 2), n(r.requestUnits, 1), n(r.meanMs, 1)]),
      "routes",
      "No API requests yet.",
    ),
    h("p", { class: "meta" }, `Answers: ${statuses.map(([status, count]) => `${status} ${n(count)}`).join(" · ") || "none yet"}`),
    h("h2", {}, "Change feed lag"),
    table(
      ["consumer", "lease", "changes waiting", "oldest waiting, s"],
      figures.lag.map((l) => [l.consumer, l.lease, l.items === undefined ? "?" : n(l.items), n(l.seconds, 1)]),
      "lag",
      "No leases yet.",
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
