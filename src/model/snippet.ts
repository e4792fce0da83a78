import { stemmer } from "stemmer";
import { truncate } from "./short-form";

/** A stretch of a post's text around the first word a search matched, and where the matched words are in it. */
interface Snippet {
  text: string;
  /** `[start, end)` of each matched word in `text`, in UTF-16 code units, for the front end to mark. */
  marks: [number, number][];
}

/** How long a snippet is, and how much of it comes before the first match. */
const SNIPPET_LENGTH = 180;
const BEFORE_MATCH = 60;
const ELLIPSIS = "…";

/** Made on the first search: a segmenter loads ICU's break rules. */
let words: Intl.Segmenter | undefined;

/** A word as search compares it: lower case, without a possessive, stemmed (as the full-text index's English analysis does). */
const stemOf = (word: string) => stemmer(word.toLowerCase().replace(/['\u2019]s$/, ""));

/** The searched words in `text`: where each word whose stem is one of the terms' stems starts and ends. */
function matchedWords(text: string, stems: ReadonlySet<string>): [number, number][] {
  words ??= new Intl.Segmenter("en", { granularity: "word" });
  const found: [number, number][] = [];
  for (const { segment, index, isWordLike } of words.segment(text)) if (isWordLike && stems.has(stemOf(segment))) found.push([index, index + segment.length]);
  return found;
}

/**
 * The snippet of `content` for a search's terms: from a little before the first matched word
 * (at a word's start), about SNIPPET_LENGTH long, an ellipsis where it cuts; the content's start
 * when the words matched only the title.
 */
export function snippetOf(content: string, terms: readonly string[]): Snippet {
  const stems = new Set(terms.flatMap((term) => (term.trim() ? [stemOf(term.trim())] : [])));
  const matches = matchedWords(content, stems);
  if (matches.length === 0 || matches[0][0] <= BEFORE_MATCH) {
    const text = truncate(content, SNIPPET_LENGTH);
    return { text, marks: matchedWords(text, stems) };
  }
  const from = content.lastIndexOf(" ", matches[0][0] - BEFORE_MATCH) + 1;
  const rest = truncate(content.slice(from), SNIPPET_LENGTH - ELLIPSIS.length);
  const text = ELLIPSIS + rest;
  return { text, marks: matchedWords(text, stems) };
}
