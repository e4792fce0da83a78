import type { BlogStore } from "../src/store/client";
import { searchPosts } from "../src/store/search";
import type { Dataset } from "./dataset";
import { fixed as f, measureCall, summarize, type PartitionCounts, type Summary } from "./measure";

/** GET /api/search's query on the benchmark's dataset: a word every post holds, and one only one post holds. */
export interface SearchFigures {
  searches: { words: string; results: number; summary: Summary }[];
}

/** A page of 20 for each search, `iterations` times, measured as the article's requests are (latency, requests, RU). */
export async function measureSearch(store: BlogStore, dataset: Dataset, iterations: number, partitionCounts: PartitionCounts): Promise<SearchFigures> {
  // Every post's content is "Lorem ipsum <its own token> ..." (bench/dataset.ts).
  const rare = /Lorem ipsum (\w+)/.exec(dataset.posts[Math.floor(dataset.posts.length / 2)].content)?.[1] ?? "none";
  const searches = [];
  for (const words of [["lorem"], [rare]]) {
    const { posts } = await searchPosts(store, words, 0, 20); // warms the plan and the SDK's caches
    const costs = [];
    for (let i = 0; i < iterations; i++) costs.push(await measureCall(() => searchPosts(store, words, 0, 20), partitionCounts));
    searches.push({ words: words.join(" "), results: posts.length, summary: summarize(costs) });
  }
  return { searches };
}

/** The search rows of the full report, beside Q3 and Q6 (V3) of the same run. */
export function searchTable(figures: SearchFigures, beside: { id: string; v3: Summary }[]): string[] {
  const line = (name: string, s: Summary) => `| ${name} | ${f(s.p50)} / ${f(s.p95)} | ${f(s.requests, 1)} | ${f(s.requestCharge, 2)} |`;
  return [
    "",
    "| GET /api/search (a page of 20), beside Q3 and Q6 | p50 / p95 ms | requests | RU |",
    "|---|---|---|---|",
    ...figures.searches.map((s) => line(`search '${s.words}' (${s.results} results)`, s.summary)),
    ...beside.filter((row) => row.id === "Q3" || row.id === "Q6").map((row) => line(`${row.id} (V3)`, row.v3)),
  ];
}
