import { join } from "node:path";
import { bundleEntry as bundleAsTheAppIs, bundleSplit, splitOf } from "../../scripts/bundle";

const root = join(__dirname, "../..");

/** `entry` bundled into `folder`/`name` as index.js bundles the app, with the splits named (lazy/splits.ts) built beside it. */
export async function bundleEntry(folder: string, name: string, entry: string, splits: string[]): Promise<string> {
  const file = join(folder, name);
  await bundleAsTheAppIs(root, file, { stdin: { contents: entry, resolveDir: root } });
  for (const split of splits) await bundleSplit(root, folder, splitOf(split));
  return file;
}
