import type { Api } from "./api";
import type { Session } from "./auth";

/** What every view is given: the API, the session, where to draw, how to move on and how to show a failure. */
export interface App {
  api: Api;
  session: Session;
  view: HTMLElement;
  go(hash: string): void;
  /** Shows what went wrong (a problem from the API, or any error) above the page. */
  fail(error: unknown): void;
  /** Says what just happened, above the next page shown (a rename, a deletion). */
  tell(message: string): void;
  /** The signed-in user's profile was created or renamed: the header reads it again. */
  profileChanged(): void;
}
