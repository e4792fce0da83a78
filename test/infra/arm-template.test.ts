import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { APP_SETTINGS } from "../../src/config";
import { containerDefinitions } from "../../src/store/definitions";
import { METRICS } from "../../src/telemetry/names";
import { APP_COSMOS_DATA_ACTIONS, APP_STORAGE_ROLES } from "../support/app-roles";

/**
 * The ARM template `bicep build` makes of infra/ (infra/compiled/main.json; CI rebuilds it with
 * the pinned CLI and fails on any difference), checked against the code: what Azure will really
 * be asked to create, not the Bicep text.
 */
const root = join(__dirname, "../..");
const template = JSON.parse(readFileSync(join(root, "infra/compiled/main.json"), "utf8")) as Template;

interface Resource {
  type: string;
  name: string;
  properties?: Record<string, unknown> & { template?: Template; parameters?: Record<string, { value?: unknown }> };
  /** An ARM condition: the resource exists only when it holds. */
  condition?: string;
}
interface Template {
  parameters?: Record<string, { defaultValue?: unknown }>;
  variables?: Record<string, unknown>;
  resources: Resource[];
  outputs: Record<string, unknown>;
}

/** The module (nested deployment) of main.bicep named `name`. */
const moduleNamed = (name: string) => template.resources.find((r) => r.type === "Microsoft.Resources/deployments" && r.name === name)!;
const resourcesOf = (module: Resource) => module.properties!.template!.resources;
const text = (value: unknown) => JSON.stringify(value);
/** A template variable, following `[variables('...')]` to the value loadJsonContent/loadTextContent inlined. */
function variable(scope: Template, name: string): unknown {
  const value = scope.variables![name];
  const reference = typeof value === "string" ? /^\[variables\('([^']+)'\)\]$/.exec(value)?.[1] : undefined;
  return reference ? variable(scope, reference) : value;
}

