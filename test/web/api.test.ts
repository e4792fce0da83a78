import { describe, expect, it } from "vitest";
import { ACCOUNT_ERASED as WEB_ACCOUNT_ERASED, PROFILE_REQUIRED as WEB_PROFILE_REQUIRED } from "../../web/src/api";
import { ACCOUNT_ERASED, PROFILE_REQUIRED } from "../../src/model/errors";

/** The front end may not import the model (it shares only the API's response types), so it spells the API's problem types itself. */
describe("the front end's problem types", () => {
  it("are the API's own, letter for letter", () => {
    expect(WEB_PROFILE_REQUIRED).toBe(PROFILE_REQUIRED);
    expect(WEB_ACCOUNT_ERASED).toBe(ACCOUNT_ERASED);
  });
});
