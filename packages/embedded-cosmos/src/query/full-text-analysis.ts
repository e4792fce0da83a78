import { stemmer } from "stemmer";
import { keptOrMade } from "./kept";

/**
 * English text analysis for full-text search: what a full-text policy's `en-US` means here.
 * Azure does not publish its analyzer, so this is the one Lucene's English analyzer defines (the
 * analyzer Azure AI Search offers as `en.lucene`): words as Unicode's word boundaries find them
 * (UAX #29, as Lucene's standard tokenizer), lower-cased, a possessive `'s` dropped, Lucene's
 * English stop words left out, and the rest reduced to their Porter stem. packages/embedded-cosmos/docs/full-text.md says
 * where the rankings can differ from Azure's because of it.
 */

/** Lucene's English stop words (EnglishAnalyzer's default set). */
const STOP_WORDS: ReadonlySet<string> = new Set(
  "a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with".split(" "),
);

const words = new Intl.Segmenter("en", { granularity: "word" });

/** The terms of `text`, in order, each the stem of a word that is not a stop word. */
function analyzeText(text: string): string[] {
  const terms: string[] = [];
  for (const { segment, isWordLike } of words.segment(text)) {
    if (!isWordLike) continue;
    const word = segment.toLowerCase().replace(/['\u2019]s$/, "");
    if (word.length > 0 && !STOP_WORDS.has(word)) terms.push(stemmer(word));
  }
  return terms;
}

/** Texts analyzed lately: a ranked query analyzes every candidate's text, and the next query the same ones. */
const analyzed = new Map<string, string[]>();
const ANALYZED_TEXTS = 20_000;

/** The terms of a text (a string, or an array of strings as one text); none for anything else. */
export function termsOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap((part) => (typeof part === "string" ? termsOf(part) : []));
  if (typeof value !== "string") return [];
  return keptOrMade(analyzed, ANALYZED_TEXTS, value, () => analyzeText(value));
}

/** How often each term occurs in a text's terms. */
export function frequencies(terms: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
  return counts;
}
