import { badRequest } from "../wire/errors";
import { keptOrMade } from "./kept";

// LIKE as Azure Cosmos DB reads its pattern: `%` any run of characters, `_` any one character,
// `[a-f]` and `[^a-f]` one character in (or not in) a set or range, everything else itself,
// case-sensitive; the ESCAPE character makes the next character itself.

const cache = new Map<string, RegExp>();
const MAX_CACHED = 500;

const literal = (ch: string) => ch.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&");

/** The regular expression `pattern` stands for (whole-string, code points). */
function expressionOf(pattern: string, escape: string | undefined): RegExp {
  let source = "";
  const chars = [...pattern];
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i];
    if (ch === escape && i + 1 < chars.length) source += literal(chars[++i]);
    else if (ch === "%") source += "[^]*";
    else if (ch === "_") source += "[^]";
    else if (ch === "[" && chars.indexOf("]", i + 1) > i + 1) {
      const end = chars.indexOf("]", i + 1);
      const set = chars.slice(i + 1, end);
      const negate = set[0] === "^" && set.length > 1;
      const members = (negate ? set.slice(1) : set).map((c, k, all) => (c === "-" && k > 0 && k < all.length - 1 ? "-" : literal(c)));
      source += `[${negate ? "^" : ""}${members.join("")}]`;
      i = end;
    } else source += literal(ch);
  }
  return new RegExp(`^${source}$`, "u");
}

/** Whether `value` matches `pattern` (undefined unless both are strings, as Azure answers). */
export function like(value: unknown, pattern: unknown, escape: unknown): boolean | undefined {
  if (escape !== undefined && (typeof escape !== "string" || [...escape].length !== 1)) throw badRequest("The ESCAPE of LIKE must be one character.");
  if (typeof value !== "string" || typeof pattern !== "string") return undefined;
  const expression = keptOrMade(cache, MAX_CACHED, `${escape ?? ""}\u0000${pattern}`, () => expressionOf(pattern, escape));
  return expression.test(value);
}
