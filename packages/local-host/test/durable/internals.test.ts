import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The local durable host drives internals of the durable-functions package (lib/src/...: the
 * replay engine, the history event and action numbers), declared by hand in
 * src/durable/package-internals.d.ts. Only the exact pin protects them: if an upgrade
 * moves or changes one, this fails and names it, before the host misbehaves.
 */
const declarations = readFileSync(join(__dirname, "../../src/durable/package-internals.d.ts"), "utf8");

/** The members of one `export enum` in the declarations: name -> number. */
function declaredEnum(name: string): Record<string, number> {
  const body = new RegExp(`export enum ${name} \\{([^}]*)\\}`).exec(declarations)![1];
  return Object.fromEntries([...body.matchAll(/(\w+) = (\d+)/g)].map((m) => [m[1], Number(m[2])]));
}

/** Loads an internal module of the installed package, failing with a message that names it. */
function internal<T>(path: string): T {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(`durable-functions/${path}`) as T;
  } catch (error) {
    throw new Error(`durable-functions no longer has ${path}, which src/durable uses: ${(error as Error).message}`, { cause: error });
  }
}

describe("the durable-functions internals the local host drives", () => {
  it("are the version the declarations were written for", () => {
    const pkg = JSON.parse(readFileSync(require.resolve("durable-functions/package.json"), "utf8")) as { version: string };
    expect(pkg.version, "durable-functions was upgraded: check package-internals.d.ts against lib/src, then update this pin").toBe("3.5.0");
  });

  it("still hold the history event and action numbers the declarations give", () => {
    for (const [name, path] of [
      ["HistoryEventType", "lib/src/history/HistoryEventType"],
      ["ActionType", "lib/src/actions/ActionType"],
    ] as const) {
      const actual = internal<Record<string, Record<string, number>>>(path)[name];
      expect(actual, `${path} exports no ${name}`).toBeDefined();
      for (const [member, value] of Object.entries(declaredEnum(name))) expect(actual[member], `${name}.${member} in ${path}`).toBe(value);
    }
  });

  it("still export the replay engine with the method the host calls", () => {
    const { Orchestrator } = internal<{ Orchestrator?: { prototype: Record<string, unknown> } }>("lib/src/orchestrations/Orchestrator");
    expect(Orchestrator, "lib/src/orchestrations/Orchestrator exports no Orchestrator").toBeDefined();
    expect(typeof Orchestrator!.prototype.handle, "Orchestrator.prototype.handle").toBe("function");
    expect(Orchestrator!.prototype.handle).toHaveLength(2);
  });
});
