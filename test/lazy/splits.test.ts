import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SPLITS } from "../../lazy/splits";
import { BUNDLES } from "../../scripts/bundle";

const root = join(__dirname, "../..");
const requiresIn = (file: string) => [...readFileSync(join(root, file), "utf8").matchAll(/require\("([^"]+)"\)/g)].map((match) => match[1]);
const appFile = (name: string) => [".ts", ".js"].some((extension) => existsSync(join(root, `${name}${extension}`)));

describe("the lazy loading declaration (lazy/splits.ts)", () => {
  it("names every stand-in (and alias) in lazy/, and each stand-in requires only what its own split holds", () => {
    const standIns = SPLITS.flatMap((split) => [
      ...(split.standIn ? [split.standIn.file] : []),
      ...Object.values(split.alias ?? {}).filter((path) => path.startsWith("lazy/")),
    ]);
    const files = readdirSync(join(root, "lazy"))
      .filter((name) => name !== "splits.ts")
      .map((name) => `lazy/${name}`);
    expect(files.sort()).toEqual(standIns.sort());
    for (const split of SPLITS.filter((candidate) => candidate.standIn))
      expect(new Set(requiresIn(split.standIn!.file)), split.file).toEqual(new Set(split.modules));
  });

  it("names modules that exist, each in one split, and gives the deployment package a file per split", () => {
    const modules = SPLITS.flatMap((split) => split.modules);
    expect(new Set(modules).size).toBe(modules.length);
    const isPackage = (name: string) =>
      existsSync(
        join(
          root,
          "node_modules",
          name
            .split("/")
            .slice(0, name.startsWith("@") ? 2 : 1)
            .join("/"),
        ),
      );
    for (const name of modules) expect(appFile(name) || isPackage(name), name).toBe(true);
    expect(BUNDLES).toEqual(["index.js", ...SPLITS.map((split) => split.file)]);
  });

  it("names the file that loads each split, and that file requires one of its modules", () => {
    for (const split of SPLITS) {
      const loader = split.loadedBy.file;
      const required = requiresIn(loader).map((path) => (path.startsWith(".") ? join(loader, "..", path).replaceAll("\\", "/") : path));
      expect(
        required.some((path) => split.modules.includes(path)),
        `${split.file} from ${loader}`,
      ).toBe(true);
    }
  });
});

describe("functions/", () => {
  it("holds what registers the app with the Functions host, and its composition root (services, telemetry), nothing else", () => {
    expect(readdirSync(join(root, "functions/azure-monitor")).sort()).toEqual(["exporters.ts", "providers.ts", "sampling.ts"]);
    expect(readdirSync(join(root, "functions")).sort()).toEqual([
      "azure-monitor",
      "backlog-timer.ts",
      "change-feeds.ts",
      "composition-root.ts",
      "durable.ts",
      "http.ts",
      "index.ts",
      "telemetry.ts",
    ]);
    for (const file of ["backlog-timer.ts", "change-feeds.ts", "durable.ts", "http.ts", "telemetry.ts"])
      expect(readFileSync(join(root, "functions", file), "utf8"), file).toMatch(
        /\b(app|df\.app)\.(http|cosmosDB|timer|orchestration|activity|entity|hook|setup)\(/,
      );
  });
});
