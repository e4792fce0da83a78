import { readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { join, relative, resolve } from "node:path";
import { commandLine, defineCommand } from "../local/command-line";
import { BUNDLES, DEPLOY_FOLDER, sourceMapFolder } from "./bundle";
import { projectRoot } from "../src/store/script-files";

/**
 * A stack trace from the deployed app with each frame in a bundle (`index.js:line:column`) given
 * its source file, line and column through the build's source maps; other lines unchanged.
 * The maps must come from the build that was deployed (`npm run build` of the same commit).
 */
export function mapStack(stack: string, maps: string, root = projectRoot()): string {
  const loaded = new Map<string, SourceMap>();
  const mapOf = (bundle: string) => {
    if (!loaded.has(bundle)) loaded.set(bundle, new SourceMap(JSON.parse(readFileSync(join(maps, `${bundle}.map`), "utf8"))));
    return loaded.get(bundle)!;
  };
  const frame = new RegExp(String.raw`(?:[^\s(]*[\\/])?(${BUNDLES.map((b) => b.replace(".", "\\.")).join("|")}):(\d+):(\d+)`, "g");
  return stack.replace(frame, (whole, bundle: string, line: string, column: string) => {
    // Stack traces count lines and columns from 1; source maps from 0.
    const entry = mapOf(bundle).findEntry(Number(line) - 1, Number(column) - 1);
    if (!("originalSource" in entry) || !entry.originalSource) return whole;
    // A map names its sources from where it lies: named here from the repository's root.
    const source = relative(root, resolve(maps, entry.originalSource)).replaceAll("\\", "/");
    return `${source}:${entry.originalLine + 1}:${entry.originalColumn + 1}`;
  });
}

const COMMAND = defineCommand({
  name: "npm run map-stack",
  summary: "Maps a stack trace of the deployed bundle (from Application Insights or the logs, on standard input) back to the sources.",
  flags: {
    maps: {
      type: "string",
      default: sourceMapFolder(join(projectRoot(), DEPLOY_FOLDER)),
      value: "dir",
      description: "the bundle's source maps (npm run build of the deployed commit)",
    },
  },
  examples: ["npm run --silent map-stack < stack.txt"],
});

/** `npm run map-stack [-- --maps DIR] < stack.txt`: maps a stack trace copied from Application Insights or the logs. */
function main(): void {
  const { values } = commandLine(COMMAND);
  process.stdout.write(mapStack(readFileSync(0, "utf8"), values.maps));
}

if (require.main === module) {
  try {
    main();
  } catch (error) {
    console.error(`map-stack failed: ${(error as Error).message} (run npm run build of the deployed commit first)`);
    process.exitCode = 1;
  }
}
