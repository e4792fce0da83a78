import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import definitions from "../../infra/containers.json";

/**
 * The container definitions, from the ONE file Bicep also reads (infra/containers.json),
 * so local provisioning and Azure cannot drift apart.
 */
export const containerDefinitions = definitions;

function declared(name: string): string {
  if (!definitions.containers.some((c) => c.name === name)) throw new Error(`Container '${name}' is not declared in infra/containers.json`);
  return name;
}

/** The containers the code uses, each checked against the shared definitions at load time. */
export const CONTAINERS = {
  users: declared("users"),
  posts: declared("posts"),
  feed: declared("feed"),
  leases: declared("leases"),
  deadLetters: declared("deadLetters"),
} as const;

/** Script names the code calls; each must be declared on its container. */
export const SPROCS = {
  createComment: "createComment",
  changeLikes: "changeLikes",
  updateUsernames: "updateUsernames",
  deletePost: "deletePost",
} as const;

export const POST_TRIGGERS = { truncateFeed: "truncateFeed" } as const;

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

export function scriptBody(name: string): string {
  return readFileSync(join(projectRoot(), "sprocs", `${name}.js`), "utf8");
}
