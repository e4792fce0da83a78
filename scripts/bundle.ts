import { buildSync } from "esbuild";
import { copyFileSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { projectRoot } from "../src/store/script-files";
import { replaceFolder } from "./output-folder";

/**
 * Every function registration (functions/index.ts) bundled with its dependencies into one
 * file: no node_modules to install or load, and one file to read on a cold start.
 * `@azure/functions-core` is the Functions worker's own module, provided at run time.
 */
export function bundle(root: string, file: string): { file: string; bytes: number } {
  buildSync({
    entryPoints: [join(root, "functions/index.ts")],
    outfile: file,
    bundle: true,
    platform: "node",
    // The Function App runs Node.js 22 (infra/app/api.bicep).
    target: "node22",
    format: "cjs",
    external: ["@azure/functions-core"],
    sourcemap: "linked",
    logLevel: "warning",
  });
  return { file, bytes: statSync(file).size };
}

/** The deployable folder's name under dist/: what azure.yaml's `dist`, `func start` and the package test read. */
export const DEPLOY_FOLDER = "dist/deploy";

/**
 * THE deployable function app, as a folder: host.json, a package.json whose `main` names the
 * bundle, and the bundle. azd zips it as it is (azure.yaml `dist`), `npm run func` runs the
 * Functions host in it, and the package test loads it from an empty folder. A local.settings.json
 * is copied in for `func start` (azd never ships that file).
 */
export function packageApp(root: string, folder = join(root, DEPLOY_FOLDER)): { folder: string; bytes: number } {
  let bytes = 0;
  replaceFolder(folder, (next) => {
    bytes = bundle(root, join(next, "index.js")).bytes;
    copyFileSync(join(root, "host.json"), join(next, "host.json"));
    const { name, version, description, license } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as Record<string, string>;
    writeFileSync(join(next, "package.json"), `${JSON.stringify({ name, version, description, license, private: true, main: "index.js" }, null, 2)}\n`);
    if (existsSync(join(root, "local.settings.json"))) copyFileSync(join(root, "local.settings.json"), join(next, "local.settings.json"));
  });
  return { folder, bytes };
}

if (require.main === module) {
  const { folder, bytes } = packageApp(projectRoot());
  console.log(`packaged the function app into ${folder} (index.js ${(bytes / 1024 / 1024).toFixed(1)} MiB, host.json, package.json)`);
}
