import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import semver from "semver";
import { describe, expect, it } from "vitest";

// What docs/dependencies.md says of the installed tree, held to package-lock.json: the tree
// `npm ci` installs on a fresh clone, dev dependencies included.
const root = resolve(__dirname, "../..");
const json = (path: string) => JSON.parse(readFileSync(join(root, path), "utf8"));
const lock = json("package-lock.json") as { packages: Record<string, { version?: string; hasInstallScript?: boolean; link?: boolean }> };
const manifest = json("package.json") as { allowScripts: Record<string, boolean>; overrides: Record<string, string> };
const dependencies = json("packages/local-host/package.json").dependencies as Record<string, string>;
const doc = readFileSync(join(root, "docs/dependencies.md"), "utf8");

const nameOf = (path: string) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length);
/** Where each package is installed: one path per copy (npm nests a copy where one version cannot serve every dependent). */
function copies(): Map<string, string[]> {
  const paths = new Map<string, string[]>();
  for (const [path, entry] of Object.entries(lock.packages))
    if (path.includes("node_modules/") && !entry.link && entry.version) paths.set(nameOf(path), [...(paths.get(nameOf(path)) ?? []), path]);
  return paths;
}

/** Every installed package (by name) with the versions of it the tree holds. */
function installed(): Map<string, Set<string>> {
  return new Map([...copies()].map(([name, paths]) => [name, new Set(paths.map((path) => lock.packages[path].version!))]));
}

/**
 * Advisories whose ranges scanners flag and that packages of this tree were, or could be, in.
 * npm audit is the check where the registry answers it; the registry this project's CI installs
 * from does not, so CI holds the tree to these ranges. A new advisory on a package of the tree
 * is added here with its range.
 */
const ADVISORIES: { id: string; name: string; range: string }[] = [
  { id: "GHSA-67hx-6x53-jw92", name: "@babel/traverse", range: "<7.23.2" },
  { id: "GHSA-jr5f-v2jv-69x6", name: "axios", range: ">=1.0.0 <1.8.2" },
  { id: "GHSA-4hjh-wcwx-xvwj", name: "axios", range: ">=1.0.0 <1.12.0" },
  { id: "GHSA-3xgq-45jj-v275", name: "cross-spawn", range: ">=7.0.0 <7.0.5" },
  { id: "GHSA-pxg6-pf52-xh8x", name: "cookie", range: "<0.7.0" },
  { id: "GHSA-mwcw-c2x4-8c55", name: "nanoid", range: "<3.3.8" },
  { id: "GHSA-fjxv-7rqg-78g4", name: "form-data", range: "<2.5.4 || >=3.0.0 <3.0.4 || >=4.0.0 <4.0.4" },
  { id: "GHSA-cxjh-pqwp-8mfp", name: "follow-redirects", range: "<1.15.6" },
  { id: "GHSA-8cf7-32gw-wr33", name: "jsonwebtoken", range: "<9.0.0" },
  { id: "GHSA-776f-qx25-q3cc", name: "xml2js", range: "<0.5.0" },
  { id: "GHSA-c2qf-rxjj-qqgw", name: "semver", range: "<5.7.2 || >=6.0.0 <6.3.1 || >=7.0.0 <7.5.2" },
  { id: "GHSA-9c47-m6qq-7p4h", name: "json5", range: "<1.0.2 || >=2.0.0 <2.2.2" },
  { id: "GHSA-xvch-5gv4-984h", name: "minimist", range: "<0.2.4 || >=1.0.0 <1.2.6" },
  { id: "GHSA-76c9-3jph-rj3q", name: "on-headers", range: "<1.1.0" },
  { id: "GHSA-67mh-4wv8-2f99", name: "esbuild", range: "<=0.24.2" },
  { id: "GHSA-h755-8qp9-cq85", name: "protobufjs", range: ">=7.0.0 <7.2.4" },
  { id: "GHSA-wc69-rhjr-hc9g", name: "moment", range: ">=2.18.0 <2.29.4" },
  { id: "GHSA-xxjr-mmjv-4gpg", name: "lodash", range: ">=4.0.0 <4.17.23" },
];

/** The advisories a tree is in: one line per package version inside an advisory's range. */
function advisoriesIn(tree: Map<string, Set<string>>): string[] {
  return ADVISORIES.flatMap(({ id, name, range }) =>
    [...(tree.get(name) ?? [])].filter((version) => semver.satisfies(version, range)).map((version) => `${name}@${version} (${id}, ${range})`),
  );
}

describe("the installed tree (docs/dependencies.md)", () => {
  it("holds one version of each OpenTelemetry package, the line the Azure Monitor exporter accepts", () => {
    const tree = installed();
    // One copy, so one version, and the bundle carries each module once.
    const twice = [...copies()].filter(([name, paths]) => name.startsWith("@opentelemetry/") && paths.length > 1);
    expect(twice.map(([name, paths]) => `${name}: ${paths.join(", ")}`)).toEqual([]);
    // The exporter's ranges are what hold the line back; the page names them.
    const exporter = json("node_modules/@azure/monitor-opentelemetry-exporter/package.json").dependencies as Record<string, string>;
    expect(doc).toContain(`\`@opentelemetry/sdk-logs\` \`${exporter["@opentelemetry/sdk-logs"]}\``);
    const [stable] = tree.get("@opentelemetry/core")!;
    const [experimental] = tree.get("@opentelemetry/sdk-logs")!;
    expect(doc).toContain(`${stable} / ${experimental}`);
    expect(dependencies["@opentelemetry/sdk-node"]).toBe(experimental);
  });

  it("holds no package in the range of a known advisory", () => {
    expect(advisoriesIn(installed())).toEqual([]);
    // The check itself: the version @zeit/cosmosdb-query asks for is inside CVE-2023-45133's range.
    expect(advisoriesIn(new Map([["@babel/traverse", new Set(["7.6.2"])]]))).toEqual(["@babel/traverse@7.6.2 (GHSA-67hx-6x53-jw92, <7.23.2)"]);
  });

  it("names every package with an install script in allowScripts, and the page names them all", () => {
    const withScripts = new Set(
      Object.entries(lock.packages)
        .filter(([, entry]) => entry.hasInstallScript)
        .map(([path]) => nameOf(path)),
    );
    expect(new Set(Object.keys(manifest.allowScripts))).toEqual(withScripts);
    for (const name of withScripts) expect(doc).toContain(`\`${name}\``);
  });

  it("pins every direct dependency to an exact version, in the root and in each package", () => {
    const manifests = ["package.json", "packages/local-host/package.json", "packages/embedded-cosmos/package.json"].map(json) as {
      dependencies?: Record<string, string>;
      devDependencies?: Record<string, string>;
    }[];
    const ranges = manifests.flatMap((m) => Object.entries({ ...m.dependencies, ...m.devDependencies }).filter(([, spec]) => !semver.valid(spec)));
    expect(ranges).toEqual([]);
  });

  it("says why each override is there", () => {
    for (const name of Object.keys(manifest.overrides)) expect(doc).toContain(`\`${name}\``);
  });
});
