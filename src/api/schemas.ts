import * as z from "zod";
import { LIMITS } from "../model/limits";

/** What a text field refuses, each with the reason a client is told. */
const REFUSED: { pattern: RegExp; what: string }[] = [
  // C0 and C1 controls and DEL: never text; content may still hold tabs and line breaks (below).
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  { pattern: /[\u0000-\u001f\u007f-\u009f]/u, what: "a control character" },
  // Half of a surrogate pair is not a character: it cannot be stored or shown faithfully.
  { pattern: /\p{Cs}/u, what: "half of a surrogate pair" },
  // Bidi embeddings, overrides and isolates make text display as something other than what it is.
  { pattern: /[\u202a-\u202e\u2066-\u2069]/u, what: "a bidirectional override or isolate character" },
  // Tag characters are invisible and can carry hidden text.
  { pattern: /[\u{e0000}-\u{e007f}]/u, what: "a tag character" },
];
/** The whitespace controls content keeps: tab, line feed, carriage return. */
const LINE_BREAKS_AND_TABS = /[\t\n\r]/;
/**
 * Something a reader can see: a letter, number, punctuation mark or symbol (a mark alone, a
 * space or a format character draws nothing) that Unicode does not class as a default ignorable
 * code point, which renderers draw as nothing: Hangul fillers, the grapheme joiner, variation
 * selectors. U+2800 BRAILLE PATTERN BLANK is the one symbol whose glyph is empty by definition.
 */
const VISIBLE = /(?![\p{Default_Ignorable_Code_Point}\u2800])[\p{L}\p{N}\p{P}\p{S}]/u;

const codePoint = (char: string) => `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;

/** The first refused character of `s`, named with its position (1-based, in characters) and why. */
function refusedCharacter(s: string, multiline: boolean): string | undefined {
  let position = 0;
  for (const char of s) {
    position++;
    if (multiline && LINE_BREAKS_AND_TABS.test(char)) continue;
    const rule = REFUSED.find(({ pattern }) => pattern.test(char));
    if (rule) return `must not contain ${codePoint(char)} (${rule.what}) at position ${position}`;
  }
  return undefined;
}

const text = (max: number, multiline: boolean) =>
  z
    .string()
    .max(max, `must be at most ${max} characters`)
    .refine((s) => VISIBLE.test(s), "must contain visible text")
    .superRefine((s, context) => {
      const refused = refusedCharacter(s, multiline);
      if (refused) context.addIssue({ code: z.ZodIssueCode.custom, message: refused });
    });

export const username = z.string().regex(LIMITS.usernamePattern, "must be 3-32 characters of A-Z, a-z, 0-9, '_', '.', '-'");

export const userBody = z.object({ username }).strict();

export const postBody = z
  .object({
    title: text(LIMITS.titleLength, false),
    content: text(LIMITS.postContentLength, true),
  })
  .strict();

export const commentBody = z.object({ content: text(LIMITS.commentLength, true) }).strict();

export const emptyBody = z.object({}).strict();

export const id = z.string().regex(LIMITS.idPattern, "is not a valid id");

// `limit=` (empty) is no limit given: the default applies.
const limit = z.preprocess(
  (value) => (value === "" ? undefined : value),
  z.coerce.number({ error: "must be a number" }).int("must be an integer").min(LIMITS.pageSize.min).max(LIMITS.pageSize.max).default(LIMITS.pageSize.default),
);

export const listQuery = z.object({ limit, continuationToken: z.string().min(1).max(2048).optional() });

export const idempotencyKey = z.string().regex(LIMITS.idempotencyKeyPattern, "must be 1-255 visible ASCII characters");

export const feedQuery = z.object({ limit });

/** The words of a search, as `q` gives them: split on white space, each once (case aside). */
export const searchTerms = (q: string): string[] => [
  ...new Map(
    q
      .trim()
      .split(/\s+/u)
      .map((term) => [term.toLowerCase(), term] as const),
  ).values(),
];

const { queryLength, terms, termLength } = LIMITS.search;

/** `q`: visible text, bounded in length, in words, and in each word's length, each with its own reason. */
const searchText = text(queryLength, false).superRefine((q, context) => {
  const words = searchTerms(q);
  if (words.length > terms) context.addIssue({ code: z.ZodIssueCode.custom, message: `must have at most ${terms} words (it has ${words.length})` });
  const long = words.find((word) => word.length > termLength);
  if (long)
    context.addIssue({
      code: z.ZodIssueCode.custom,
      message: `must have words of at most ${termLength} characters ('${long.slice(0, 20)}…' is ${long.length})`,
    });
});

export const searchQuery = z.object({ q: searchText, limit, continuationToken: z.string().min(1).max(2048).optional() });
