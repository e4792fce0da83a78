// The date and time functions as Azure Cosmos DB defines them, over its ISO 8601 strings
// (`YYYY-MM-DDThh:mm:ss.fffffffZ`, UTC, up to seven fractional digits; the documentation's own
// examples leave out the `Z`, so it is optional). Time is counted in
// ticks of 100 ns, as a BigInt: a number cannot hold today's ticks exactly.

const TICKS_PER_MS = 10_000n;
const TICKS: Record<string, bigint> = {
  day: 864_000_000_000n,
  hour: 36_000_000_000n,
  minute: 600_000_000n,
  second: 10_000_000n,
  millisecond: TICKS_PER_MS,
  microsecond: 10n,
  nanosecond: 1n,
};

/** Each part's names, as the functions take them (case-insensitive). */
const PARTS: Record<string, string> = {
  year: "year", yyyy: "year", yy: "year",
  month: "month", mm: "month", m: "month",
  day: "day", dd: "day", d: "day",
  hour: "hour", hh: "hour",
  minute: "minute", mi: "minute", n: "minute",
  second: "second", ss: "second", s: "second",
  millisecond: "millisecond", ms: "millisecond",
  microsecond: "microsecond", mcs: "microsecond",
  nanosecond: "nanosecond", ns: "nanosecond",
}; // prettier-ignore

const FORMAT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,7}))?Z?$/;

const partOf = (name: unknown) => (typeof name === "string" ? PARTS[name.toLowerCase()] : undefined);
/** Floor division, for times before 1970. */
const floorDiv = (a: bigint, b: bigint) => (a >= 0n ? a / b : -((-a + b - 1n) / b));

/** Ticks since 1970 of a date and time string; undefined for anything else. */
function ticksOf(text: unknown): bigint | undefined {
  const match = typeof text === "string" ? FORMAT.exec(text) : null;
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number);
  const ms = Date.UTC(year, month - 1, day, hour, minute, second);
  const date = new Date(ms);
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59)
    return undefined;
  return BigInt(ms) * TICKS_PER_MS + BigInt((match[7] ?? "").padEnd(7, "0"));
}

/** The string for ticks since 1970, with seven fractional digits; undefined outside years 1 to 9999. */
function textOf(ticks: bigint): string | undefined {
  const ms = floorDiv(ticks, TICKS_PER_MS);
  const date = new Date(Number(ms));
  if (Number.isNaN(date.getTime()) || date.getUTCFullYear() < 1 || date.getUTCFullYear() > 9999) return undefined;
  const rest = String(ticks - ms * TICKS_PER_MS).padStart(4, "0");
  return date.toISOString().replace(/\.(\d{3})Z$/, `.$1${rest}Z`);
}

/** The year and month of ticks, and the ticks into that month. */
function calendarOf(ticks: bigint): { year: number; month: number; within: bigint } {
  const date = new Date(Number(floorDiv(ticks, TICKS_PER_MS)));
  const start = BigInt(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1)) * TICKS_PER_MS;
  return { year: date.getUTCFullYear(), month: date.getUTCMonth(), within: ticks - start };
}

/** `ticks` moved by `months` calendar months, its day kept or, past the month's end, its last day (as .NET's AddMonths). */
function addMonths(ticks: bigint, months: number): bigint {
  const { year, month, within } = calendarOf(ticks);
  const target = new Date(Date.UTC(year, month + months, 1));
  const daysInTarget = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  const day = floorDiv(within, TICKS.day);
  const kept = day < BigInt(daysInTarget) ? within : within - (day - BigInt(daysInTarget - 1)) * TICKS.day;
  return BigInt(target.getTime()) * TICKS_PER_MS + kept;
}

/** DateTimeAdd(part, number, dateTime): the date and time moved by a whole number of parts (a fraction is dropped). */
export function dateTimeAdd(partName: unknown, amount: unknown, dateTime: unknown): string | undefined {
  const part = partOf(partName);
  const ticks = ticksOf(dateTime);
  if (!part || ticks === undefined || typeof amount !== "number" || !Number.isFinite(amount)) return undefined;
  const whole = Math.trunc(amount);
  if (part === "year" || part === "month") return textOf(addMonths(ticks, part === "year" ? whole * 12 : whole));
  // Nanoseconds below a tick (100 ns) are dropped.
  return textOf(ticks + (part === "nanosecond" ? BigInt(Math.trunc(whole / 100)) : BigInt(whole) * TICKS[part]));
}

/** DateTimePart(part, dateTime): that part of the date and time, as an integer. */
export function dateTimePart(partName: unknown, dateTime: unknown): number | undefined {
  const part = partOf(partName);
  const ticks = ticksOf(dateTime);
  if (!part || ticks === undefined) return undefined;
  const date = new Date(Number(floorDiv(ticks, TICKS_PER_MS)));
  const fraction = ticks - floorDiv(ticks, TICKS.second) * TICKS.second; // ticks into the second
  const parts: Record<string, number> = {
    year: date.getUTCFullYear(),
    month: date.getUTCMonth() + 1,
    day: date.getUTCDate(),
    hour: date.getUTCHours(),
    minute: date.getUTCMinutes(),
    second: date.getUTCSeconds(),
    millisecond: Number(fraction / TICKS_PER_MS),
    microsecond: Number(fraction / 10n),
    nanosecond: Number(fraction * 100n),
  };
  return parts[part];
}

/** DateTimeDiff(part, start, end): how many boundaries of the part lie between the two (negative when end is before start). */
export function dateTimeDiff(partName: unknown, start: unknown, end: unknown): number | undefined {
  const part = partOf(partName);
  const [from, to] = [ticksOf(start), ticksOf(end)];
  if (!part || from === undefined || to === undefined) return undefined;
  if (part === "year" || part === "month") {
    const [a, b] = [calendarOf(from), calendarOf(to)];
    return part === "year" ? b.year - a.year : (b.year - a.year) * 12 + (b.month - a.month);
  }
  if (part === "nanosecond") return Number((to - from) * 100n);
  return Number(floorDiv(to, TICKS[part]) - floorDiv(from, TICKS[part]));
}
