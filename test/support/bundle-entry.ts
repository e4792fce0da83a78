import { join } from "node:path";
import { buildSync } from "esbuild";

const root = join(__dirname, "../..");

/** `entry` bundled into `folder`/`name` as index.js bundles the app: what `apart` names is left to the files beside it. */
export function bundleEntry(folder: string, name: string, entry: string, apart: { alias: Record<string, string>; external: string[] }): string {
  const file = join(folder, name);
  buildSync({
    bundle: true,
    platform: "node",
    format: "cjs",
    logLevel: "error",
    stdin: { contents: entry, resolveDir: root },
    outfile: file,
    ...apart,
    external: ["@azure/functions-core", ...apart.external],
  });
  return file;
}
