import { createHash } from "node:crypto";

/**
 * Conditional requests (RFC 9110 section 13): entity tags parsed from If-None-Match and
 * If-Match, compared weakly for GET (304) and strongly for writes (412).
 */
const ENTITY_TAG = /(W\/)?("[^"]*")/g;

/** The entity tags of a header value, each with whether it was weak (`W/"..."`). */
function entityTags(header: string): { weak: boolean; opaque: string }[] {
  return [...header.matchAll(ENTITY_TAG)].map((match) => ({ weak: match[1] !== undefined, opaque: match[2] }));
}

/** `If-None-Match`: `*`, or any listed tag equal to `etag` by weak comparison (W/ ignored). */
export function noneMatchHits(header: string | undefined, etag: string | undefined): boolean {
  if (header === undefined || etag === undefined) return false;
  if (header.trim() === "*") return true;
  const current = etag.replace(/^W\//, "");
  return entityTags(header).some((tag) => tag.opaque === current);
}

/**
 * `If-Match`: `*`, or any listed strong tag equal to `etag` (strong comparison: a weak tag
 * never matches). Returns undefined when the client sent no If-Match at all.
 */
export function ifMatchHolds(header: string | undefined, etag: string): boolean | undefined {
  if (header === undefined) return undefined;
  if (header.trim() === "*") return true;
  return entityTags(header).some((tag) => !tag.weak && tag.opaque === etag);
}

/**
 * The preconditions of a write (RFC 9110 13.1), evaluated against the current version before
 * anything is written: false when they fail (412, nothing written); true when the client named
 * this version (If-Match), so the write must still find it; undefined when the client set none.
 * `If-None-Match: *` fails on any existing resource; a listed tag fails by weak comparison.
 * A resource with no current version (`undefined`: one about to be created, or gone) fails any
 * If-Match, `*` included, and passes any If-None-Match.
 */
export function writePreconditions(ifMatch: string | undefined, ifNoneMatch: string | undefined): (etag: string | undefined) => boolean | undefined {
  return (etag) => {
    if (etag === undefined) return ifMatch === undefined ? undefined : false;
    if (noneMatchHits(ifNoneMatch, etag)) return false;
    return ifMatchHolds(ifMatch, etag);
  };
}

/** A strong entity tag for a JSON body that has none of its own (a list): the same items in the same order, the same tag. */
export const entityTagOf = (body: unknown) => `"${createHash("sha256").update(JSON.stringify(body)).digest("base64url").slice(0, 27)}"`;
