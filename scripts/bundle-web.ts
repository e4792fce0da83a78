import { buildSync } from "esbuild";
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { projectRoot } from "../src/store/script-files";
import { replaceFolder } from "./output-folder";

/**
 * The web front end as browsers load it: web/src bundled and minified into dist/web/app.js
 * (MSAL in a chunk of its own, loaded only when sign-in is Entra ID), next to index.html and
 * styles.css. `npm start` serves this folder at `/`; `azd up` deploys it to Static Web Apps.
 */
export async function bundleWeb(root: string): Promise<{ dir: string; bytes: number }> {
  const dir = join(root, "dist/web");
  // Each folder is replaced whole: azd may be zipping the previous dist/web right now.
  await replaceFolder(join(root, "dist/web-sourcemaps"), (maps) =>
    replaceFolder(dir, (next) => {
      buildSync({
        entryPoints: { app: join(root, "web/src/main.ts") },
        outdir: next,
        bundle: true,
        splitting: true,
        format: "esm",
        platform: "browser",
        target: "es2022",
        minify: true,
        sourcemap: "linked",
        chunkNames: "chunks/[name]-[hash]",
        logLevel: "warning",
      });
      // Source maps stay out of what is deployed; `npm start -- --source-maps` serves them from beside it.
      for (const file of readdirSync(next, { recursive: true, encoding: "utf8" }).filter((name) => name.endsWith(".map"))) {
        mkdirSync(dirname(join(maps, file)), { recursive: true });
        renameSync(join(next, file), join(maps, file));
      }
      for (const file of ["index.html", "styles.css"]) copyFileSync(join(root, "web", file), join(next, file));
      // Written by the azd hook at deploy time (web/write-config.mjs); the local host serves its own of both.
      for (const file of ["config.json", "staticwebapp.config.json"])
        if (existsSync(join(root, "web", file))) copyFileSync(join(root, "web", file), join(next, file));
    }),
  );
  return { dir, bytes: statSync(join(dir, "app.js")).size };
}

if (require.main === module) {
  void bundleWeb(projectRoot()).then(({ dir, bytes }) =>
    console.log(
      `bundled the web app into ${dir} (app.js ${(bytes / 1024).toFixed(0)} KiB; ${readdirSync(join(dir, "chunks")).length} chunks loaded on demand)`,
    ),
  );
}
