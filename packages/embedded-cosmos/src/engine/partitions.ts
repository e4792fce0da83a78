import murmur from "murmurhash3js-revisited";
import type { Json } from "../wire/json";
import { badRequest } from "../wire/errors";

/**
 * Partitioning as the service and the SDK compute it: a logical partition key hashes to an
 * effective partition key (EPK, hex), and each physical partition owns a range of EPKs (its
 * partition key range). The SDK hashes keys itself to route bulk operations, so the hashing
 * here must match it byte for byte: hash version 2, MurmurHash3 x64 128 over the type-prefixed
 * key components (a hierarchical key hashes each component and concatenates).
 */
const PREFIX = { undefined: 0x00, null: 0x01, false: 0x02, true: 0x03, number: 0x05, string: 0x08, end: 0xff } as const;

function encodeComponent(value: Json | undefined | Record<string, never>): Buffer {
  if (value === undefined || (typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length === 0))
    return Buffer.from([PREFIX.undefined]);
  if (value === null) return Buffer.from([PREFIX.null]);
  if (typeof value === "boolean") return Buffer.from([value ? PREFIX.true : PREFIX.false]);
  if (typeof value === "number") {
    const bytes = Buffer.alloc(9);
    bytes[0] = PREFIX.number;
    bytes.writeDoubleLE(value, 1);
    return bytes;
  }
  if (typeof value === "string") return Buffer.concat([Buffer.from([PREFIX.string]), Buffer.from(value, "utf8"), Buffer.from([PREFIX.end])]);
  throw badRequest("A partition key value must be a string, number, boolean or null; an object or array is none.");
}

function hashV2(components: (Json | undefined)[]): string {
  const hex = murmur.x64.hash128(Buffer.concat(components.map(encodeComponent)));
  // The service writes the two 64-bit halves the other way round, and keeps the top two bits clear.
  const bytes = Buffer.from(hex.slice(16) + hex.slice(0, 16), "hex");
  bytes[0] &= 0x3f;
  return bytes.toString("hex").toUpperCase();
}

/** The EPK of a logical partition key (the header's JSON array of components). */
export function effectivePartitionKey(components: (Json | undefined)[], kind: string | undefined): string {
  return kind === "MultiHash" ? components.map((c) => hashV2([c])).join("") : hashV2(components);
}

export interface KeyRange {
  id: string;
  minInclusive: string;
  maxExclusive: string;
}

/**
 * `count` ranges splitting the EPK space evenly, as a container with that many physical
 * partitions has. Version-2 EPKs begin with a byte below 0x40, so the splits fall in [00, 40).
 */
export function keyRanges(count: number): KeyRange[] {
  const bound = (i: number) =>
    i === 0
      ? ""
      : i === count
        ? "FF"
        : Math.floor((i * 0x4000) / count)
            .toString(16)
            .toUpperCase()
            .padStart(4, "0");
  return Array.from({ length: count }, (_, i) => ({ id: String(i), minInclusive: bound(i), maxExclusive: bound(i + 1) }));
}

/** The range holding an EPK (ranges sorted, as keyRanges makes them). */
export function rangeOf(ranges: KeyRange[], epk: string): number {
  let low = 0;
  let high = ranges.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (ranges[mid].minInclusive <= epk) low = mid;
    else high = mid - 1;
  }
  return low;
}
