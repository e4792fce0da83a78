import { buildSync } from "esbuild";
import { statSync } from "node:fs";
import { join } from "node:path";
import { projectRoot } from "../src/store/definitions";

/**
 * The deployment artifact: every function registration (functions/index.ts) bundled with its
 * dependencies into one file, dist/app/index.js, which package.json "main" names. The function
 * app then ships that file, host.json and package.json only: no node_modules to install or
 * load, and one file to read on a cold start. `@azure/functions-core` is the Functions worker's
 * own module, provided at run time.
 */
export function bundle(root: string, file = join(root, "dist/app/index.js")): { file: string; bytes: number } {
  buildSync({
    entryPoints: [join(root, "functions/index.ts")],
    outfile: file,
    bundle: true,
    platform: "node",
    target: "node20",
    format: "cjs",
    external: ["@azure/functions-core"],
    sourcemap: "linked",
    logLevel: "warning",
  });
  return { file, bytes: statSync(file).size };
}

if (require.main === module) {
  const { file, bytes } = bundle(projectRoot());
  console.log(`bundled the function app into ${file} (${(bytes / 1024 / 1024).toFixed(1)} MiB)`);
}
