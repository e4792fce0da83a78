import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(__dirname, "../..");

/** The words docs/architecture.md's glossary retired, each with the word to use instead. */
const RETIRED: { word: RegExp; use: string }[] = [
  { word: /(?<!"Azure )\bCosmos DB triggers?\b/i, use: '"change feed trigger" (the Functions trigger) or "post-trigger" (Cosmos DB\'s own)' },
  { word: /(?<!CHANGE_)\bFEED_POLL_DELAY/, use: "CHANGE_FEED_POLL_DELAY_MS: it is about change feed polling, not the feed" },
  { word: /\b(useStore|useSettings|usePolicy|configuredPolicy)\b/, use: "the services a composition root passes in (AppServices)" },
  { word: /(?<!get |\w)store\(\)/, use: "the store passed in (BlogStore), never a process-wide accessor" },
  { word: /\blocal-runtime\.md\b/, use: "docs/embedded-cosmos.md (it covers the embedded server alone)" },
];

/** The repository's own text: code, docs, templates and scripts, without what it vendors or builds. */
function sources(): string[] {
  const tracked = execFileSync("git", ["ls-files", "-co", "--exclude-standard"], { cwd: root, encoding: "utf8" }).split("\n");
  return tracked.filter(
    (file) => /\.(ts|md|mjs|cjs|bicep|sh)$/.test(file) && !file.startsWith("dist/") && !file.includes("/dist/") && !file.includes("node_modules/"),
  );
}

/** A file's text, without the glossary itself (which names the retired words) in docs/architecture.md. */
function textOf(file: string): string {
  const text = readFileSync(join(root, file), "utf8");
  if (file !== "docs/architecture.md") return text;
  return text.replace(/## Glossary[\s\S]*?(?=\n## )/, "");
}

describe("the glossary (docs/architecture.md)", () => {
  it("lists each word once, with what it means", () => {
    const glossary = /## Glossary([\s\S]*?)\n## /.exec(readFileSync(join(root, "docs/architecture.md"), "utf8"))![1];
    const words = [...glossary.matchAll(/^\| ([^|]+?) \| ([^|]+?) \|/gm)].map((row) => row[1]).filter((word) => word !== "Word" && !/^-+$/.test(word));
    expect(words.length).toBeGreaterThan(10);
    expect(new Set(words).size).toBe(words.length);
  });

  it("keeps the retired words out of the code, the docs and the tests", () => {
    const found: string[] = [];
    for (const file of sources()) {
      if (file === "test/infra/glossary.test.ts") continue;
      textOf(file)
        .split("\n")
        .forEach((line, index) => {
          for (const { word, use } of RETIRED) if (word.test(line)) found.push(`${file}:${index + 1}: ${line.trim().slice(0, 100)} -> ${use}`);
        });
    }
    expect(found).toEqual([]);
  });
});
