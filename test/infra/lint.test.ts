import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

/**
 * The layering is a rule the linter enforces (eslint.config.mjs), not a convention: each arrow
 * that would run back up is an error for the file that writes it, and so is an import circle
 * (.dependency-cruiser.cjs).
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
      'import { startLocalSystem } from "../../local/system";\nexport const s = startLocalSystem;',
      /imports nothing of the hosts|not pipeline/,
    ],
    [
      "packages/embedded-cosmos/src/engine/sample.ts",
      'import { routes } from "../../../../src/api/routes";\nexport const r = routes;',
      /knows nothing of the app/,
    ],
    ["local/sample.ts", 'import { CosmosServer } from "../packages/embedded-cosmos/src/protocol/server";\nexport const s = CosmosServer;', /through its entry/],
    [
      "packages/local-host/src/durable/sample.ts",
      'import { LIMITS } from "../../../../src/model/limits";\nexport const l = LIMITS;',
      /serves any Node.js v4 programming-model app/,
    ],
    ["test/sample.ts", 'import { DurableHost } from "local-host/dist/durable/host";\nexport const d = DurableHost;', /through its entry/],
    [
      "packages/local-host/src/durable/sample.ts",
      'import { ActionType } from "durable-functions/lib/src/actions/ActionType";\nexport const a = ActionType;',
      /one adapter module/,
    ],
    [
      "src/telemetry/sample.ts",
      'import { suppressTracing } from "@opentelemetry/core/build/src/trace/suppress-tracing";\nexport const s = suppressTracing;',
      /one adapter module/,
    ],
    ["lazy/sample.ts", 'import { routes } from "../src/api/routes";\nexport const r = routes;', /knows nothing of the app/],
    ["src/pipeline/sample.ts", 'import { DurableHost } from "local-host";\nexport const d = DurableHost;', /src\/pipeline\//],
    ["bench/sample.ts", 'import { cost } from "embedded-cosmos/dist/limits/request-units";\nexport const c = cost;', /through its entry/],
    ["src/store/sample.ts", 'import { startCosmos } from "embedded-cosmos";\nexport const s = startCosmos;', /below api\/ and pipeline\//],
    ["functions/sample.ts", 'import { startCosmos } from "embedded-cosmos";\nexport const s = startCosmos;', /registers src\/'s handlers/],
  ])("refuses what %s may not import", async (filePath, code, why) => {
    const found = await problems(filePath, code);
    expect(
      found.some((p) => /^(@typescript-eslint\/)?no-restricted-imports/.test(p) && why.test(p)),
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
    expect(
      await problems(
        "local/sample.ts",
        'import { routes } from "../src/api/routes";\nimport { DurableHost } from "local-host";\nexport const r = [routes, DurableHost];',
      ),
    ).toEqual([]);
  });

  it("finds an import circle (dependency-cruiser, with the repository's rules)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "circle-"));
    writeFileSync(join(dir, "a.ts"), 'import { b } from "./b";\nexport const a = () => b;\n');
    writeFileSync(join(dir, "b.ts"), 'import type { a } from "./a";\nexport const b = (): typeof a | undefined => undefined;\n');
    const { cruise } = await import("dependency-cruiser");
    const rules = createRequire(__filename)("../../.dependency-cruiser.cjs") as { forbidden: unknown[] };
    const result = await cruise([dir], { validate: true, ruleSet: { forbidden: rules.forbidden } as never, tsPreCompilationDeps: true });
    const violations = (result.output as { summary: { violations: { rule: { name: string } }[] } }).summary.violations;
    expect(violations.map((v) => v.rule.name)).toContain("no-circular"); // a type-only import closes a circle too
  });
});

describe("the size of files", () => {
  it("keeps every source and test file under 350 lines, or says at its top why it is longer (generated files aside)", () => {
    const root = join(__dirname, "../..");
    const files = execFileSync("git", ["ls-files", "*.ts", "*.js", "*.mjs", "*.cjs"], { cwd: root, encoding: "utf8" })
      .split("\n")
      .filter(
        (file) => file && !file.endsWith(".d.ts") && !file.startsWith("infra/compiled/") && !file.endsWith(".generated.js") && existsSync(join(root, file)),
      );
    const unexplained = files.filter((file) => {
      const lines = readFileSync(join(root, file), "utf8").split("\n");
      return lines.length > 350 && !lines.slice(0, 60).some((line) => /Longer than most files for a reason/.test(line));
    });
    expect(unexplained).toEqual([]);
  });
});
