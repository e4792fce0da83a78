import type { z } from "zod";
import type { commentResponse, erasureResponse, exportPageResponse, likeResponse, postResponse, userResponse } from "../../src/api/responses";

/** What the API answers on failure (RFC 9457 problem details). */
export interface Problem {
  /** The API's own problem types (RFC 9457 `type`): PROFILE_REQUIRED, ACCOUNT_ERASED. */
  type?: string;
  title: string;
  status: number;
  detail?: string;
  errors?: { path: string; message: string }[];
}

/** A write by a caller who has no profile yet. */
export const PROFILE_REQUIRED = "tag:blog-cosmos-functions,2026:profile-required";
/** A write by a caller whose account was erased. */
export const ACCOUNT_ERASED = "tag:blog-cosmos-functions,2026:account-erased";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem,
    readonly retryAfter?: number,
  ) {
    super(problem.detail ?? problem.title);
  }
}

// The shapes the API answers, from the very schemas its OpenAPI document is generated from (types only: nothing of them is bundled).
export type User = z.infer<typeof userResponse>;
export type Post = z.infer<typeof postResponse>;
export type Comment = z.infer<typeof commentResponse>;
export type Like = z.infer<typeof likeResponse>;
export type ExportPage = z.infer<typeof exportPageResponse>;
export type Erasure = z.infer<typeof erasureResponse>;

export interface Page<T> {
  items: T[];
  continuationToken: string | null;
}

/** The blog API over fetch: JSON in and out, every failure an ApiError carrying the problem. */
export class Api {
  constructor(
    private readonly base: string,
    private readonly token: () => Promise<string | undefined>,
  ) {}

  get<T>(path: string): Promise<T> {
    return this.call<T>("GET", path);
  }

  /** A read only its owner may make (their export, their erasure's status): sent with the token. */
  getOwn<T>(path: string): Promise<T> {
    return this.call<T>("GET", path, undefined, {}, true);
  }

  async call<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, own = method !== "GET"): Promise<T> {
    const token = own ? await this.token() : undefined;
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    let response: Response;
    try {
      // Revalidate (If-None-Match, usually a 304) rather than trust max-age: a person must see their own writes at once.
      response = await fetch(`${this.base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: "no-cache" });
    } catch {
      throw new ApiError(0, { title: "The API cannot be reached", status: 0, detail: "Check your connection and try again." });
    }
    const text = await response.text();
    const json = text ? (JSON.parse(text) as unknown) : undefined;
    if (!response.ok) {
      const retryAfter = Number(response.headers.get("retry-after")) || undefined;
      const problem = (json as Problem | undefined) ?? { title: response.statusText, status: response.status };
      throw new ApiError(response.status, problem, retryAfter);
    }
    return json as T;
  }
}

/** A page query string: `?limit=N[&continuationToken=...]`. */
/** A page's query: after `path`'s own query, if it has one (`/search?q=...`). */
export const pageQuery = (limit: number, continuationToken?: string | null, path = "") =>
  `${path.includes("?") ? "&" : "?"}limit=${limit}${continuationToken ? `&continuationToken=${encodeURIComponent(continuationToken)}` : ""}`;

/** A search result: a post in short form, and a snippet of it with the words found (`[start, end)` in its text). */
export interface SearchHit extends Post {
  snippet: { text: string; marks: [number, number][] };
}
