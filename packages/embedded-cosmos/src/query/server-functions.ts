import { isDeepStrictEqual } from "node:util";
import { FULL_TEXT_FUNCTIONS } from "./full-text-scoring";
import { like } from "./like";
import { dateTimeAdd, dateTimeDiff, dateTimePart } from "./date-time";
import { badRequest } from "../wire/errors";

// The query language's functions the SQL engine lacks, or runs unlike Azure (date and time in
// date-time.ts, LIKE in like.ts), served by the server instead: engine.ts lowers the syntax
// tree's call of one to a call of `udf.$<name>`, a name no query can write, and hands the engine
// these as its user-defined functions.

/** Azure's limit on the length of REPLICATE's result. */
const REPLICATE_MAX_LENGTH = 10_000;

/** `a` and `b` compared by `test`, case-insensitively when `ignoreCase` is true; undefined unless both are strings. */
function stringTest(a: unknown, b: unknown, ignoreCase: unknown, test: (a: string, b: string) => boolean): boolean | undefined {
  if (typeof a !== "string" || typeof b !== "string") return undefined;
  return ignoreCase === true ? test(a.toLowerCase(), b.toLowerCase()) : test(a, b);
}

/** The JSON value `text` holds when it is of the kind `keep` accepts; undefined otherwise. */
function parsedAs(text: unknown, keep: (value: unknown) => boolean): unknown {
  if (typeof text !== "string") return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return keep(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The current time as Azure writes a date and time: ISO 8601, UTC, seven fractional digits. */
const currentDateTime = () => new Date().toISOString().replace(/\.(\d{3})Z$/, ".$10000Z");

/** .NET ticks (100 ns) between 0001-01-01 and the Unix epoch. */
const EPOCH_TICKS = 621_355_968_000_000_000;

/** The functions, by the name a lowered call uses. */
export const SERVER_FUNCTIONS = {
  $replicate(text: unknown, times: unknown): string | undefined {
    if (typeof text !== "string" || typeof times !== "number" || !Number.isFinite(times) || times < 0) return undefined;
    const count = Math.trunc(times);
    return text.length * count > REPLICATE_MAX_LENGTH ? undefined : text.repeat(count);
  },
  $like: like,
  ...FULL_TEXT_FUNCTIONS,
  $fullTextScoreOutsideRank(): never {
    throw badRequest("FullTextScore can only be used in ORDER BY RANK, alone or inside RRF.");
  },
  $iif: (condition: unknown, whenTrue: unknown, otherwise: unknown) => (condition === true ? whenTrue : otherwise),
  $stringEquals: (a: unknown, b: unknown, ignoreCase: unknown) => stringTest(a, b, ignoreCase, (x, y) => x === y),
  $contains: (a: unknown, b: unknown, ignoreCase: unknown) => stringTest(a, b, ignoreCase, (x, y) => x.includes(y)),
  $startsWith: (a: unknown, b: unknown, ignoreCase: unknown) => stringTest(a, b, ignoreCase, (x, y) => x.startsWith(y)),
  $endsWith: (a: unknown, b: unknown, ignoreCase: unknown) => stringTest(a, b, ignoreCase, (x, y) => x.endsWith(y)),
  $arrayContainsAny: (list: unknown, ...values: unknown[]) =>
    Array.isArray(list) ? values.some((value) => list.some((element) => isDeepStrictEqual(element, value))) : undefined,
  $arrayContainsAll: (list: unknown, ...values: unknown[]) =>
    Array.isArray(list) ? values.every((value) => list.some((element) => isDeepStrictEqual(element, value))) : undefined,
  $stringToArray: (text: unknown) => parsedAs(text, Array.isArray),
  $stringToObject: (text: unknown) => parsedAs(text, (value) => typeof value === "object" && value !== null && !Array.isArray(value)),
  $dateTimeAdd: dateTimeAdd,
  $dateTimeDiff: dateTimeDiff,
  $dateTimePart: dateTimePart,
  $getCurrentDateTime: currentDateTime,
  $getCurrentTimestamp: () => Date.now(),
  $getCurrentTicks: () => EPOCH_TICKS + Date.now() * 10_000,
};

type ServerFunction = keyof typeof SERVER_FUNCTIONS;

/** The functions served here for the query language's names (upper case, as the engine calls them). */
const BY_NAME: Record<string, ServerFunction> = {
  REPLICATE: "$replicate",
  FULLTEXTCONTAINS: "$fullTextContains",
  FULLTEXTCONTAINSALL: "$fullTextContainsAll",
  FULLTEXTCONTAINSANY: "$fullTextContainsAny",
  _FULLTEXTWORDCOUNT: "$fullTextWordCount",
  _FULLTEXTSCORE: "$fullTextScore",
  FULLTEXTSCORE: "$fullTextScoreOutsideRank",
  IIF: "$iif",
  STRINGEQUALS: "$stringEquals",
  ARRAY_CONTAINS_ANY: "$arrayContainsAny",
  ARRAY_CONTAINS_ALL: "$arrayContainsAll",
  STRINGTOARRAY: "$stringToArray",
  STRINGTOOBJECT: "$stringToObject",
  DATETIMEADD: "$dateTimeAdd",
  DATETIMEDIFF: "$dateTimeDiff",
  DATETIMEPART: "$dateTimePart",
  GETCURRENTDATETIME: "$getCurrentDateTime",
  GETCURRENTTIMESTAMP: "$getCurrentTimestamp",
  GETCURRENTTICKS: "$getCurrentTicks",
};

/** The string tests whose third argument (ignore case) the engine does not take. */
const WITH_IGNORE_CASE: Record<string, ServerFunction> = { CONTAINS: "$contains", STARTSWITH: "$startsWith", ENDSWITH: "$endsWith" };

/** The server's function for a call of `name` with `count` arguments; undefined for the engine's own. */
export function serverFunctionFor(name: string, count: number): ServerFunction | undefined {
  const upper = name.toUpperCase();
  return count === 3 && upper in WITH_IGNORE_CASE ? WITH_IGNORE_CASE[upper] : BY_NAME[upper];
}
