/** The API's limits (README, HTTP API); lengths count UTF-16 code units, as JavaScript strings do. */
export const LIMITS = {
  usernamePattern: /^[A-Za-z0-9_.-]{3,32}$/,
  /**
   * User and post ids (token subjects such as "auth0|123" included): what Cosmos DB can address
   * by path. Never ":", which username claims and likes use, and never "." or "..", which URL
   * normalisation turns into another path.
   */
  idPattern: /^(?!\.{1,2}$)[A-Za-z0-9_.@|-]{1,128}$/,
  /** Idempotency-Key: visible ASCII, as the IETF draft and the common APIs use it. */
  idempotencyKeyPattern: /^[\x21-\x7e]{1,255}$/,
  titleLength: 200,
  postContentLength: 20_000,
  commentLength: 2_000,
  shortContentLength: 200,
  pageSize: { min: 1, max: 100, default: 20 },
  bodyBytes: 64 * 1024,
  feedSize: 100,
  /** GET /search: the whole `q`, how many words it may have, and how long one may be. */
  search: { queryLength: 200, terms: 8, termLength: 50 },
} as const;