describe("the compiled template", () => {
  it("sets what the app needs on the Function App, and only settings the app or the Functions host read", () => {
    const api = moduleNamed("api");
    const given = Object.keys(api.properties!.parameters!.appSettings.value as Record<string, unknown>);
    const config = resourcesOf(api).find((r) => r.type === "Microsoft.Web/sites/config")!;
    // The names of createObject('name', value, 'name', value, ...) in the settings' union.
    const created = /createObject\((.*?)\), parameters\('appSettings'\)/.exec(String(config.properties))![1];
    const hostSettings = [...created.matchAll(/(?:^|\), |, )'([A-Za-z_]+)', /g)].map((m) => m[1]).filter((name) => /^[A-Z]/.test(name));
    expect(hostSettings).toEqual(
      expect.arrayContaining([
        "AzureWebJobsStorage__credential",
        "AzureWebJobsStorage__blobServiceUri",
        "AzureWebJobsStorage__queueServiceUri",
        "AzureWebJobsStorage__tableServiceUri",
      ]),
    );
    const settings = [...given, ...hostSettings];
    // Without an endpoint loadSettings throws; without an issuer and audience nobody can write.
    expect(settings).toEqual(expect.arrayContaining(["COSMOS__accountEndpoint", "AUTH_ISSUER", "AUTH_AUDIENCE"]));
    const appReads = APP_SETTINGS.map((s) => s.name);
    // Everything else the app reads is optional, with a default.
    for (const setting of APP_SETTINGS.filter((s) => !settings.includes(s.name))) expect(setting.optional, setting.name).toBe(true);
    const hostReads = /^(COSMOS__(credential|clientId)|AzureWebJobsStorage__\w+|APPLICATIONINSIGHTS_\w+|AZURE_CLIENT_ID)$/;
    for (const name of settings) expect(appReads.includes(name) || hostReads.test(name), name).toBe(true);
  });

  it("grants every identity-based connection its roles, at the right scope", () => {
    const cosmos = resourcesOf(moduleNamed("cosmos"));
    const app = text(moduleNamed("cosmos").properties!.parameters!.appPrincipalId);
    expect(app).toContain("'identity'");
    // COSMOS__* (the change feed trigger and the app's client): the data-plane role, scoped to the database.
    const assignments = cosmos.filter((r) => r.type === "Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments");
    const forApp = assignments.find((r) => text(r.properties).includes("parameters('appPrincipalId')"))!;
    expect(text(forApp.properties)).toMatch(/"scope":"\[format\('\{0\}\/dbs\/\{1\}'/);
    const definition = cosmos.find((r) => r.type === "Microsoft.DocumentDB/databaseAccounts/sqlRoleDefinitions")!;
    const actions = text(definition.properties);
    for (const action of APP_COSMOS_DATA_ACTIONS) expect(actions).toContain(action);
    // AzureWebJobsStorage__* (host, Durable Functions, deployment package): blob, queue and table roles on the account.
    const rbac = resourcesOf(moduleNamed("rbac")).filter((r) => r.type === "Microsoft.Authorization/roleAssignments");
    const variables = text(moduleNamed("rbac").properties!.template!.variables);
    for (const role of APP_STORAGE_ROLES) expect(variables).toContain(role);
    expect(rbac.some((r) => text(r).includes("Microsoft.Storage/storageAccounts") && text(r.properties).includes("parameters('appPrincipalId')"))).toBe(true);
  });

  it("creates the containers of infra/containers.json, with their scripts from sprocs/", () => {
    const cosmos = moduleNamed("cosmos");
    expect(variable(cosmos.properties!.template!, "definitions")).toEqual(containerDefinitions);
    const perContainer = resourcesOf(cosmos).find((r) => r.type === "Microsoft.Resources/deployments")!.properties!.template!;
    const bodies = variable(perContainer, "scriptBodies") as Record<string, string>;
    const scripts = Object.fromEntries(
      Object.keys(bodies).map((name) => [
        name,
        variable({ ...perContainer, variables: { ...perContainer.variables, probe: bodies[name] } }, "probe") as string,
      ]),
    );
    const declared = containerDefinitions.containers.flatMap((c) => [...c.storedProcedures, ...c.triggers.map((t) => t.name)]);
    expect(Object.keys(scripts).sort()).toEqual(declared.sort());
    for (const name of declared) expect(scripts[name], name).toBe(readFileSync(join(root, "sprocs", `${name}.js`), "utf8"));
  });

  it("outputs everything the azd hooks and the deploy guide read", () => {
    // What azd itself puts in the environment, and the hooks' own settings, need no output.
    const fromAzd = ["AZURE_SUBSCRIPTION_ID", "AZURE_PRINCIPAL_ID", "ROLE_PROPAGATION_SECONDS", "AZURE_RESOURCE_MANAGER_ENDPOINT"];
    const read = ["web/write-config.mjs", "scripts/wait-for-roles.mjs"]
      .flatMap((hook) => [...readFileSync(join(root, hook), "utf8").matchAll(/env\("(\w+)"\)/g)].map((m) => m[1]))
      .filter((name) => !fromAzd.includes(name));
    expect(read).toEqual(expect.arrayContaining(["API_BASE_URL", "API_PRINCIPAL_ID", "AZURE_RESOURCE_GROUP"]));
    for (const name of [...read, "SERVICE_API_NAME", "AZURE_FUNCTION_APP_NAME", "WEB_URI"]) expect(Object.keys(template.outputs), name).toContain(name);
  });
});

