import { randomUUID } from "node:crypto";
import { commandLine, defineCommand, refuse } from "../local/command-line";

/**
 * `npm run smoke -- --url <api base> [--token T]`: checks a deployment end to end, as a user
 * would after `azd up`: C1-C4 and Q1-Q6, the change feed carrying a post into Q3 and Q6, and a
 * rename reaching the post. It cleans up what it wrote (the post, and so its comment and like)
 * and prints a table of each step with its time (request charges are in the telemetry, not in
 * responses: docs/operations.md). Without --token, a local
 * host's dev sign-in signs one (loopback only).
 */
export interface SmokeStep {
  step: string;
  ok: boolean;
  ms: number;
  detail?: string;
}

interface Reply {
  status: number;
  body: { [key: string]: unknown } | undefined;
}

export async function smoke(options: { url: string; token?: string; timeoutMs?: number; log?: (step: SmokeStep) => void }): Promise<SmokeStep[]> {
  const base = options.url.replace(/\/+$/, "");
  const deadline = options.timeoutMs ?? 60_000;
  const token = options.token ?? (await localDevToken(base));
  const steps: SmokeStep[] = [];

  async function call(method: string, path: string, body?: unknown): Promise<Reply> {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as Reply["body"]) : undefined };
  }

  /** One step: `check` returns a detail (passed) or throws (failed); the rest still runs where it can. */
  async function step(name: string, check: () => Promise<{ detail?: string } | void>): Promise<boolean> {
    const started = performance.now();
    let result: SmokeStep;
    try {
      const detail = (await check())?.detail;
      result = { step: name, ok: true, ms: Math.round(performance.now() - started), detail };
    } catch (error) {
      result = { step: name, ok: false, ms: Math.round(performance.now() - started), detail: (error as Error).message };
    }
    steps.push(result);
    options.log?.(result);
    return result.ok;
  }

  const expectStatus = (reply: Reply, ...statuses: number[]) => {
    if (!statuses.includes(reply.status)) throw new Error(`answered ${reply.status}: ${JSON.stringify(reply.body).slice(0, 200)}`);
    return reply;
  };
  /** Polls until `found` holds, within the deadline; returns the time it took. */
  async function eventually(found: () => Promise<boolean>): Promise<string> {
    const started = Date.now();
    while (!(await found())) {
      if (Date.now() - started > deadline) throw new Error(`not within ${deadline / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    return `after ${((Date.now() - started) / 1000).toFixed(1)} s`;
  }

  const name = `smoke-${randomUUID().slice(0, 8)}`;
  let userId = "";
  let postId = "";
  await step("C1 create or rename your profile", async () => {
    const created = await call("POST", "/users", { username: name });
    // 409: the token's user has a profile already (a real account's user): it is renamed for the run.
    const reply = created.status === 409 ? await renameExisting() : expectStatus(created, 201);
    userId = String(reply.body!.id);
    return { detail: `user ${userId} as ${name}` };
  });
  async function renameExisting(): Promise<Reply> {
    const payload = JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString("utf8")) as { sub: string };
    return expectStatus(await call("PUT", `/users/${encodeURIComponent(payload.sub)}`, { username: name }), 200);
  }
  if (!userId) return steps;
  await step("Q1 read the profile", async () => {
    const reply = expectStatus(await call("GET", `/users/${userId}`), 200);
    if (reply.body!.username !== name) throw new Error(`username is ${String(reply.body!.username)}`);
    return;
  });
  await step("C2 write a post", async () => {
    const reply = expectStatus(await call("POST", "/posts", { title: `Smoke test ${name}`, content: "Written by npm run smoke; deleted at the end." }), 201);
    postId = String(reply.body!.postId);
    return { detail: `post ${postId}` };
  });
  if (postId) {
    await step("C3 comment on it", async () => void expectStatus(await call("POST", `/posts/${postId}/comments`, { content: "a smoke comment" }), 201));
    await step("C4 like it", async () => void expectStatus(await call("POST", `/posts/${postId}/likes`), 201));
    await step("Q2 read it with its counts", async () => {
      const reply = expectStatus(await call("GET", `/posts/${postId}`), 200);
      if (reply.body!.commentCount !== 1 || reply.body!.likeCount !== 1)
        throw new Error(`counts ${String(reply.body!.commentCount)}/${String(reply.body!.likeCount)}, expected 1/1`);
      return;
    });
    await step("Q4 list its comments", async () => void expectStatus(await call("GET", `/posts/${postId}/comments`), 200));
    await step("Q5 list its likes", async () => void expectStatus(await call("GET", `/posts/${postId}/likes`), 200));
    await step("Q3 the change feed carries it to your list", async () => ({
      detail: await eventually(
        async () => ((await call("GET", `/users/${userId}/posts`)).body?.items as { id: string }[] | undefined)?.some((p) => p.id === postId) ?? false,
      ),
    }));
    await step("Q6 the change feed carries it to the feed", async () => ({
      detail: await eventually(
        async () => ((await call("GET", "/feed?limit=100")).body?.items as { id: string }[] | undefined)?.some((p) => p.id === postId) ?? false,
      ),
    }));
    await step("C1 rename, and the post follows", async () => {
      const renamed = `${name}-2`;
      expectStatus(await call("PUT", `/users/${userId}`, { username: renamed }), 200);
      const detail = await eventually(async () => (await call("GET", `/posts/${postId}`)).body?.userUsername === renamed);
      return { detail };
    });
    await step("clean up: delete the post", async () => {
      expectStatus(await call("DELETE", `/posts/${postId}`), 204);
      expectStatus(await call("GET", `/posts/${postId}`), 404);
    });
  }
  return steps;
}

/** A dev token from a local host's dev sign-in (it answers loopback callers only). */
async function localDevToken(base: string): Promise<string> {
  const url = new URL(base);
  const response = await fetch(new URL("/local/dev-token", url.origin), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ userId: `smoke-${randomUUID().slice(0, 8)}` }),
  }).catch(() => undefined);
  if (!response?.ok) throw new Error(`no --token given, and ${url.origin} has no dev sign-in: pass --token with an access token for the API`);
  return ((await response.json()) as { token: string }).token;
}

const row = (s: SmokeStep) => `${s.ok ? "pass" : "FAIL"}  ${s.step.padEnd(44)} ${String(s.ms).padStart(6)} ms  ${s.detail ?? ""}`;

const COMMAND = defineCommand({
  name: "npm run smoke",
  summary:
    "Checks a deployment (or npm start) end to end, as a user would after azd up: C1-C4 and Q1-Q6, the change feed carrying a post into Q3 and Q6, a rename reaching the post; cleans up what it wrote.",
  flags: {
    url: { type: "string", value: "api", description: "the API's base URL, e.g. https://func-x.azurewebsites.net/api (required)" },
    token: { type: "string", value: "access-token", description: "an access token (docs/deploy.md); without one, a local host's dev sign-in signs one" },
    "timeout-seconds": { type: "string", default: "60", value: "s", description: "how long a step may wait for the change feed" },
  },
  examples: ["npm run smoke -- --url http://localhost:7071/api", 'npm run smoke -- --url https://func-x.azurewebsites.net/api --token "$TOKEN"'],
});

async function main(): Promise<void> {
  const { values } = commandLine(COMMAND);
  if (!values.url) refuse(COMMAND, "--url is required");
  console.log(`smoke check of ${values.url}`);
  const steps = await smoke({ url: values.url, token: values.token, timeoutMs: Number(values["timeout-seconds"]) * 1000, log: (s) => console.log(row(s)) });
  const failed = steps.filter((s) => !s.ok).length;
  console.log(`smoke: ${steps.length - failed} passed, ${failed} failed`);
  process.exitCode = failed === 0 && steps.length > 0 ? 0 : 1;
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(`smoke failed: ${(error as Error).message}`);
    process.exit(1);
  });
}
