import { randomBytes } from "node:crypto";
import type { Clock } from "./clock";

/** System properties Cosmos DB adds to every resource. */
export interface SystemProperties {
  _rid: string;
  _self: string;
  _etag: string;
  _ts: number;
}

let etagCounter = 0;

/** A fresh, opaque, quoted ETag like the service's (`"<hex>-0000-..."`). */
export function newEtag(): string {
  etagCounter += 1;
  return `"${etagCounter.toString(16).padStart(8, "0")}-${randomBytes(2).toString("hex")}-0000-0000-${Date.now().toString(16).padStart(12, "0")}"`;
}

/** Seconds since the epoch on `clock`: what `_ts` and TTL expiry count in. */
export const secondsOf = (clock: Clock) => Math.floor(clock.now().getTime() / 1000);

/** A resource's system properties: its id (wire/resource-ids.ts), link, a new ETag and the time. */
export function systemProperties(rid: string, self: string, ts: number): SystemProperties {
  return { _rid: rid, _self: self, _etag: newEtag(), _ts: ts };
}

/** Ids may not contain the characters Cosmos DB reserves for paths. */
export function checkId(id: unknown): string | undefined {
  if (typeof id !== "string" || id.length === 0) return "The input content is invalid because the required property, id, is missing.";
  if (id.length > 255) return "Resource id exceeds the maximum allowed length of 255.";
  if (/[/\\?#]/.test(id))
    return "The input name is invalid. Ensure to provide a unique non-empty string less than '255' characters without '/', '\\\\', '?' or '#'.";
  return undefined;
}
