import { build, type BuildOptions, type Plugin } from "esbuild";
import { appendFileSync, copyFileSync, existsSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { SPLITS, type Split } from "../lazy/splits";
import { projectRoot } from "../src/store/script-files";
import { replaceFolder } from "./output-folder";

/** Every file of a deployable folder's code: the app's registrations, and the splits beside it. */
export const BUNDLES = ["index.js", ...SPLITS.map((split) => split.file)] as const;

/** The split of `file` (azure-monitor.js, ...), from the declaration. */
export const splitOf = (file: string): Split => {
  const split = SPLITS.find((candidate) => candidate.file === file);
  if (!split) throw new Error(`no split is declared as ${file} (lazy/splits.ts)`);
  return split;
};

/** A module as a split names it: a package by its name, a file of the app by its project path without extension. */
function moduleName(root: string, path: string, resolveDir: string): string {
  if (!path.startsWith(".")) return path;
  return relative(root, resolve(resolveDir, path))
    .replaceAll("\\", "/")
    .replace(/\.(ts|js)$/, "");
}

/**
 * The declaration applied to a build: a package a stand-in answers gets the stand-in (except in
 * the stand-in itself), and a module a split holds becomes a require of its file beside the
 * bundle (except in the build of that split).
 */
export function splitsPlugin(root: string, building?: Split): Plugin {
  return {
    name: "lazy-splits",
    setup(esbuild) {
      esbuild.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === "entry-point") return undefined;
        const name = moduleName(root, args.path, args.resolveDir);
        const importer = relative(root, args.importer).replaceAll("\\", "/");
        const standIn = SPLITS.find((split) => split !== building && split.standIn?.for.includes(name) && split.standIn.file !== importer)?.standIn;
        if (standIn) return { path: join(root, standIn.file) };
        const split = SPLITS.find((candidate) => candidate !== building && candidate.modules.includes(name));
        if (split) return { path: `./${split.file}`, external: true };
        return undefined;
      });
    },
  };
}

/** How every bundle is built. */
const COMMON = {
  bundle: true,
  platform: "node",
  // The Function App runs Node.js 22 (infra/app/api.bicep).
  target: "node22",
  format: "cjs",
  sourcemap: "external",
  // Without comments and indentation index.js is a third smaller, and pure ASCII (comments of some
  // packages are not), so a cold start reads and scans less. Names stay: stacks still name each
  // function, and `npm run map-stack` maps their line:column through the source maps.
  minifyWhitespace: true,
  logLevel: "warning",
  // ES modules bundled as CommonJS lose import.meta.url (@azure/identity reads its folder from it): each file's own URL.
  banner: { js: 'const __importMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
  define: { "import.meta.url": "__importMetaUrl" },
} as const satisfies BuildOptions;

/**
 * Every function registration (functions/index.ts) bundled with its dependencies into one file:
 * no node_modules to install or load, and one file to read on a cold start; each split of
 * lazy/splits.ts a file beside it, read when first required. `@azure/functions-core` is the
 * Functions worker's own module, provided at run time.
 */
export async function bundle(root: string, file: string): Promise<{ file: string; bytes: number }> {
  await bundleEntry(root, file, { entryPoints: [join(root, "functions/index.ts")] });
  for (const split of SPLITS) await bundleSplit(root, dirname(file), split);
  return { file, bytes: statSync(file).size };
}

/** Code bundled into `file` as index.js is, its splits left to the files beside it (`entry`: a file, or source text). */
export async function bundleEntry(root: string, file: string, entry: Pick<BuildOptions, "entryPoints" | "stdin">): Promise<void> {
  await build({ ...COMMON, ...entry, outfile: file, external: ["@azure/functions-core"], plugins: [splitsPlugin(root)] });
}

/** One split, bundled into `folder`/<its file>: its modules, exported as `require` would give each. */
export async function bundleSplit(root: string, folder: string, split: Split): Promise<void> {
  const contents =
    split.modules.length === 1
      ? `module.exports = require(${JSON.stringify(moduleSource(root, split.modules[0]))});`
      : `module.exports = Object.assign({}, ${split.modules.map((name) => `require(${JSON.stringify(moduleSource(root, name))})`).join(", ")});`;
  await build({
    ...COMMON,
    stdin: { contents, resolveDir: root, sourcefile: split.file.replace(/\.js$/, ".entry.js") },
    outfile: join(folder, split.file),
    ...(split.esModulesFirst ? { mainFields: ["module", "main"] } : {}),
    alias: Object.fromEntries(Object.entries(split.alias ?? {}).map(([name, path]) => [name, join(root, path)])),
    plugins: [splitsPlugin(root, split)],
  });
}

/** A split's module as its bundle's entry requires it: a package by name, a file of the app by its absolute path. */
const moduleSource = (root: string, name: string) => (existsSync(join(root, `${name}.ts`)) ? join(root, name) : name);

/** The deployable folder's name under dist/: what azure.yaml's `dist`, `func start` and the package test read. */
export const DEPLOY_FOLDER = "dist/deploy";

/** Where the bundles' source maps go: beside the deployable folder, never in it (25 MiB that no cold start reads). */
export const sourceMapFolder = (folder: string) => `${folder}-sourcemaps`;

/**
 * Moves the bundles' source maps out of `folder` into `maps`, each bundle naming its map there
 * by a relative path: where the two folders lie side by side (a build), Node.js
 * (`--enable-source-maps`), a debugger and `npm run map-stack` find them; in Azure the path
 * leads nowhere and nothing is read.
 */
function moveSourceMaps(folder: string, maps: string, finalFolder: string): void {
  for (const bundled of BUNDLES) {
    renameSync(join(folder, `${bundled}.map`), join(maps, `${bundled}.map`));
    const link = relative(finalFolder, join(sourceMapFolder(finalFolder), `${bundled}.map`)).replaceAll("\\", "/");
    appendFileSync(join(folder, bundled), `//# sourceMappingURL=${link}\n`);
  }
}

/**
 * THE deployable function app, as a folder: host.json, a package.json whose `main` names the
 * bundle, and the bundle. azd zips it as it is (azure.yaml `dist`), `npm run func` runs the
 * Functions host in it, and the package test loads it from an empty folder. A local.settings.json
 * is copied in for `func start` (azd never ships that file).
 */
export async function packageApp(root: string, folder = join(root, DEPLOY_FOLDER)): Promise<{ folder: string; bytes: number }> {
  let bytes = 0;
  await replaceFolder(sourceMapFolder(folder), (maps) =>
    replaceFolder(folder, async (next) => {
      await bundle(root, join(next, "index.js"));
      moveSourceMaps(next, maps, folder);
      bytes = statSync(join(next, "index.js")).size;
      copyFileSync(join(root, "host.json"), join(next, "host.json"));
      const { name, version, description, license } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as Record<string, string>;
      writeFileSync(join(next, "package.json"), `${JSON.stringify({ name, version, description, license, private: true, main: "index.js" }, null, 2)}\n`);
      if (existsSync(join(root, "local.settings.json"))) copyFileSync(join(root, "local.settings.json"), join(next, "local.settings.json"));
    }),
  );
  return { folder, bytes };
}

if (require.main === module) {
  void packageApp(projectRoot()).then(({ folder, bytes }) =>
    console.log(
      `packaged the function app into ${folder} (index.js ${(bytes / 1024 / 1024).toFixed(1)} MiB, ${BUNDLES.slice(1).join(", ")}, host.json, package.json; source maps in ${basename(sourceMapFolder(folder))})`,
    ),
  );
}
