import { WEB_SECURITY_HEADERS } from "local-host";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { BINDING_SETTING_DEFAULTS } from "../../src/config";
import { changeFeedTriggers } from "../../src/pipeline/change-feed-triggers";
import { CONTAINERS, containerDefinitions, SPROCS, POST_TRIGGERS } from "../../src/store/definitions";
import { APP_COSMOS_DATA_ACTIONS, APP_STORAGE_ROLES } from "../support/app-roles";

const root = resolve(__dirname, "../..");
const infra = join(root, "infra");
const bicepFiles = [
  join(infra, "main.bicep"),
  ...readdirSync(join(infra, "app"))
    .filter((f) => f.endsWith(".bicep"))
    .map((f) => join(infra, "app", f)),
];
const source = (file: string) => readFileSync(file, "utf8");
const all = bicepFiles.map(source).join("\n");
/** Bicep text without comments and string contents (a small scanner): what structure checks look at. */
function code(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    if (text.startsWith("//", i)) {
      while (i < text.length && text[i] !== "\n") i++;
      out += "\n";
    } else if (text[i] === "'") {
      for (i++; i < text.length && text[i] !== "'"; i++) if (text[i] === "\\") i++;
      out += "''";
    } else {
      out += text[i];
    }
  }
  return out;
}

