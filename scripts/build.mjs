// `npm run build`: compiles, then writes the deployable outputs (dist/deploy for the function
// app, dist/web for the front end) and docs/openapi.json. azd builds its two services in this one
// folder at the same time, so builds take turns: a lock file in dist/ holds the second until the
// first is done (a lock whose process is gone is taken over), and each output folder is replaced
// whole (scripts/output-folder.ts), never emptied while something reads it.
// Plain JavaScript with no dependencies: it runs before anything is compiled.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const lock = join(root, "dist", ".build.lock");

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
};

async function takeLock() {
  mkdirSync(dirname(lock), { recursive: true });
  for (let told = false; ;) {
    try {
      writeFileSync(lock, String(process.pid), { flag: "wx" });
      return;
    } catch (error) {
      if (error.code !== "EEXIST") throw error;
    }
    const holder = Number(readFileSync(lock, "utf8"));
    if (!Number.isInteger(holder) || holder <= 0 || !alive(holder)) {
      rmSync(lock, { force: true });
      continue;
    }
    if (!told) console.log(`build: waiting for the build in process ${holder} to finish`);
    told = true;
    await sleep(250);
  }
}

const steps = [
  ["compiling TypeScript", process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-b"]],
  ["packaging the function app into dist/deploy", process.execPath, [join(root, "dist/scripts/bundle.js")]],
  ["bundling the web front end into dist/web", process.execPath, [join(root, "dist/scripts/bundle-web.js")]],
  ["writing docs/openapi.json", process.execPath, [join(root, "dist/scripts/openapi.js")]],
  // BUILD_DOCS=no: a test that builds leaves the tracked docs as they are (another test compares them with the code).
].filter(([what]) => process.env.BUILD_DOCS !== "no" || !what.includes("docs/"));

await takeLock();
try {
  for (const [what, command, args] of steps) {
    console.log(`build: ${what}`);
    execFileSync(command, args, { cwd: root, stdio: "inherit" });
  }
} finally {
  rmSync(lock, { force: true });
}
