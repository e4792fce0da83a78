import { describe, expect, it } from "vitest";
import { servedItems } from "../../src/api/served";

const comment = (etag: string, content: unknown) => ({
  id: "c1",
  type: "comment",
  postId: "p1",
  userId: "u1",
  userUsername: "ann",
  content,
  creationDate: "2026-11-29T00:00:00.000Z",
  _rid: "rid-1",
  _etag: etag,
});

describe("servedItems", () => {
  it("checks each stored version once, and a new version again: one rewritten malformed behind the API's back is left out", () => {
    const logged: string[] = [];
    const log = (message: string) => logged.push(message);
    expect(servedItems("posts", [comment('"1"', "fine")], log).map((item) => item.id)).toEqual(["c1"]);
    // Read again, as a new object: the same version, the same verdict.
    expect(servedItems("posts", [comment('"1"', "fine")], log)).toHaveLength(1);
    // The same item rewritten with a content that is no string: a new _etag, checked, left out.
    expect(servedItems("posts", [comment('"2"', 42)], log)).toEqual([]);
    expect(logged).toEqual([expect.stringContaining("left malformed posts item 'c1' out of a list")]);
  });
});
