import type { IncomingMessage, RequestListener } from "node:http";
import { gunzipSync } from "node:zlib";

/** One item as Application Insights' ingestion endpoint receives it from Azure Monitor's exporter. */
export interface Envelope {
  name: string;
  tags: Record<string, string>;
  /** The percentage of such items this one stands for was sampled at (absent: 100). */
  sampleRate?: number;
  data: { baseType: string; baseData: { name?: string; properties?: Record<string, string>; metrics?: { name: string }[] } };
}

/**
 * An ingestion endpoint's request handler: each batch the exporter sends (gzipped or not, a JSON
 * array or one envelope a line) handed to `onBatch` with its request, and answered as accepted
 * whole, as the service answers.
 */
export function ingestionEndpoint(onBatch: (envelopes: Envelope[], request: IncomingMessage) => void): RequestListener {
  return (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const text = (req.headers["content-encoding"] === "gzip" ? gunzipSync(body) : body).toString("utf8").trim();
      const items = (text.startsWith("[") ? JSON.parse(text) : text.split("\n").map((line) => JSON.parse(line))) as Envelope[];
      onBatch(items, req);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ itemsReceived: items.length, itemsAccepted: items.length, errors: [] }));
    });
  };
}
