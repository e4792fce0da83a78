import { frequencies, termsOf } from "./full-text-analysis";

/**
 * What BM25 needs to know of the whole container, for one searched path: as the gateway's
 * statistics query gathers it (`COUNT(1)`, `SUM(_FullTextWordCount(path))`, and per keyword
 * `COUNTIF(FullTextContains(path, keyword))`) and the SDKs add it up over the partitions.
 */
export interface TextStatistics {
  documentCount: number;
  totalWordCount: number;
  hitCounts: number[];
}

/**
 * BM25's two free parameters. Azure does not publish its own; these are Lucene's and Azure AI
 * Search's defaults (term frequency saturation, and how much a long text is discounted).
 */
const K1 = 1.2;
const B = 0.75;

/**
 * How often a text holds a keyword: a keyword of several words (after analysis) is there as often
 * as its rarest word, and a keyword that analyzes to nothing (a stop word) is never there.
 */
function occurrences(counts: Map<string, number>, keyword: unknown): number {
  const terms = termsOf(keyword);
  return terms.length === 0 ? 0 : Math.min(...terms.map((term) => counts.get(term) ?? 0));
}

/** Whether a text holds a keyword (FullTextContains). */
export const containsKeyword = (text: unknown, keyword: unknown): boolean => occurrences(frequencies(termsOf(text)), keyword) > 0;

/** The number of terms of a text (_FullTextWordCount: its length for BM25). */
export const wordCount = (text: unknown): number => termsOf(text).length;

/**
 * A text's BM25 score for the keywords, with the container's statistics: per keyword, its
 * inverse document frequency times its saturated frequency in the text, normalized by the text's
 * length against the average length (total words over documents, as the statistics give them).
 */
export function bm25(text: unknown, keywords: readonly unknown[], statistics: TextStatistics): number {
  const terms = termsOf(text);
  const counts = frequencies(terms);
  const { documentCount, totalWordCount, hitCounts } = statistics;
  const averageLength = documentCount > 0 ? totalWordCount / documentCount : 0;
  const lengthNorm = averageLength > 0 ? 1 - B + (B * terms.length) / averageLength : 1;
  let score = 0;
  keywords.forEach((keyword, index) => {
    const frequency = occurrences(counts, keyword);
    if (frequency === 0) return;
    const holding = hitCounts[index] ?? 0;
    const idf = Math.log(1 + (documentCount - holding + 0.5) / (holding + 0.5));
    score += (idf * frequency * (K1 + 1)) / (frequency + K1 * lengthNorm);
  });
  return score;
}

/** The statistics of the texts of a set of documents (one per document, undefined where it has none) for the keywords. */
export function statisticsOf(texts: readonly unknown[], keywords: readonly unknown[]): TextStatistics {
  return {
    documentCount: texts.length,
    totalWordCount: texts.reduce<number>((sum, text) => sum + wordCount(text), 0),
    hitCounts: keywords.map((keyword) => texts.filter((text) => containsKeyword(text, keyword)).length),
  };
}

/**
 * The full-text functions as the SQL engine calls them (its user-defined functions, under names
 * no query can write): the four of the query language, and the two the gateway's rewritten
 * queries use (`_FullTextWordCount`, `_FullTextScore` with the container's statistics filled in).
 */
export const FULL_TEXT_FUNCTIONS = {
  $fullTextContains: (text: unknown, keyword: unknown) => containsKeyword(text, keyword),
  $fullTextContainsAll: (text: unknown, ...keywords: unknown[]) => keywords.length > 0 && keywords.every((keyword) => containsKeyword(text, keyword)),
  $fullTextContainsAny: (text: unknown, ...keywords: unknown[]) => keywords.some((keyword) => containsKeyword(text, keyword)),
  $fullTextWordCount: (text: unknown) => wordCount(text),
  $fullTextScore: (text: unknown, keywords: unknown, documentCount: unknown, totalWordCount: unknown, hitCounts: unknown) =>
    bm25(text, Array.isArray(keywords) ? keywords : [keywords], {
      documentCount: Number(documentCount) || 0,
      totalWordCount: Number(totalWordCount) || 0,
      hitCounts: Array.isArray(hitCounts) ? hitCounts.map(Number) : [],
    }),
};
