import { describe, expect, it } from "vitest";
import { dateTimeAdd, dateTimeDiff, dateTimePart } from "../../src/query/date-time";

// Azure Cosmos DB's documentation's examples (DateTimeDiff's dates, without the Z as it writes them), and edges.
describe("the date and time functions", () => {
  it("DateTimeAdd moves a date by whole parts, keeping seven fractional digits", () => {
    expect(dateTimeAdd("mm", 1, "2020-07-09T23:20:13.4575530Z")).toBe("2020-08-09T23:20:13.4575530Z");
    expect(dateTimeAdd("hh", -2, "2020-07-09T23:20:13.4575530Z")).toBe("2020-07-09T21:20:13.4575530Z");
    expect(dateTimeAdd("yyyy", 1, "2020-02-29T00:00:00Z")).toBe("2021-02-28T00:00:00.0000000Z");
    expect(dateTimeAdd("month", 1, "2026-01-31T10:00:00.5Z")).toBe("2026-02-28T10:00:00.5000000Z");
    expect(dateTimeAdd("dd", 1.9, "2026-12-31T00:00:00Z")).toBe("2027-01-01T00:00:00.0000000Z");
    expect(dateTimeAdd("mcs", 1, "2026-01-01T00:00:00.0000000Z")).toBe("2026-01-01T00:00:00.0000010Z");
    expect(dateTimeAdd("ns", 500, "2026-01-01T00:00:00.0000000Z")).toBe("2026-01-01T00:00:00.0000005Z");
  });

  it("DateTimePart reads one part as an integer", () => {
    const at = "2016-05-29T08:30:00.1301617Z";
    expect(["yyyy", "mm", "dd", "hh", "mi", "ss", "ms", "mcs", "ns"].map((part) => dateTimePart(part, at))).toEqual([
      2016, 5, 29, 8, 30, 0, 130, 130161, 130161700,
    ]);
  });

  it("DateTimeDiff counts the part's boundaries crossed, signed", () => {
    const [later, earlier] = ["2019-02-04T16:00:00.0000000", "2018-03-05T05:00:00.0000000"];
    expect(["yyyy", "mm", "dd", "hh", "ss"].map((part) => dateTimeDiff(part, later, earlier))).toEqual([-1, -11, -336, -8075, -29_070_000]);
    expect(["yyyy", "mm", "dd", "hh", "ss"].map((part) => dateTimeDiff(part, earlier, later))).toEqual([1, 11, 336, 8075, 29_070_000]);
    const [start, end] = ["2028-01-01T01:02:03.1234527Z", "2020-01-03T01:02:03.1234567Z"];
    expect(dateTimeDiff("yyyy", start, end)).toBe(-8);
    expect(dateTimeDiff("mm", start, end)).toBe(-96);
    expect(dateTimeDiff("dd", start, end)).toBe(-2920);
    expect(dateTimeDiff("hh", start, end)).toBe(-70080);
    expect(dateTimeDiff("ns", start, end)).toBe(-252_287_999_999_996_000);
    expect(dateTimeDiff("dd", "2026-01-01T23:59:59Z", "2026-01-02T00:00:00Z")).toBe(1);
  });

  it("answer undefined for a part or date and time they do not know", () => {
    expect(dateTimeAdd("week", 1, "2026-01-01T00:00:00Z")).toBeUndefined();
    expect(dateTimeAdd("dd", 1, "2026-02-30T00:00:00Z")).toBeUndefined();
    expect(dateTimePart("dd", "2026-01-01")).toBeUndefined();
    expect(dateTimeDiff("dd", 1, "2026-01-01T00:00:00Z")).toBeUndefined();
    expect(dateTimeAdd("yyyy", 1, "9999-06-01T00:00:00Z")).toBeUndefined();
  });
});
