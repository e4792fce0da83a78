import { z } from "zod";
import { LIMITS } from "../model/limits";

// Control characters are never valid text here; content may still hold tabs and line breaks.
const CONTROL = /[\u0000-\u001f\u007f]/;
const CONTROL_EXCEPT_WHITESPACE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
// Half of a surrogate pair is not a character: it cannot be stored or shown faithfully.
const LONE_SURROGATE = /\p{Cs}/u;
// Bidi embeddings, overrides and isolates make text display as something other than what it is.
const BIDI_CONTROL = /[\u202a-\u202e\u2066-\u2069]/;
// Something a reader can see: not only spaces and zero-width or format characters.
const VISIBLE = /[^\p{White_Space}\p{Cf}\p{Cc}]/u;

const text = (max: number, multiline: boolean) =>
  z
    .string()
    .max(max, `must be at most ${max} characters`)
    .refine((s) => VISIBLE.test(s), "must contain visible text")
    .refine((s) => !(multiline ? CONTROL_EXCEPT_WHITESPACE : CONTROL).test(s), "must not contain control characters")
    .refine((s) => !LONE_SURROGATE.test(s), "must not contain half of a surrogate pair")
    .refine((s) => !BIDI_CONTROL.test(s), "must not contain bidirectional override or isolate characters");

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

const limit = z.coerce
  .number({ invalid_type_error: "must be a number" })
  .int("must be an integer")
  .min(LIMITS.pageSize.min)
  .max(LIMITS.pageSize.max)
  .default(LIMITS.pageSize.default);

export const listQuery = z.object({ limit, continuationToken: z.string().min(1).max(2048).optional() });

export const idempotencyKey = z.string().regex(LIMITS.idempotencyKeyPattern, "must be 1-255 visible ASCII characters");

export const feedQuery = z.object({ limit });
