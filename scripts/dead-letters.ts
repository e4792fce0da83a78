import { loadSettings } from "../src/config";
import { createStore, type BlogStore } from "../src/store/client";
import { listDeadLetters, replayDeadLetter, type DeadLetter } from "../src/store/dead-letters";
import { defaultToLocalAccount } from "../local/local-account";
import { commandLine, defineCommand, refuse } from "../local/command-line";

const COMMAND = defineCommand({
  name: "npm run dead-letters",
  summary:
    "Lists the change feed documents no consumer could process, with their reasons, or replays them once fixed at the source. On the account of COSMOS_ENDPOINT (and COSMOS_KEY) or COSMOS__accountEndpoint; with none, npm start's embedded server (EMBEDDED_COSMOS_PORT, default 8081).",
  positionals: "list | replay <id>... | replay --all",
  flags: { all: { type: "boolean", default: false, description: "with replay: every dead letter" } },
  examples: ["npm run dead-letters -- list", "npm run dead-letters -- replay 3f2a...", "npm run dead-letters -- replay --all"],
});

const line = (letter: DeadLetter) => `${letter.id}  ${letter.setAsideAt}  ${letter.source}/${letter.documentId}  ${letter.reason}`;

/**
 * `npm run dead-letters`: the change feed documents no consumer could process. `list` shows
 * them with their reasons; once fixed at the source, `replay` sends each through its change
 * feed again (a document still malformed stays set aside, and says why).
 */
async function main(): Promise<number> {
  const { values, positionals } = commandLine(COMMAND);
  const [command, ...ids] = positionals;
  const listing = command === "list" && ids.length === 0;
  if (!listing && (command !== "replay" || (ids.length === 0) === !values.all)) refuse(COMMAND, "say list, replay with ids, or replay --all");
  const local = defaultToLocalAccount();
  if (local) console.error(local);
  const store = createStore(loadSettings());
  try {
    return await deadLetters(store, listing ? "list" : values.all ? "all" : ids);
  } finally {
    store.dispose();
  }
}

async function deadLetters(store: BlogStore, command: "list" | "all" | string[]): Promise<number> {
  const letters = await listDeadLetters(store);
  if (command === "list") {
    console.log(letters.length === 0 ? "no dead letters" : letters.map(line).join("\n"));
    return 0;
  }
  const ids = command === "all" ? [] : command;
  const chosen = command === "all" ? letters : letters.filter((letter) => ids.includes(letter.id));
  const unknown = ids.filter((id) => !letters.some((letter) => letter.id === id));
  for (const id of unknown) console.error(`${id}: no such dead letter`);
  let failed = unknown.length;
  for (const letter of chosen) {
    const outcome = await replayDeadLetter(store, letter);
    if (outcome.status === "stillMalformed") failed++;
    console.log(
      `${letter.id} ${letter.source}/${letter.documentId}: ${outcome.status === "replayed" ? "replayed through its change feed" : outcome.status === "gone" ? "the document is gone; record removed" : `still malformed (${outcome.reason}); kept`}`,
    );
  }
  return failed === 0 ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`dead-letters failed: ${(error as Error).message}`);
    process.exit(1);
  },
);