describe("the compiled template: what an operator watches", () => {
  const observability = () => resourcesOf(moduleNamed("observability"));
  const ofType = (type: string) => observability().filter((r) => r.type === type);

  it("sends Cosmos DB's request logs to the workspace, in resource-specific tables", () => {
    const [diagnostics] = ofType("Microsoft.Insights/diagnosticSettings");
    expect(diagnostics.properties).toMatchObject({ logAnalyticsDestinationType: "Dedicated" });
    expect(text(diagnostics.properties)).toContain("DataPlaneRequests");
    expect(text(diagnostics.properties)).toContain("PartitionKeyRUConsumption");
  });

  it("alerts on API 5xx, Cosmos DB 429s and normalized RU, change feed lag, failed orchestrations and executions, to an action group with an optional e-mail", () => {
    const metricAlerts = ofType("Microsoft.Insights/metricAlerts").map((r) => text(r.properties));
    expect(metricAlerts.some((a) => a.includes("Http5xx"))).toBe(true);
    expect(metricAlerts.some((a) => a.includes("TotalRequests") && a.includes("429"))).toBe(true);
    expect(metricAlerts.some((a) => a.includes("NormalizedRUConsumption"))).toBe(true);
    // Normalized RU measures provisioned throughput: on the default serverless account the alert would mean nothing.
    const hot = ofType("Microsoft.Insights/metricAlerts").find((r) => text(r.properties).includes("NormalizedRUConsumption"))!;
    expect(hot.condition).toContain("autoscale");
    // "For 15 minutes": every minute of the window, not its hottest one.
    expect(hot.properties).toMatchObject({ windowSize: "PT15M", criteria: { allOf: [{ timeAggregation: "Minimum", threshold: 90 }] } });
    expect(template.parameters?.cosmosThroughputMode).toMatchObject({ defaultValue: "serverless" });
    const logAlerts = text(variable(moduleNamed("observability").properties!.template!, "logAlerts"));
    for (const signal of [METRICS.changeFeedLagSeconds, METRICS.orchestrations, "Success == false"]) expect(logAlerts).toContain(signal);
    const [group] = ofType("Microsoft.Insights/actionGroups");
    expect(text(group.properties)).toContain("alertEmail");
    expect(template.parameters?.alertEmail).toMatchObject({ defaultValue: "" });
  });

  it("creates its log alerts on a new workspace, whose App* tables do not exist yet (no query validation at creation)", () => {
    const [rule] = ofType("Microsoft.Insights/scheduledQueryRules");
    expect(rule.properties).toMatchObject({ skipQueryValidation: true });
  });

  it("counts rows in its log alerts and workbook as sampling leaves them: each stands for ItemCount telemetry items", () => {
    const observability = moduleNamed("observability").properties!.template!;
    const queries = `${text(variable(observability, "logAlerts"))} ${text(variable(observability, "workbookQueries"))}`;
    // count() over App* rows undercounts once Application Insights samples; sum(ItemCount) does not.
    for (const query of queries.match(/App[A-Za-z]+ \|[^"]*/g) ?? []) expect(query, query).not.toMatch(/\bcount\(\)/);
    expect(queries).toContain("sum(ItemCount)");
  });

  it("lets applications in with the app roles AUTH_APP_ROLES names, a parameter wired to the app setting", () => {
    expect(template.parameters?.authAppRoles).toMatchObject({ type: "string", defaultValue: "" });
    expect(text(moduleNamed("api").properties)).toContain("AUTH_APP_ROLES");
  });

  it("adds a workbook with the operations page's views, over the metric names the app records", () => {
    const [workbook] = ofType("Microsoft.Insights/workbooks");
    const queries = text(variable(moduleNamed("observability").properties!.template!, "workbookQueries"));
    // The names the app records them under (src/telemetry/names.ts): a rename there fails here.
    for (const metric of [METRICS.routeCharge, METRICS.httpDuration, METRICS.cosmosDuration, METRICS.changeFeedLagSeconds, METRICS.orchestrations])
      expect(queries).toContain(metric);
    expect(text(workbook.properties)).toContain("Notebook/1.0");
  });
});

describe("the compiled template: the private network (vnetEnabled)", () => {
  const parameters = JSON.parse(readFileSync(join(root, "infra/main.parameters.json"), "utf8")) as { parameters: Record<string, { value: string }> };
  const first = (module: string, type: string) => resourcesOf(moduleNamed(module)).find((r) => r.type === type)!;

  it("is on unless VNET_ENABLED says otherwise, as in Azure's Functions templates", () => {
    expect(template.parameters!.vnetEnabled.defaultValue).toBe(true);
    expect(parameters.parameters.vnetEnabled.value).toBe("${VNET_ENABLED=true}");
    for (const name of ["network", "private-endpoints"]) expect(moduleNamed(name).condition, name).toBe("[parameters('vnetEnabled')]");
  });

  it("integrates the Function App with a subnet delegated to Flex Consumption", () => {
    const [network] = resourcesOf(moduleNamed("network"));
    const subnets = (network.properties as { subnets: { name: string; properties: { delegations?: { properties: { serviceName: string } }[] } }[] }).subnets;
    expect(subnets.map((s) => s.name)).toEqual(["app", "private-endpoints"]);
    expect(subnets[0].properties.delegations?.[0].properties.serviceName).toBe("Microsoft.App/environments");
    expect(text(moduleNamed("api").properties!.parameters!.subnetId)).toMatch(
      /if\(parameters\('vnetEnabled'\).*outputs\.appSubnetId\.value.*createObject\('value', ''\)/,
    );
    expect(first("api", "Microsoft.Web/sites").properties!.virtualNetworkSubnetId).toBe("[if(empty(parameters('subnetId')), null(), parameters('subnetId'))]");
  });

  it("reaches blob, queue and table storage and Cosmos DB through private endpoints, each with its private DNS zone linked to the network", () => {
    const module = moduleNamed("private-endpoints");
    const endpoints = variable(module.properties!.template!, "endpoints") as { groupId: string; zone: string }[];
    expect(endpoints.map((e) => e.groupId)).toEqual(["blob", "queue", "table", "Sql"]);
    expect(endpoints.map((e) => e.zone)).toEqual([
      "[format('privatelink.blob.{0}', environment().suffixes.storage)]",
      "[format('privatelink.queue.{0}', environment().suffixes.storage)]",
      "[format('privatelink.table.{0}', environment().suffixes.storage)]",
      "privatelink.documents.azure.com",
    ]);
    // One of each per endpoint: the zone, its link to the network, the endpoint, and the group that registers its address in the zone.
    const types = resourcesOf(module).map((r) => `${r.type} x ${(r as { copy?: { count: string } }).copy?.count}`);
    expect(types).toEqual(
      [
        "Microsoft.Network/privateDnsZones",
        "Microsoft.Network/privateDnsZones/virtualNetworkLinks",
        "Microsoft.Network/privateEndpoints",
        "Microsoft.Network/privateEndpoints/privateDnsZoneGroups",
      ].map((type) => `${type} x [length(variables('endpoints'))]`),
    );
  });

  it("turns public access off on Storage and Cosmos DB, Cosmos DB keeping only the addresses it is given", () => {
    const storage = first("storage", "Microsoft.Storage/storageAccounts").properties!;
    expect(storage.publicNetworkAccess).toBe("[if(parameters('vnetEnabled'), 'Disabled', 'Enabled')]");
    expect(storage.networkAcls).toBe(
      "[if(parameters('vnetEnabled'), createObject('defaultAction', 'Deny', 'bypass', 'None'), createObject('defaultAction', 'Allow', 'bypass', 'AzureServices'))]",
    );
    const cosmos = first("cosmos", "Microsoft.DocumentDB/databaseAccounts").properties!;
    expect(cosmos.publicNetworkAccess).toBe("[if(and(parameters('vnetEnabled'), empty(parameters('allowedIpAddresses'))), 'Disabled', 'Enabled')]");
    expect(String(cosmos.ipRules)).toMatch(/^\[if\(parameters\('vnetEnabled'\), map\(parameters\('allowedIpAddresses'\)/);
    expect(parameters.parameters.cosmosAllowedIpAddresses.value).toBe("${COSMOS_ALLOWED_IP_ADDRESSES=}");
  });
});

describe("the compiled template: priority-based execution", () => {
  it("is on for the account, high by default, so the background's low-priority requests are throttled first", () => {
    const account = resourcesOf(moduleNamed("cosmos")).find((r) => r.type === "Microsoft.DocumentDB/databaseAccounts")!;
    expect(account.properties).toMatchObject({ enablePriorityBasedExecution: true, defaultPriorityLevel: "High" });
    // The API version that has the two properties (generally available).
    expect((account as { apiVersion?: string }).apiVersion).toBe("2025-10-15");
  });
});

describe("the compiled template: full-text search", () => {
  it("has the account capability, in both throughput modes", () => {
    const account = resourcesOf(moduleNamed("cosmos")).find((r) => r.type === "Microsoft.DocumentDB/databaseAccounts")!;
    const capabilities = String(account.properties!.capabilities);
    expect(capabilities).toMatch(
      /^\[concat\(createArray\(createObject\('name', 'EnableNoSQLFullTextSearch'\)\), if\(equals\(parameters\('throughputMode'\), 'serverless'\)/,
    );
  });

  it("gives the posts container an en-US full-text policy and full-text indexes on the title and the content, and passes the policy to the container", () => {
    const cosmos = moduleNamed("cosmos");
    const posts = (variable(cosmos.properties!.template!, "definitions") as typeof containerDefinitions).containers.find((c) => c.name === "posts")!;
    expect(posts).toMatchObject({
      fullTextPolicy: {
        defaultLanguage: "en-US",
        fullTextPaths: [
          { path: "/title", language: "en-US" },
          { path: "/content", language: "en-US" },
        ],
      },
      indexingPolicy: { fullTextIndexes: [{ path: "/title" }, { path: "/content" }] },
    });
    const perContainer = resourcesOf(cosmos).find((r) => r.type === "Microsoft.Resources/deployments")!.properties!.template!;
    const container = perContainer.resources.find((r) => r.type === "Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers")!;
    expect(text(container.properties)).toContain("createObject('fullTextPolicy', parameters('definition').fullTextPolicy)");
    expect((container as { apiVersion?: string }).apiVersion).toBe("2025-10-15");
  });
});
