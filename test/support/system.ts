import { devToken, LOCAL_DEV_SECRET } from "../../local/dev-auth";
import { startLocalSystem, type LocalSystem, type LocalSystemOptions } from "../../local/system";

export interface Client {
  system: LocalSystem;
  logs: string[];
  /** A JSON request over real HTTP; `as` signs a dev token for that user. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  call(method: string, path: string, options?: { as?: string; body?: unknown }): Promise<{ status: number; body: any; headers: Headers }>;
  stop(): Promise<void>;
}

/** The whole local system on a free port, driven over HTTP like a user would. */
export async function localSystem(options: LocalSystemOptions = {}): Promise<Client> {
  const logs: string[] = [];
  // Tests poll the change feed every 100 ms, not each trigger's registered second: the pipeline's waits stay short.
  const system = await startLocalSystem({ port: 0, pollMs: 100, log: (line) => logs.push(line), ...options });
  const tokens = new Map<string, string>();
  return {
    system,
    logs,
    async call(method, path, opts = {}) {
      const headers: Record<string, string> = {};
      if (opts.as) {
        if (!tokens.has(opts.as)) tokens.set(opts.as, await devToken(opts.as, LOCAL_DEV_SECRET));
        headers.authorization = `Bearer ${tokens.get(opts.as)}`;
      }
      if (opts.body !== undefined) headers["content-type"] = "application/json";
      const response = await fetch(`${system.url}${path}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
    },
    stop: () => system.stop(),
  };
}

/** Polls until `check` returns a value; the deadline is generous, the benchmark reports real figures. */
export async function within<T>(ms: number, check: () => Promise<T | undefined | false>, everyMs = 50): Promise<{ value: T; elapsedMs: number }> {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return { value, elapsedMs: Date.now() - started };
    if (Date.now() - started > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
