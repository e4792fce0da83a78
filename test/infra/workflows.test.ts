import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { validateWorkflow } from "@action-validator/core";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

/** The GitHub Actions workflows the repository carries, valid against the workflow schema and doing what the README says. */
const workflows = join(__dirname, "../../.github/workflows");
const read = (name: string) => readFileSync(join(workflows, name), "utf8");

interface Workflow {
  permissions: Record<string, string>;
  jobs: Record<string, { steps: { uses?: string; run?: string; with?: Record<string, unknown> }[] }>;
}

describe("the GitHub Actions workflows", () => {
  it("are valid workflows, every one of them", () => {
    const files = readdirSync(workflows).filter((name) => /\.ya?ml$/.test(name));
    expect(files.sort()).toEqual(["azure-dev.yml", "ci.yml"]);
    for (const file of files) {
      const result = validateWorkflow(read(file));
      expect(result.errors, file).toEqual([]);
    }
    // The validator does check: a job without runs-on is refused.
    expect(validateWorkflow("on: push\njobs:\n  broken:\n    steps:\n      - run: true\n").errors.length).toBeGreaterThan(0);
  });

  it("CI runs .ci/run on a clean checkout, with the .NET SDK that fetches the Bicep CLI", () => {
    const ci = parse(read("ci.yml")) as Workflow;
    const steps = ci.jobs.ci.steps;
    expect(steps.map((s) => s.uses ?? s.run)).toEqual(["actions/checkout@v4", "actions/setup-node@v4", "actions/setup-dotnet@v4", ".ci/run"]);
    expect(ci.permissions).toEqual({ contents: "read" });
  });

  it("the azd pipeline signs in with federated credentials (no secrets), then provisions and deploys", () => {
    const text = read("azure-dev.yml");
    const deploy = parse(text) as Workflow;
    expect(deploy.permissions).toEqual({ "id-token": "write", contents: "read" });
    expect(text).not.toMatch(/secrets\./);
    const runs = deploy.jobs.deploy.steps.map((s) => s.run ?? s.uses);
    expect(runs).toEqual(expect.arrayContaining(["Azure/setup-azd@v2", "npm ci", "azd provision --no-prompt", "azd deploy --all --no-prompt"]));
    expect(runs.find((r) => r?.startsWith("azd auth login"))).toMatch(/--federated-credential-provider github/);
    expect(runs.indexOf("azd provision --no-prompt")).toBeLessThan(runs.indexOf("azd deploy --all --no-prompt"));
  });
});

describe("Dependabot", () => {
  it("proposes npm and GitHub Actions upgrades weekly, with the pairs that must move together grouped", () => {
    const config = parse(readFileSync(join(__dirname, "../../.github/dependabot.yml"), "utf8")) as {
      updates: { "package-ecosystem": string; groups?: Record<string, { patterns: string[] }>; ignore?: { "dependency-name": string }[] }[];
    };
    expect(config.updates.map((u) => u["package-ecosystem"]).sort()).toEqual(["github-actions", "npm"]);
    const npm = config.updates.find((u) => u["package-ecosystem"] === "npm")!;
    expect(npm.groups!.zod.patterns).toEqual(["zod", "@asteasolutions/zod-to-openapi"]);
    expect(npm.groups!["azure-sdk"].patterns).toEqual(["@azure/*"]);
    // OpenTelemetry moves as one line with the exporter that holds it: its group comes first, so the exporter joins it.
    expect(Object.keys(npm.groups!)[0]).toBe("opentelemetry");
    expect(npm.groups!.opentelemetry.patterns).toEqual(["@opentelemetry/*", "@azure/monitor-opentelemetry-exporter"]);
    // Every dependency of package.json is covered by a group, or taken by hand on purpose.
    const pkg = JSON.parse(readFileSync(join(__dirname, "../../package.json"), "utf8")) as { dependencies: Record<string, string> };
    const grouped = (name: string) =>
      Object.values(npm.groups!).some((g) => g.patterns.some((p) => (p.endsWith("*") ? name.startsWith(p.slice(0, -1)) : name === p)));
    expect(
      Object.keys(pkg.dependencies)
        .filter((name) => name.startsWith("@azure/") || name.startsWith("@opentelemetry/"))
        .every(grouped),
    ).toBe(true);
    expect(npm.ignore?.map((i) => i["dependency-name"])).toEqual(["durable-functions"]);
  });
});
