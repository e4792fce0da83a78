import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

// The file I/O of the definitions: where the repository is, and the server-side scripts' source in it.

/** The repository root (where sprocs/ lives), found from this file in src/ or dist/src/. */
export function projectRoot(): string {
  let dir = __dirname;
  while (!existsSync(join(dir, "sprocs")) || !existsSync(join(dir, "package.json"))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error("Cannot find the project root (sprocs/ next to package.json).");
    dir = parent;
  }
  return dir;
}

/** A stored procedure or post-trigger as `sprocs/` holds it: what provisioning deploys. */
export function scriptBody(name: string): string {
  return readFileSync(join(projectRoot(), "sprocs", `${name}.js`), "utf8");
}
