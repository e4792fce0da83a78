import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { effectivePartitionKey, keyRanges, rangeOf } from "../../src/engine/partitions";

// The SDK's own hashing (internal, not exported): the embedded server must agree with it byte for byte.
const sdkRoot = dirname(createRequire(__filename).resolve("@azure/cosmos"));
const { hashPartitionKey } = createRequire(__filename)(join(sdkRoot, "utils/hashing/hash.js")) as {
  hashPartitionKey(key: unknown[], definition: { paths: string[]; kind: string; version: number }): string;
};

describe("effective partition keys, as the SDK computes them", () => {
  const keys: unknown[][] = [
    ["post"],
    ["user0001"],
    [""],
    ["é漢字😀"],
    [42],
    [-0.5],
    [1e21],
    [true],
    [false],
    [null],
    ["a".repeat(300)],
    ...Array.from({ length: 200 }, (_, i) => [`pk-${i}-${(i * 7919) % 1000}`]),
  ];

  it("hashes single keys (version 2) exactly as the SDK does", () => {
    for (const key of keys) {
      expect(effectivePartitionKey(key as never, "Hash"), JSON.stringify(key)).toBe(hashPartitionKey(key, { paths: ["/pk"], kind: "Hash", version: 2 }));
    }
  });

  it("hashes hierarchical keys exactly as the SDK does", () => {
    const key = ["tenant-1", "user-7", 3];
    expect(effectivePartitionKey(key, "MultiHash")).toBe(hashPartitionKey(key, { paths: ["/t", "/u", "/n"], kind: "MultiHash", version: 2 }));
  });

  it("splits the key space into contiguous ranges and places every key in exactly one", () => {
    const ranges = keyRanges(4);
    expect(ranges.map((r) => [r.minInclusive, r.maxExclusive])).toEqual([
      ["", "1000"],
      ["1000", "2000"],
      ["2000", "3000"],
      ["3000", "FF"],
    ]);
    const counts = [0, 0, 0, 0];
    for (const key of keys) {
      const epk = effectivePartitionKey(key as never, "Hash");
      const range = ranges[rangeOf(ranges, epk)];
      expect(epk >= range.minInclusive && epk < range.maxExclusive).toBe(true);
      counts[Number(range.id)]++;
    }
    expect(counts.every((c) => c > 20)).toBe(true); // roughly even
    expect(keyRanges(1)).toEqual([{ id: "0", minInclusive: "", maxExclusive: "FF" }]);
  });
});
