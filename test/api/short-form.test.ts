import { describe, expect, it } from "vitest";
import { toShortForm, truncate } from "../../src/model/short-form";
import type { PostItem } from "../../src/model/items";

describe("short form", () => {
  it("keeps text of at most 200 code units as is", () => {
    expect(truncate("a".repeat(200))).toBe("a".repeat(200));
  });

  it("cuts longer text to 200 code units", () => {
    expect(truncate("a".repeat(250))).toHaveLength(200);
  });

  it("never splits a surrogate pair at the boundary", () => {
    const text = "a".repeat(199) + "😀" + "tail"; // the emoji's high surrogate is unit 200
    const cut = truncate(text);
    expect(cut).toBe("a".repeat(199));
    expect(cut.length).toBe(199);
    const aligned = "a".repeat(198) + "😀" + "tail"; // the pair ends exactly at 200
    expect(truncate(aligned)).toBe("a".repeat(198) + "😀");
  });

  it("makes a post's short form with its id and truncated content", () => {
    const post: PostItem = {
      id: "p1", type: "post", postId: "p1", userId: "u", userUsername: "U", title: "T",
      content: "😀".repeat(150), commentCount: 2, likeCount: 3, creationDate: "2026-01-01T00:00:00.000Z", ttl: 5, deleted: false,
    };
    const short = toShortForm(post);
    expect(short).toEqual({ ...post, content: "😀".repeat(100), ttl: undefined, deleted: undefined });
    expect(short).not.toHaveProperty("ttl");
  });
});
