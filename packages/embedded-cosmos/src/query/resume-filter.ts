import { badRequest } from "../wire/errors";
import { isObject, type Json } from "../wire/json";
import { documentNumber } from "../wire/resource-ids";

/**
 * Where a cross-partition ORDER BY resumes, as the .NET SDK (3.x) tells each key range when it
 * continues from its own continuation token: the ORDER BY values of the last result, and either
 * `exclude` (the range is past them) or the `_rid` of that result (the range it came from).
 */
export interface ResumeFilter {
  /** The ORDER BY values; `undefined` where the SDK sent `[]` (an undefined value). */
  values: (Json | undefined)[];
  rid?: string;
  exclude: boolean;
}

/** The body's `resumeFilter`, checked; undefined when there is none. */
export function resumeFilterOf(body: unknown): ResumeFilter | undefined {
  const filter = isObject(body) ? body.resumeFilter : undefined;
  if (filter === undefined || filter === null) return undefined;
  if (!isObject(filter) || !Array.isArray(filter.value) || filter.value.length === 0) throw badRequest("resumeFilter needs a list of values.");
  const values = filter.value.map((value) => {
    if (Array.isArray(value) && value.length === 0) return undefined;
    // A complex value comes as a hash of it ({type, low, high}), which cannot be compared here.
    if (value !== null && typeof value === "object") throw badRequest("Resuming an ORDER BY on arrays or objects is not supported by the embedded server.");
    return value;
  });
  if (filter.rid !== undefined && typeof filter.rid !== "string") throw badRequest("resumeFilter.rid must be a string.");
  return { values, rid: filter.rid as string | undefined, exclude: filter.exclude === true };
}

/** Cosmos DB's order across types: undefined, null, booleans, numbers, strings, then arrays and objects. */
function rank(value: Json | undefined): number {
  if (value === undefined) return 0;
  if (value === null) return 1;
  if (typeof value === "boolean") return 2;
  if (typeof value === "number") return 3;
  if (typeof value === "string") return 4;
  return 5;
}

function compare(a: Json | undefined, b: Json | undefined): number {
  const byType = rank(a) - rank(b);
  if (byType !== 0) return byType;
  if (typeof a === "number" || typeof a === "string" || typeof a === "boolean") return a < (b as typeof a) ? -1 : a > (b as typeof a) ? 1 : 0;
  return 0;
}

/** The sort directions of a query's ORDER BY as the gateway's plan rewrites it (each column says ASC or DESC). */
export function orderDirections(sql: string): number[] {
  const orderBy = /\bORDER\s+BY\b([\s\S]*)$/i.exec(sql)?.[1] ?? "";
  return [...orderBy.matchAll(/\b(ASC|DESC)\b/gi)].map((match) => (match[1].toUpperCase() === "DESC" ? -1 : 1));
}

/**
 * The results (of the rewritten ORDER BY query: `_rid`, `orderByItems`, `payload`) at or after
 * the resume point in the query's order: after the values when `exclude`; at the values from
 * `rid` on (ties go in the order of their documents' numbers, ascending in either direction,
 * as the query execution info header says; the SDK skips the result it had); else at the values on.
 */
export function resumeAt(results: Json[], filter: ResumeFilter, directions: number[]): Json[] {
  return results.filter((result) => {
    const { orderByItems, _rid } = result as { orderByItems?: { item?: Json }[]; _rid?: string };
    let order = 0;
    for (let i = 0; i < filter.values.length && order === 0; i++) order = compare(orderByItems?.[i]?.item, filter.values[i]) * (directions[i] ?? 1);
    if (order !== 0) return order > 0;
    if (filter.exclude) return false;
    if (filter.rid === undefined) return true;
    return (documentNumber(_rid ?? "") ?? 0n) >= (documentNumber(filter.rid) ?? 0n);
  });
}
