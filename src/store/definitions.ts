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
  eraseWriter: "eraseWriter",
} as const;

export const POST_TRIGGERS = { truncateFeed: "truncateFeed" } as const;
