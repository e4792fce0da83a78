// azd hook (postprovision): waits until the role assignments provisioning just created can have
// propagated, so the first deploy does not fail on a 403 (Azure RBAC takes minutes to apply; the
// app identity reads its deployment package with one). It asks Azure Resource Manager, with azd's
// own sign-in, when the app identity's and your role assignments in the resource group were
// created, and waits out ROLE_PROPAGATION_SECONDS (default 300) from the newest; older ones, a
// rerun, cost nothing. It never fails provisioning: without an answer it says so and goes on.
// Plain JavaScript with no dependencies, so it runs before anything is installed.
import { execFileSync } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";

const env = (name) => process.env[name]?.trim() || undefined;
const propagationMs = Number(env("ROLE_PROPAGATION_SECONDS") ?? 300) * 1000;
const arm = (env("AZURE_RESOURCE_MANAGER_ENDPOINT") ?? "https://management.azure.com").replace(/\/+$/, "");

/** An access token for Resource Manager, from azd's sign-in. */
function armToken() {
  const output = execFileSync("azd", ["auth", "token", "--output", "json", "--scope", "https://management.azure.com//.default"], {
    encoding: "utf8",
    shell: process.platform === "win32",
  });
  return JSON.parse(output).token;
}

/** When each role assignment of `principalId` in the resource group was created (ms since the epoch). */
async function createdTimes(token, principalId) {
  const scope = `/subscriptions/${env("AZURE_SUBSCRIPTION_ID")}/resourceGroups/${env("AZURE_RESOURCE_GROUP")}`;
  const url = `${arm}${scope}/providers/Microsoft.Authorization/roleAssignments?api-version=2022-04-01&$filter=${encodeURIComponent(`assignedTo('${principalId}')`)}`;
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  if (!response.ok) throw new Error(`listing role assignments answered ${response.status}`);
  const { value } = await response.json();
  return value.map((assignment) => Date.parse(assignment.properties.createdOn)).filter((time) => !Number.isNaN(time));
}

async function main() {
  const principals = [env("API_PRINCIPAL_ID"), env("AZURE_PRINCIPAL_ID")].filter(Boolean);
  if (propagationMs <= 0 || principals.length === 0 || !env("AZURE_SUBSCRIPTION_ID") || !env("AZURE_RESOURCE_GROUP")) return;
  const token = armToken();
  const times = (await Promise.all(principals.map((principal) => createdTimes(token, principal)))).flat();
  if (times.length === 0) return;
  const ready = Math.max(...times) + propagationMs;
  if (ready <= Date.now()) {
    console.log("role assignments: old enough to have propagated");
    return;
  }
  console.log(
    `role assignments were just created: waiting ${Math.ceil((ready - Date.now()) / 1000)} s for them to propagate before deploying (ROLE_PROPAGATION_SECONDS=${propagationMs / 1000})`,
  );
  while (Date.now() < ready) {
    await sleep(Math.min(15_000, ready - Date.now()));
    if (Date.now() < ready) console.log(`  ${Math.ceil((ready - Date.now()) / 1000)} s to go`);
  }
  console.log("role assignments: done waiting");
}

main().catch((error) => {
  console.warn(`could not check the role assignments (${error.message}); if the first deploy fails with 403, run azd deploy again in a few minutes`);
});
