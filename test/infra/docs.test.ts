import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/** The documentation the repository carries: the README as the front door, the pages it links. */
const root = resolve(__dirname, "../..");
const pages = [
  "README.md",
  "CONTRIBUTING.md",
  ...readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];
const text = (page: string) => readFileSync(join(root, page), "utf8");

/** Relative link targets of a Markdown page (no URLs, no bare anchors), without their anchors. */
const relativeLinks = (page: string) =>
  [...text(page).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1])
    .filter((target) => !/^(https?:|mailto:|#)/.test(target))
    .map((target) => target.split("#")[0]);

/** Paths of this repository named in code spans (`src/...`), so a renamed file cannot leave a stale name behind. */
const namedPaths = (page: string) =>
  [...text(page).matchAll(/`((?:src|local|functions|scripts|test|chaos|bench|infra|web|sprocs|docs)\/[\w./-]+\.(?:ts|mjs|js|json|bicep|md))`/g)].map(
    (m) => m[1],
  );

describe("the documentation", () => {
  it.each(pages)("%s: every relative link resolves to a file or folder of the repository", (page) => {
    const broken = relativeLinks(page).filter((target) => !existsSync(join(root, dirname(page), decodeURIComponent(target))));
    expect(broken).toEqual([]);
  });

  it.each(pages)("%s: every repository path it names exists", (page) => {
    expect(namedPaths(page).filter((path) => !existsSync(join(root, path)))).toEqual([]);
  });

  it("keeps the README a front door: under 20 KB, linking every page in docs/", () => {
    expect(statSync(join(root, "README.md")).size).toBeLessThan(20 * 1024);
    const linked = new Set(relativeLinks("README.md"));
    const unlinked = pages.filter((page) => page.startsWith("docs/")).filter((page) => !linked.has(page));
    expect(unlinked).toEqual([]);
  });
});
