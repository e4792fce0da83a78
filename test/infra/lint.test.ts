import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

/**
 * The layering is a rule the linter enforces (eslint.config.mjs), not a convention: each arrow
 * that would run back up, and an import circle, is an error for the file that writes it.
 */
const eslint = new ESLint({ cwd: process.cwd() });
const problems = async (filePath: string, code: string) => (await eslint.lintText(code, { filePath }))[0].messages.map((m) => `${m.ruleId}: ${m.message}`);

describe("the linter's layering", () => {
  it.each([
    ["src/model/sample.ts", 'import { store } from "../store/client";\nexport const s = store;', /src\/model\/ is pure/],
    ["src/model/sample.ts", 'import { CosmosClient } from "@azure/cosmos";\nexport const c = CosmosClient;', /src\/model\/ is pure/],
    ["src/store/sample.ts", 'import { routes } from "../api/routes";\nexport const r = routes;', /below api\/ and pipeline\//],
    ["src/api/sample.ts", 'import { CosmosClient } from "@azure/cosmos";\nexport const c = CosmosClient;', /Only src\/store\/ talks to Cosmos DB/],
    ["src/pipeline/sample.ts", 'import { routes } from "../api/routes";\nexport const r = routes;', /not api\//],
    [
      "src/api/sample.ts",
      'import { startLocalSystem } from "../../local/host/system";\nexport const s = startLocalSystem;',
      /imports nothing of the hosts|not pipeline/,
    ],
    ["local/cosmos/sample.ts", 'import { routes } from "../../src/api/routes";\nexport const r = routes;', /knows nothing of the app/],
    ["functions/sample.ts", 'import { startCosmos } from "../local/cosmos";\nexport const s = startCosmos;', /registers src\/'s handlers/],
  ])("refuses what %s may not import", async (filePath, code, why) => {
    const found = await problems(filePath, code);
    expect(
      found.some((p) => p.startsWith("no-restricted-imports") && why.test(p)),
      found.join("\n"),
    ).toBe(true);
  });

  it("allows the arrows of the architecture", async () => {
    expect(
      await problems(
        "src/api/sample.ts",
        'import { store } from "../store/client";\nimport { LIMITS } from "../model/limits";\nexport const s = [store, LIMITS];',
      ),
    ).toEqual([]);
    expect(await problems("local/host/sample.ts", 'import { routes } from "../../src/api/routes";\nexport const r = routes;')).toEqual([]);
  });

  it("finds an import circle", async () => {
    // store/client.ts imports config.ts: config importing it back would close a circle.
    const found = await problems("src/config.ts", 'import { store } from "./store/client";\nexport const s = store;');
    expect(
      found.some((p) => p.startsWith("import-x/no-cycle")),
      found.join("\n"),
    ).toBe(true);
  });
});
