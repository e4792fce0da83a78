import { describe, expect, it } from "vitest";
import { toShortForm, truncate } from "../../src/model/short-form";
import type { PostItem } from "../../src/model/items";

describe("short form", () => {
  it("keeps text of at most 200 code units as is", () => {
    expect(truncate("a".repeat(200))).toBe("a".repeat(200));
  });

  it("cuts longer text to at most 200 code units, ending in an ellipsis", () => {
    const cut = truncate("a".repeat(250));
    expect(cut).toBe("a".repeat(199) + "…");
  });

  it.each([
    ["a family emoji (joined by ZWJ)", "a".repeat(197) + "👨‍👩‍👧‍👦" + "tail"],
    ["e with combining accents", "a".repeat(199) + "e\u0301\u0302" + "tail"],
    ["a thumbs-up with a skin tone", "a".repeat(198) + "👍🏽" + "tail"],
  ])("never cuts through what a reader sees as one character: %s", (_what, text) => {
    const cut = truncate(text);
    expect(cut.length).toBeLessThanOrEqual(200);
    expect(cut.endsWith("…")).toBe(true);
    const graphemes = (s: string) => [...new Intl.Segmenter("en", { granularity: "grapheme" }).segment(s)].map((g) => g.segment);
    // Every character of the cut text, but the ellipsis, is a whole character of the original.
    const kept = graphemes(cut.slice(0, -1));
    expect(graphemes(text).slice(0, kept.length)).toEqual(kept);
  });

  it("never splits a surrogate pair at the boundary", () => {
    const text = "a".repeat(198) + "😀" + "tail"; // the emoji's pair is units 199-200: no room beside the ellipsis
    expect(truncate(text)).toBe("a".repeat(198) + "…");
    const fits = "a".repeat(197) + "😀" + "tail"; // the pair ends at 199, the ellipsis is 200
    expect(truncate(fits)).toBe("a".repeat(197) + "😀…");
  });

  it("makes a post's short form with its id and truncated content", () => {
    const post: PostItem = {
      id: "p1",
      type: "post",
      postId: "p1",
      userId: "u",
      userUsername: "U",
      title: "T",
      content: "😀".repeat(150),
      commentCount: 2,
      likeCount: 3,
      creationDate: "2026-01-01T00:00:00.000Z",
      ttl: 5,
      deleted: false,
    };
    const short = toShortForm(post);
    expect(short).toEqual({ ...post, content: "😀".repeat(99) + "…", ttl: undefined, deleted: undefined });
    expect(short).not.toHaveProperty("ttl");
  });
});
