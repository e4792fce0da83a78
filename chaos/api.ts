import { devToken, LOCAL_DEV_SECRET } from "../local/dev-auth";

export interface Reply {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

export interface CallOptions {
  as?: string;
  body?: unknown;
  idempotencyKey?: string;
}

/** The statuses that mean "not now": the request may or may not have been applied, so it is asked again. */
const TRANSIENT = new Set([429, 503]);

/**
 * The blog API as a patient client uses it: retries what was throttled, refused or unanswered
 * (a restarting host) with the same Idempotency-Key, until it gets an answer or its patience
 * runs out. Every answer is counted; a 500 is recorded, as no client input may cause one.
 */
export class ChaosClient {
  private readonly tokens = new Map<string, string>();
  requests = 0;
  readonly serverErrors: string[] = [];

  constructor(
    private readonly baseUrl: () => string | undefined,
    private readonly patienceMs: number,
    /** The hosts' dev-token secret (the built-in local one when absent). */
    private readonly devSecret: string = LOCAL_DEV_SECRET,
  ) {}

  /** One attempt; undefined when the host did not answer (down, restarting, connection cut). */
  async once(method: string, path: string, options: CallOptions = {}): Promise<Reply | undefined> {
    const base = this.baseUrl();
    if (!base) return undefined;
    const headers: Record<string, string> = {};
    if (options.as) headers.authorization = `Bearer ${await this.token(options.as)}`;
    if (options.idempotencyKey) headers["idempotency-key"] = options.idempotencyKey;
    if (options.body !== undefined) headers["content-type"] = "application/json";
    this.requests++;
    try {
      const response = await fetch(`${base}${path}`, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: AbortSignal.timeout(15_000),
      });
      const text = await response.text();
      const reply = { status: response.status, body: text ? JSON.parse(text) : undefined };
      if (reply.status >= 500 && reply.status !== 503) this.serverErrors.push(`${method} ${path} answered ${reply.status}: ${text.slice(0, 200)}`);
      return reply;
    } catch {
      return undefined;
    }
  }

  /** Asks until the answer is definite (not 429/503/no answer); undefined if patience ran out first. */
  async definite(method: string, path: string, options: CallOptions = {}): Promise<Reply | undefined> {
    const deadline = Date.now() + this.patienceMs;
    for (let attempt = 0; ; attempt++) {
      const reply = await this.once(method, path, options);
      if (reply && !TRANSIENT.has(reply.status)) return reply;
      if (Date.now() > deadline) return undefined;
      await new Promise((resolve) => setTimeout(resolve, Math.min(50 * 2 ** attempt, 1000)));
    }
  }

  private async token(userId: string): Promise<string> {
    let token = this.tokens.get(userId);
    if (!token) this.tokens.set(userId, (token = await devToken(userId, this.devSecret, "24h")));
    return token;
  }
}
