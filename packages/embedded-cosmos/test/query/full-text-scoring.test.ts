import { describe, expect, it } from "vitest";
import { termsOf } from "../../src/query/full-text-analysis";
import { bm25, containsKeyword, statisticsOf, wordCount } from "../../src/query/full-text-scoring";

describe("English analysis (Lucene's English analyzer)", () => {
  it("splits on word boundaries, lower-cases, drops possessives and stop words, and stems", () => {
    expect(termsOf("The partition's keys were PARTITIONED, not partitioning!")).toEqual(["partit", "kei", "were", "partit", "partit"]);
    expect(termsOf("Cosmos DB: a read-heavy, well-known design (2019).")).toEqual(["cosmo", "db", "read", "heavi", "well", "known", "design", "2019"]);
    expect(termsOf(["Cats", "and", "dogs"])).toEqual(["cat", "dog"]);
    expect(termsOf(42)).toEqual([]);
  });

  it("finds a keyword by its stems; one of several words is there as often as its rarest word", () => {
    expect(containsKeyword("Partitioning data", "partitions")).toBe(true);
    expect(containsKeyword("Partitioning data", "partition key")).toBe(false);
    expect(containsKeyword("a partition key", "keys partition")).toBe(true);
    expect(containsKeyword("the cat", "the")).toBe(false);
    expect(wordCount("the cat and the mat")).toBe(2);
  });
});

describe("BM25 (k1 = 1.2, b = 0.75)", () => {
  it("scores as the formula does, with the statistics it is given", () => {
    // N = 4 documents, 2 hold the term, 20 words in all (average 5); this text: 2 of its 4 words.
    const idf = Math.log(1 + (4 - 2 + 0.5) / (2 + 0.5));
    const expected = (idf * 2 * 2.2) / (2 + 1.2 * (1 - 0.75 + (0.75 * 4) / 5));
    expect(bm25("cat cat mat hat", ["cats"], { documentCount: 4, totalWordCount: 20, hitCounts: [2] })).toBeCloseTo(expected, 12);
    expect(bm25("dog", ["cats"], { documentCount: 4, totalWordCount: 20, hitCounts: [2] })).toBe(0);
  });

  it("takes a container's statistics from its texts: documents, words, and the documents holding each keyword", () => {
    expect(statisticsOf(["cat mat", "the cat", undefined, "dogs"], ["cat", "dog", "bird"])).toEqual({
      documentCount: 4,
      totalWordCount: 4,
      hitCounts: [2, 1, 0],
    });
  });

  it("ranks a rarer keyword above a common one, and a shorter text above a longer one", () => {
    const statistics = { documentCount: 10, totalWordCount: 50, hitCounts: [8, 1] };
    expect(bm25("common rare", ["rare"], { ...statistics, hitCounts: [1] })).toBeGreaterThan(
      bm25("common rare", ["common"], { ...statistics, hitCounts: [8] }),
    );
    expect(bm25("rare word", ["rare"], statistics)).toBeGreaterThan(bm25("rare word and many other words besides", ["rare"], statistics));
  });
});
