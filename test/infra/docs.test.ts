import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { routes } from "../../src/api/routes";
import { APP_SETTINGS } from "../../src/config";

/** The documentation the repository carries: the README as the front door, the pages it links. */
const root = resolve(__dirname, "../..");
const markdownIn = (folder: string) =>
  existsSync(join(root, folder))
    ? readdirSync(join(root, folder))
        .filter((name) => name.endsWith(".md"))
        .map((name) => `${folder}/${name}`)
    : [];
/** The local runtime's packages: each carries its own README and docs, its paths named from its own folder. */
const packages = readdirSync(join(root, "packages")).map((name) => `packages/${name}`);
const pages = ["README.md", "CONTRIBUTING.md", ...markdownIn("docs"), ...packages.flatMap((dir) => [...markdownIn(dir), ...markdownIn(`${dir}/docs`)])];
const text = (page: string) => readFileSync(join(root, page), "utf8");

/** Relative link targets of a Markdown page (no URLs, no bare anchors), without their anchors. */
const relativeLinks = (page: string) =>
  [...text(page).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1])
    .filter((target) => !/^(https?:|mailto:|#)/.test(target))
    .map((target) => target.split("#")[0]);

const PATH = String.raw`(?:src|local|functions|scripts|test|chaos|bench|infra|web|sprocs|docs|packages)\/[\w./-]+\.(?:json|ts|mjs|js|bicep|md)(?!\w)`;
/** Paths of this repository named in code spans (`src/...`), so a renamed file cannot leave a stale name behind. */
const namedPaths = (page: string) => [...text(page).matchAll(new RegExp("`(" + PATH + ")`", "g"))].map((m) => m[1]);
/** A named path exists from the repository's root, or from the package the naming file is in. */
const exists = (path: string, namer: string) => {
  const home = packages.find((dir) => namer.startsWith(`${dir}/`));
  return existsSync(join(root, path)) || (home !== undefined && existsSync(join(root, home, path)));
};

/** Every source file of the repository (what its comments name must exist too). */
function sources(folder: string): string[] {
  return readdirSync(join(root, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = `${folder}/${entry.name}`;
    if (entry.isDirectory()) return entry.name === "node_modules" || entry.name === "dist" ? [] : sources(path);
    return /\.(ts|mjs|cjs|js)$/.test(entry.name) ? [path] : [];
  });
}
/** A file's name as a page names it: without its folder and extension (`.d.ts` included). */
const fileName = (file: string) =>
  file
    .split("/")
    .pop()!
    .replace(/(\.d)?\.(ts|mjs|cjs|js)$/, "")
    .replace(/[.]/g, "\\.");

/** Paths named in a source file's comments (`//` and `*` lines). */
const pathsInComments = (file: string) =>
  text(file)
    .split("\n")
    .filter((line) => /^\s*(\/\/|\*|\/\*)/.test(line))
    .flatMap((line) => [...line.matchAll(new RegExp(String.raw`(?<![\w./-])(` + PATH + ")", "g"))].map((m) => m[1].replace(/[.]$/, "")));

describe("the documentation", () => {
  it.each(pages)("%s: every relative link resolves to a file or folder of the repository", (page) => {
    const broken = relativeLinks(page).filter((target) => !existsSync(join(root, dirname(page), decodeURIComponent(target))));
    expect(broken).toEqual([]);
  });

  it.each(pages)("%s: every repository path it names exists", (page) => {
    expect(namedPaths(page).filter((path) => !exists(path, page))).toEqual([]);
  });

  it("names in code comments only paths that exist", () => {
    const files = ["src", "functions", "local", "scripts", "chaos", "bench", "test", "web/src", ...packages].flatMap(sources);
    expect(files.length).toBeGreaterThan(100);
    const stale = files.flatMap((file) =>
      pathsInComments(file)
        .filter((path) => !exists(path, file))
        .map((path) => `${file}: ${path}`),
    );
    expect(stale).toEqual([]);
  });

  it("docs/architecture.md names every source file in its room", () => {
    const architecture = text("docs/architecture.md");
    const files = ["src", "functions", "local", "scripts", "chaos", "bench", "web/src", "sprocs", ...packages.map((dir) => `${dir}/src`)].flatMap(sources);
    const unnamed = files.filter((file) => !new RegExp(String.raw`(?<![\w-])${fileName(file)}(?![\w-])`).test(architecture));
    expect(unnamed).toEqual([]);
  });

  it.each(pages)("%s: every npm command it names is a script of package.json", (page) => {
    const scripts = Object.keys((JSON.parse(text("package.json")) as { scripts: Record<string, string> }).scripts);
    const named = [...text(page).matchAll(/\bnpm run (?:--silent )?([\w-]+(?::[\w-]+)*)/g)].map((m) => m[1]);
    expect(named.filter((name) => !scripts.includes(name))).toEqual([]);
  });

  it("names in README.md and docs/api.md only routes the route table serves", () => {
    const templates = routes.map((route) => new RegExp(`^/api/${route.route.replace(/\{\w+\}/g, "[^/?#\\s]+")}$`));
    const named = ["README.md", "docs/api.md"].flatMap((page) =>
      [...text(page).matchAll(/(?<![\w/])(\/api\/[\w{}./-]+)/g)].map((m) => m[1].replace(/[.]$/, "").replace(/\{(\w+)\}/g, "x")),
    );
    expect(named.length).toBeGreaterThan(5);
    expect([...new Set(named)].filter((path) => path !== "/api" && !templates.some((route) => route.test(path)))).toEqual([]);
  });

  it("docs/configuration.md names every app setting the app reads", () => {
    const configuration = text("docs/configuration.md");
    expect(APP_SETTINGS.map((setting) => setting.name).filter((name) => !configuration.includes(`\`${name}\``))).toEqual([]);
  });

  it("keeps the README a front door: under 12 KB, linking every page in docs/", () => {
    expect(statSync(join(root, "README.md")).size).toBeLessThan(12 * 1024);
    const linked = new Set(relativeLinks("README.md"));
    const unlinked = pages.filter((page) => page.startsWith("docs/")).filter((page) => !linked.has(page));
    expect(unlinked).toEqual([]);
  });
});
