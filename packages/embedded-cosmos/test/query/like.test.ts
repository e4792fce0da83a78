import { describe, expect, it } from "vitest";
import { like } from "../../src/query/like";

describe("LIKE's patterns", () => {
  it("read % as any run, _ as any one character, brackets as a set or range, the rest as itself", () => {
    expect(like("apple", "a%", undefined)).toBe(true);
    expect(like("apple", "%pl%", undefined)).toBe(true);
    expect(like("apple", "a_ple", undefined)).toBe(true);
    expect(like("apple", "a_le", undefined)).toBe(false);
    expect(like("bat", "[a-c]at", undefined)).toBe(true);
    expect(like("rat", "[a-c]at", undefined)).toBe(false);
    expect(like("rat", "[^a-c]at", undefined)).toBe(true);
    expect(like("a.b", "a.b", undefined)).toBe(true);
    expect(like("axb", "a.b", undefined)).toBe(false);
    expect(like("(a+)", "(a+)", undefined)).toBe(true);
    expect(like("Apple", "a%", undefined)).toBe(false);
    expect(like("line\nbreak", "line%", undefined)).toBe(true);
  });

  it("take the ESCAPE character's next character as itself", () => {
    expect(like("50%", "50!%", "!")).toBe(true);
    expect(like("500", "50!%", "!")).toBe(false);
    expect(like("a_b", "a!_b", "!")).toBe(true);
    expect(() => like("a", "a", "!!")).toThrow(/one character/);
  });

  it("answer undefined unless both sides are strings", () => {
    expect(like(1, "1", undefined)).toBeUndefined();
    expect(like("1", null, undefined)).toBeUndefined();
  });
});