describe("Bicep templates (checked without the bicep CLI)", () => {
  it("are well formed: balanced brackets, and every module and loaded file exists", () => {
    for (const file of bicepFiles) {
      const text = code(source(file));
      for (const [open, close] of [
        ["{", "}"],
        ["[", "]"],
        ["(", ")"],
      ]) {
        expect(text.split(open).length, `${file} ${open}${close}`).toBe(text.split(close).length);
      }
      for (const [, path] of source(file).matchAll(/(?:module\s+\w+\s+|load(?:Text|Json)Content\()'([^']+)'/g)) {
        expect(existsSync(resolve(dirname(file), path)), `${file} -> ${path}`).toBe(true);
      }
    }
  });

  it("declare exactly the containers and partition keys the code uses, from the shared definitions", () => {
    expect(containerDefinitions.containers.map((c) => c.name).sort()).toEqual(Object.values(CONTAINERS).sort());
    const keys = Object.fromEntries(containerDefinitions.containers.map((c) => [c.name, c.partitionKeyPath]));
    expect(keys).toEqual({ users: "/userId", posts: "/postId", feed: "/type", leases: "/id", deadLetters: "/id" });
    expect(source(join(infra, "app/cosmos.bicep"))).toContain("loadJsonContent('../containers.json')");
    expect(source(join(infra, "app/cosmos.bicep"))).toMatch(/module containers 'cosmos-container\.bicep' = \[\s*for c in definitions\.containers/);
    // The change feed triggers watch declared containers and use the pre-created leases container.
    for (const trigger of changeFeedTriggers) expect(Object.values(CONTAINERS)).toContain(trigger.containerName);
    expect(new Set(changeFeedTriggers.map((t) => t.leaseContainerPrefix)).size).toBe(changeFeedTriggers.length);
    expect(source(join(root, "functions/change-feeds.ts"))).toContain("createLeaseContainerIfNotExists: false");
  });

  it("deploy every stored procedure and trigger the code calls, and nothing else, from sprocs/", () => {
    const declaredSprocs = containerDefinitions.containers.flatMap((c) => c.storedProcedures);
    const declaredTriggers = containerDefinitions.containers.flatMap((c) => c.triggers.map((t) => t.name));
    expect(declaredSprocs.sort()).toEqual(Object.values(SPROCS).sort());
    expect(declaredTriggers.sort()).toEqual(Object.values(POST_TRIGGERS).sort());
    const container = source(join(infra, "app/cosmos-container.bicep"));
    for (const name of [...declaredSprocs, ...declaredTriggers]) {
      expect(existsSync(join(root, "sprocs", `${name}.js`)), name).toBe(true);
      expect(container).toContain(`${name}: loadTextContent('../../sprocs/${name}.js')`);
    }
    expect(container).toMatch(/for name in definition\.storedProcedures/);
    expect(container).toMatch(/for trigger in definition\.triggers/);
    expect(containerDefinitions.containers.find((c) => c.name === "posts")?.storedProcedures).toEqual(
      expect.arrayContaining(["createComment", "changeLikes", "updateUsernames"]),
    );
    expect(containerDefinitions.containers.find((c) => c.name === "feed")?.triggers).toEqual([
      { name: "truncateFeed", triggerType: "Post", triggerOperation: "All" },
    ]);
  });

  it("fit indexing and TTL to the queries: content never indexed, soft deletes and tombstones expire", () => {
    for (const c of containerDefinitions.containers.filter((c) => c.name !== "leases" && c.name !== "deadLetters")) {
      expect(
        c.indexingPolicy.excludedPaths.map((p) => p.path),
        c.name,
      ).toContain("/content/?");
      expect(
        c.indexingPolicy.includedPaths.map((p) => p.path),
        c.name,
      ).toContain("/*");
      // Per-item TTL works only where the container enables it: soft deletes (posts), tombstones (users, feed).
      expect(c, c.name).toMatchObject({ defaultTtl: -1 });
    }
    // Q3, Q4/Q5 and Q6 filter on type and order by (type, creationDate, id): a composite index serves each.
    const composite = (name: string) =>
      (containerDefinitions.containers.find((c) => c.name === name)!.indexingPolicy as { compositeIndexes?: { path: string; order: string }[][] })
        .compositeIndexes;
    const index = (...orders: string[]) => [["/type", "/creationDate", "/id"].map((path, i) => ({ path, order: orders[i] }))];
    expect(composite("users")).toEqual(index("descending", "descending", "descending"));
    expect(composite("posts")).toEqual(index("descending", "ascending", "ascending"));
    expect(composite("feed")).toEqual(index("descending", "descending", "descending"));
    // Set-aside documents are kept, not queried by their content: only what `npm run dead-letters` sorts by is indexed.
    const deadLetters = containerDefinitions.containers.find((c) => c.name === "deadLetters")!;
    expect(deadLetters.indexingPolicy.excludedPaths).toEqual([{ path: "/*" }]);
  });

  it("are keyless: local auth off, shared keys off, no keys or connection strings anywhere", () => {
    const cosmos = source(join(infra, "app/cosmos.bicep"));
    expect(cosmos).toMatch(/disableLocalAuth:\s*true/);
    expect(cosmos).toMatch(/defaultConsistencyLevel:\s*'Session'/);
    expect(cosmos).toMatch(/type:\s*'Continuous'/);
    expect(source(join(infra, "app/storage.bicep"))).toMatch(/allowSharedKeyAccess:\s*false/);
    expect(source(join(infra, "app/monitoring.bicep"))).toMatch(/DisableLocalAuth:\s*true/);
    expect(all).not.toMatch(/listKeys|listConnectionStrings|AccountKey|primaryMasterKey|primaryKey|SharedAccessKey|@secure/i);
    const outputs = [...all.matchAll(/^output\s+(\w+)/gm)].map((m) => m[1]);
    expect(outputs.filter((name) => /key|secret|password|connection/i.test(name))).toEqual([]);
    expect(source(join(infra, "main.bicep"))).not.toMatch(/ConnectionString/);
  });

  it("give the Function App identity-based settings for everything the app and its triggers read", () => {
    const main = source(join(infra, "main.bicep"));
    const api = source(join(infra, "app/api.bicep"));
    for (const setting of [
      "COSMOS__accountEndpoint",
      "COSMOS__credential: 'managedidentity'",
      "COSMOS__clientId",
      "COSMOS_DATABASE",
      "AZURE_CLIENT_ID",
      "AUTH_ISSUER",
      "AUTH_AUDIENCE",
      "AUTH_SCOPE",
      "AUTH_APP_ROLES: authAppRoles",
      "SOFT_DELETE_TTL_SECONDS",
    ]) {
      expect(main, setting).toContain(setting);
    }
    for (const setting of [
      "AzureWebJobsStorage__credential: 'managedidentity'",
      "AzureWebJobsStorage__clientId",
      "AzureWebJobsStorage__blobServiceUri",
      "AzureWebJobsStorage__queueServiceUri",
      "AzureWebJobsStorage__tableServiceUri",
    ]) {
      expect(api, setting).toContain(setting);
    }
    expect(api).toMatch(/tier:\s*'FlexConsumption'/);
    expect(api).toMatch(/runtime:\s*\{\s*name:\s*'node',\s*version:\s*'22'\s*\}/);
    expect(api).toMatch(/type:\s*'UserAssigned'/);
    expect(source(join(root, "functions/change-feeds.ts"))).toContain('connection: "COSMOS"');
    expect(source(join(root, "functions/change-feeds.ts"))).toContain('"%COSMOS_DATABASE%"');
  });

  it("set every app setting a binding names as %NAME% (the host fails to index a function without it), and the hosts know each one's default", () => {
    const main = source(join(infra, "main.bicep"));
    const named = new Set(
      readdirSync(join(root, "functions"))
        .filter((file) => file.endsWith(".ts"))
        .flatMap((file) => [...source(join(root, "functions", file)).matchAll(/"%(\w+)%"/g)].map((m) => m[1])),
    );
    expect([...named].sort()).toEqual(Object.keys(BINDING_SETTING_DEFAULTS).sort());
    for (const setting of named) expect(main, setting).toMatch(new RegExp(`^\\s+${setting}: `, "m"));
  });

  it("grant the Function App identity data-plane and storage roles, named with guid()", () => {
    const cosmos = source(join(infra, "app/cosmos.bicep"));
    const rbac = source(join(infra, "app/rbac.bicep"));
    expect(cosmos).toMatch(/sqlRoleAssignments@[\d-]+' = \{[\s\S]*?principalId: appPrincipalId/);
    expect(source(join(infra, "main.bicep"))).toMatch(/appPrincipalId: identity\.outputs\.principalId/);
    for (const action of APP_COSMOS_DATA_ACTIONS) expect(cosmos).toContain(action);
    expect(cosmos).not.toMatch(/dataActions:[\s\S]*containers\/\*'/);
    for (const role of APP_STORAGE_ROLES) expect(rbac).toContain(role);
    const assignments = [...all.matchAll(/(roleAssignments|sqlRoleAssignments|sqlRoleDefinitions)@[\d-]+' = [^\n]*\n(?:.*\n){0,3}?\s*name: (\S+)/g)];
    expect(assignments.length).toBeGreaterThanOrEqual(5);
    for (const [, , name] of assignments) expect(name).toMatch(/^guid\(/);
  });

  it("have UPPER_CASE outputs, parameters for every required main.bicep parameter, and an azd function service", () => {
    const main = source(join(infra, "main.bicep"));
    for (const [, name] of main.matchAll(/^output\s+(\w+)/gm)) expect(name).toMatch(/^[A-Z][A-Z0-9_]*$/);
    const parameters = JSON.parse(source(join(infra, "main.parameters.json"))).parameters as Record<string, unknown>;
    const required = [...main.matchAll(/^param\s+(\w+)\s+\w+\s*$/gm)].map((m) => m[1]);
    for (const name of required) expect(Object.keys(parameters), name).toContain(name);
    for (const name of Object.keys(parameters)) expect(main).toMatch(new RegExp(`^param ${name}\\b`, "m"));
    const azure = source(join(root, "azure.yaml"));
    expect(azure).toMatch(/host:\s*function/);
    expect(main).not.toContain("azd-service-name");
    expect(main).toMatch(/targetScope = 'subscription'/);
  });

  it("avoid the deployment traps of azd and the resource providers", () => {
    const main = source(join(infra, "main.bicep"));
    const api = source(join(infra, "app/api.bicep"));
    const cosmos = source(join(infra, "app/cosmos.bicep"));
    // azd finds the service by its tag: exactly one resource (the site) carries it.
    expect(api.match(/azd-service-name/g)).toHaveLength(1);
    expect(api).toMatch(/resource functionApp 'Microsoft\.Web\/sites@[\d-]+' = \{[^}]*tags: union\(tags, \{ 'azd-service-name': 'api' \}\)/);
    expect(api).toMatch(/resource plan 'Microsoft\.Web\/serverfarms@[\d-]+' = \{[^}]*tags: tags\n/);
    // The second Cosmos DB role assignment waits for the first (concurrent writes get 412).
    expect(cosmos).toMatch(/resource userDataAccess[\s\S]*?dependsOn: \[appDataAccess\]/);
    // Basic publishing credentials are off for both FTP and SCM.
    for (const name of ["ftp", "scm"])
      expect(api).toMatch(new RegExp(`'basicPublishingCredentialsPolicies' = \\{\\s*name: '${name}'\\s*properties: \\{ allow: false \\}`));
    // Only regions that offer Flex Consumption can be chosen.
    const allowed = /@allowed\(\[([^\]]*)\]\)\s*@metadata\(\{ azd: \{ type: 'location' \} \}\)\s*param location string/.exec(main);
    expect(allowed).not.toBeNull();
    const regions = allowed![1]
      .split("\n")
      .map((r) => r.trim().replace(/'/g, ""))
      .filter(Boolean);
    expect(regions.length).toBeGreaterThan(20);
    expect(regions).toEqual(expect.arrayContaining(["eastus", "westeurope", "swedencentral", "japaneast"]));
    // azd substitutes every parameter from the environment, numbers and the principal's type included.
    const parameters = JSON.parse(source(join(infra, "main.parameters.json"))).parameters as Record<string, { value: string }>;
    expect(parameters.principalType.value).toBe("${AZURE_PRINCIPAL_TYPE=User}");
    expect(parameters.cosmosAutoscaleMaxThroughput.value).toMatch(/^\$\{COSMOS_AUTOSCALE_MAX_THROUGHPUT=\d+\}$/);
    expect(parameters.softDeleteTtlSeconds.value).toMatch(/^\$\{SOFT_DELETE_TTL_SECONDS=\d+\}$/);
  });

  it("let the platform answer CORS for the origins configured (CORS_ALLOWED_ORIGINS, as the local host does)", () => {
    const main = source(join(infra, "main.bicep"));
    const api = source(join(infra, "app/api.bicep"));
    expect(api).toMatch(/siteConfig: \{[^}]*cors: \{ allowedOrigins: corsAllowedOrigins, supportCredentials: false \}/);
    expect(main).toMatch(/corsAllowedOrigins: union\(\[web\.outputs\.origin\], empty\(corsAllowedOrigins\) \? \[\] : map\(split\(corsAllowedOrigins, ','\)/);
    const parameters = JSON.parse(source(join(infra, "main.parameters.json"))).parameters as Record<string, { value: string }>;
    expect(parameters.corsAllowedOrigins.value).toBe("${CORS_ALLOWED_ORIGINS=}");
  });

  it("deploy the web front end to Static Web Apps with the API's URL and sign-in settings it needs", () => {
    const main = source(join(infra, "main.bicep"));
    const web = source(join(infra, "app/web.bicep"));
    expect(web).toMatch(/resource web 'Microsoft\.Web\/staticSites@[\d-]+' = \{[^}]*tags: union\(tags, \{ 'azd-service-name': 'web' \}\)/);
    const azure = source(join(root, "azure.yaml"));
    expect(azure).toMatch(
      /web:\n\s+project: \.\n\s+language: js\n\s+host: staticwebapp\n[\s\S]*dist: dist\/web[\s\S]*prepackage:[\s\S]*run: node web\/write-config\.mjs/,
    );
    // Every variable the hook reads is an output of main.bicep (azd puts outputs in the environment).
    const hook = source(join(root, "web/write-config.mjs"));
    for (const [, name] of hook.matchAll(/env\("(\w+)"\)/g)) expect(main).toMatch(new RegExp(`^output ${name} string`, "m"));
    const parameters = JSON.parse(source(join(infra, "main.parameters.json"))).parameters as Record<string, { value: string }>;
    expect(parameters.webClientId.value).toBe("${AUTH_WEB_CLIENT_ID=}");
    expect(parameters.apiScope.value).toBe("${AUTH_API_SCOPE=}");
  });

  it("provision before packaging on azd up, so the web app's hook finds the API's address, and run the hook on Windows too", () => {
    const azure = source(join(root, "azure.yaml"));
    // A fresh environment has no API_BASE_URL until provisioning ends; azd otherwise packages while it provisions.
    expect(azure).toMatch(/workflows:\n\s+up:\n\s+steps:\n\s+- azd: provision\n\s+- azd: deploy --all/);
    const hook = /prepackage:\n([\s\S]*?)\n(?:\S|# )/.exec(`${azure}\n#`)![1];
    expect(hook).toMatch(/posix:\n\s+shell: sh\n\s+run: node web\/write-config\.mjs/);
    expect(hook).toMatch(/windows:\n\s+shell: pwsh\n\s+run: node web\/write-config\.mjs/);
  });

  it("write a config.json the front end understands, Entra ID when the app registration is given", () => {
    const run = (env: Record<string, string>) => {
      execFileSync("node", [join(root, "web/write-config.mjs")], { env: { PATH: process.env.PATH, ...env } });
      return JSON.parse(readFileSync(join(root, "web/config.json"), "utf8"));
    };
    try {
      expect(run({ API_BASE_URL: "https://func-x.azurewebsites.net/api" })).toEqual({
        apiBase: "https://func-x.azurewebsites.net/api",
        auth: { mode: "none" },
      });
      const entra = { WEB_AUTH_CLIENT_ID: "c1", WEB_AUTH_AUTHORITY: "https://login.microsoftonline.com/t1", WEB_API_SCOPE: "api://a1/access_as_user" };
      expect(run({ API_BASE_URL: "https://a/api", ...entra })).toEqual({
        apiBase: "https://a/api",
        auth: { mode: "entra", clientId: "c1", authority: "https://login.microsoftonline.com/t1", scope: "api://a1/access_as_user" },
      });
      expect(() => run({})).toThrow();
    } finally {
      rmSync(join(root, "web/config.json"), { force: true });
      rmSync(join(root, "web/staticwebapp.config.json"), { force: true });
    }
  });

  it("write the front end's security headers for Static Web Apps: npm start's policy, with the API's origin", () => {
    const run = (env: Record<string, string>) => {
      execFileSync("node", [join(root, "web/write-config.mjs")], { env: { PATH: process.env.PATH, ...env } });
      return (JSON.parse(readFileSync(join(root, "web/staticwebapp.config.json"), "utf8")) as { globalHeaders: Record<string, string> }).globalHeaders;
    };
    const directives = (policy: string) =>
      Object.fromEntries(
        policy
          .split(";")
          .map((d) => d.trim().split(/\s+/))
          .map(([name, ...values]) => [name, values]),
      );
    try {
      const plain = run({ API_BASE_URL: "https://func-x.azurewebsites.net/api" });
      const local = directives(WEB_SECURITY_HEADERS["content-security-policy"]);
      const azure = directives(plain["content-security-policy"]);
      expect(azure["connect-src"]).toEqual(["'self'", "https://func-x.azurewebsites.net"]);
      // Everything else as npm start sends it: no framing, own scripts only.
      expect({ ...azure, "connect-src": local["connect-src"] }).toEqual(local);
      expect({ ...plain, "content-security-policy": "" }).toEqual({ ...WEB_SECURITY_HEADERS, "content-security-policy": "" });
      const entra = run({
        API_BASE_URL: "https://a.example/api",
        WEB_AUTH_CLIENT_ID: "c1",
        WEB_AUTH_AUTHORITY: "https://login.microsoftonline.com/t1",
        WEB_API_SCOPE: "api://a1/x",
      });
      const signIn = directives(entra["content-security-policy"]);
      expect(signIn["connect-src"]).toEqual(["'self'", "https://a.example", "https://login.microsoftonline.com"]);
      expect(signIn["frame-src"]).toEqual(["https://login.microsoftonline.com"]);
    } finally {
      rmSync(join(root, "web/config.json"), { force: true });
      rmSync(join(root, "web/staticwebapp.config.json"), { force: true });
    }
  });
});
