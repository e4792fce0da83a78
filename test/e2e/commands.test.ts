import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { jwtVerify, SignJWT } from "jose";
import { LOCAL_DEV_SECRET } from "../../local/dev-auth";
import { clientFor } from "../support/cosmos";
import { within } from "../support/system";

// These run the compiled entry points that the npm scripts run (`npm test` compiles first).
const dist = join(__dirname, "../../dist");
/** `npm run cosmos`: the embedded server package's command. */
const cosmosCli = join(__dirname, "../../packages/embedded-cosmos/dist/cli.js");

/** Starts a command and resolves with the first match of `pattern` in its output. */
function startAndWaitFor(
  args: string[],
  pattern: RegExp,
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; match: RegExpMatchArray; output: () => string }> {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${pattern} within 20 s:\n${output}`)), 20_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = output.match(pattern);
      if (match) {
        clearTimeout(timer);
        resolve({ child, match, output: () => output });
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => reject(new Error(`exited with ${code}:\n${output}`)));
  });
}

const exited = (child: ChildProcess) => new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));

describe("the commands", () => {
  it("npm run cosmos serves the embedded server, prints endpoint and key, and stops on SIGTERM", async () => {
    const { child, output } = await startAndWaitFor([cosmosCli, "--port", "0"], /COSMOS_KEY=\S+/);
    const endpoint = /COSMOS_ENDPOINT=(\S+)/.exec(output())![1];
    const key = /COSMOS_KEY=(\S+)/.exec(output())![1];
    const client = clientFor({ endpoint, key });
    const { database } = await client.databases.createIfNotExists({ id: "cli" });
    expect(database.id).toBe("cli");
    client.dispose();
    child.removeAllListeners("exit");
    child.kill("SIGTERM");
    expect(await exited(child)).toBe(0);
  });

  it("npm run cosmos refuses a bad port with its usage, exit 2", () => {
    const result = spawnSync(process.execPath, [cosmosCli, "--port", "nope"], { encoding: "utf8" });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain("--port must be 0-65535, got 'nope'");
    expect(result.stderr).toContain("usage: npm run cosmos");
  });

  it("npm start serves the API, prints how to get a token, and shuts down on Ctrl-C", async () => {
    const { child, match, output } = await startAndWaitFor([join(dist, "local/start.js"), "--in-memory"], /Blog API ready on (\S+)[\s\S]*Press Ctrl-C/, {
      PORT: "0",
      EMBEDDED_COSMOS_PORT: "0",
      LOG_REQUESTS: "false",
    });
    const url = match[1];
    expect(output()).toContain("npm run token -- alice");
    expect(output()).toContain("curl -s -X POST");
    // On another port than 7071, the seed command printed is the one that works there.
    expect(output()).toContain(`npm run seed -- --users 20 --url ${url}`);
    const feed = await fetch(`${url}/feed`);
    expect(feed.status).toBe(200);
    expect(await feed.json()).toEqual({ items: [] });
    child.removeAllListeners("exit");
    child.kill("SIGINT");
    expect(await exited(child)).toBe(0);
    expect(output()).toContain("Stopping (SIGINT");
  });

  it("npm start in a terminal drains on one Ctrl-C, though the host gets SIGINT from the terminal and from npm", async () => {
    // A pseudo-terminal (util-linux `script`): the byte ^C becomes SIGINT to the whole foreground process group, as in a real terminal.
    // The terminal stays open until the host itself is gone (it is npm's child, so npm may be gone first): whatever it prints is read.
    const shell = `trap : INT; npm start -- --in-memory; code=$?; while pgrep -s 0 -f "node.*[d]ist/local/start.js" >/dev/null; do sleep 0.2; done; echo "npm exited with $code"`;
    const terminal = spawn("script", ["-qfec", shell, "/dev/null"], {
      cwd: join(__dirname, "../.."),
      env: { ...process.env, PORT: "0", EMBEDDED_COSMOS_PORT: "0", LOG_REQUESTS: "false" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let output = "";
    terminal.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const done = exited(terminal);
    await within(90_000, async () => output.includes("Press Ctrl-C"));
    terminal.stdin.write("\x03");
    await within(30_000, async () => /npm exited with \d+/.test(output));
    terminal.stdin.end();
    await done;
    expect(output).toContain("Stopping (SIGINT");
    expect(output).not.toContain("again: exiting now");
    expect(output).toContain("Stopped: drained cleanly.");
    expect(output).toMatch(/npm exited with 0/);
  }, 150_000);

  it("npm start keeps its data in the data directory across restarts", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "blog-data-"));
    const env = { PORT: "0", EMBEDDED_COSMOS_PORT: "0", LOG_REQUESTS: "false", AUTH_DEV_SECRET: "" };
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("keeper")
      .setIssuedAt()
      .setExpirationTime("1h")
      .sign(new TextEncoder().encode(LOCAL_DEV_SECRET));
    const first = await startAndWaitFor([join(dist, "local/start.js"), "--data-dir", dataDir], /Blog API ready on (\S+)/, env);
    const created = await fetch(`${first.match[1]}/users`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ username: "keeper" }),
    });
    expect(created.status).toBe(201);
    first.child.removeAllListeners("exit");
    first.child.kill("SIGKILL");
    await exited(first.child);
    const second = await startAndWaitFor([join(dist, "local/start.js"), "--data-dir", dataDir], /Blog API ready on (\S+)/, env);
    expect(await (await fetch(`${second.match[1]}/users/keeper`)).json()).toEqual({ id: "keeper", username: "keeper" });
    second.child.removeAllListeners("exit");
    second.child.kill("SIGINT");
    expect(await exited(second.child)).toBe(0);
  }, 40_000);

  it("npm run flows follows a post, its change feed batch and a rename through the app's files", () => {
    const result = spawnSync(process.execPath, [join(dist, "scripts/flows.js")], { encoding: "utf8", timeout: 60_000 });
    expect(result.status, result.stderr).toBe(0);
    const flows = [...result.stdout.matchAll(/^(.+): (\d+) files, (\d+) calls into a file it had left\n {2}(.+)$/gm)];
    expect(flows.map((m) => m[1])).toEqual(["POST /posts", "posts change feed batch", "PUT /users/{userId} (rename)"]);
    for (const [, , files, , path] of flows) {
      const visited = path.split(" > ");
      expect(new Set(visited).size).toBe(Number(files));
      expect(visited.every((file) => /^(src|functions)\/.+\.ts$/.test(file))).toBe(true);
    }
    // No longer than docs/architecture.md says (files, calls into a file it had left): a flow that grows is a design that got harder to follow.
    expect(flows.map((m) => Number(m[2]) <= 10 && Number(m[3]) <= [4, 17, 20][flows.indexOf(m)])).toEqual([true, true, true]);
    // Each flow reaches the code that does its work: the store's post, the copies, the username claims.
    expect(flows.map((m) => m[4].includes(["src/store/posts.ts", "src/store/copies.ts", "src/store/username-claims.ts"][flows.indexOf(m)]))).toEqual([
      true,
      true,
      true,
    ]);
  });

  it("npm run dead-letters -- list, as the README writes it, reads npm start's embedded server when no account is named", async () => {
    const { child, output } = await startAndWaitFor([join(dist, "local/start.js"), "--in-memory"], /Blog API ready on (\S+)[\s\S]*Press Ctrl-C/, {
      PORT: "0",
      EMBEDDED_COSMOS_PORT: "0",
      LOG_REQUESTS: "false",
    });
    try {
      const port = /COSMOS_ENDPOINT=http:\/\/127\.0\.0\.1:(\d+)\//.exec(output())![1];
      const none = { COSMOS_ENDPOINT: "", COSMOS__accountEndpoint: "", COSMOS: "", COSMOS_KEY: "" };
      const list = spawnSync(process.execPath, [join(dist, "scripts/dead-letters.js"), "list"], {
        encoding: "utf8",
        env: { ...process.env, ...none, EMBEDDED_COSMOS_PORT: port },
      });
      expect(list.stderr).toContain(`using npm start's embedded Cosmos DB server at http://127.0.0.1:${port}/`);
      expect(list.stdout.trim()).toBe("no dead letters");
      expect(list.status).toBe(0);
    } finally {
      child.removeAllListeners("exit");
      child.kill("SIGINT");
      await exited(child);
    }
  });

  it("npm run seed names the URL it cannot reach", () => {
    const result = spawnSync(process.execPath, [join(dist, "scripts/seed.js"), "--users", "1", "--url", "http://127.0.0.1:1/api"], { encoding: "utf8" });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("cannot reach the API at http://127.0.0.1:1/api");
  });

  it("npm scripts build incrementally (tsc -b), so a command after the first build starts at once", () => {
    const scripts = (JSON.parse(readFileSync(join(__dirname, "../../package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
    for (const [name, script] of Object.entries(scripts)) {
      // `func` builds through `npm run build`, which compiles first (scripts/build.mjs).
      if (script.includes("dist/")) expect(script, name).toMatch(/^(tsc -b|npm run build) && /);
    }
  });

  it("npm run token prints a dev token for the user that npm start accepts", async () => {
    const result = spawnSync(process.execPath, [join(dist, "scripts/token.js"), "alice"], { encoding: "utf8", env: { ...process.env, AUTH_DEV_SECRET: "" } });
    expect(result.status).toBe(0);
    const { payload } = await jwtVerify(result.stdout.trim(), new TextEncoder().encode(LOCAL_DEV_SECRET));
    expect(payload.sub).toBe("alice");
    expect(payload.exp).toBeGreaterThan(Date.now() / 1000);
    const bad = spawnSync(process.execPath, [join(dist, "scripts/token.js"), "not valid!"], { encoding: "utf8" });
    expect(bad.status).toBe(2);
  });
});
