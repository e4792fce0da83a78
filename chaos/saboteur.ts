import { CosmosClient, type Database } from "@azure/cosmos";
import { sendHostileRequest } from "./hostile-requests";

/**
 * What happens to a deployment that no API can prevent: a writer that bypasses it (a migration
 * script, a bug, an edit in Data Explorer) puts malformed documents in `posts` and `users`, and
 * an operator deletes change feed leases or garbles their checkpoints. The guarantees must hold
 * regardless, and every malformed document must end up set aside, never silently lost. It also
 * sends what an attacker would (hostile-requests.ts), each of which must be refused.
 */
export class Saboteur {
  /** The ids of the malformed documents written, each of which must be set aside. */
  readonly malformed: { source: "posts" | "users"; id: string }[] = [];
  acts = 0;
  private client?: { endpoint: string; client: CosmosClient };

  /** Hostile requests the host answered otherwise than by refusing them. */
  readonly unrefused: string[] = [];
  hostileRequests = 0;

  constructor(
    private readonly account: () => { endpoint: string; key: string } | undefined,
    private readonly rng: () => number,
    private readonly databaseName: string,
    /** The host's API base, for the hostile requests (none when absent). */
    private readonly api: () => string | undefined = () => undefined,
    /** The hosts' dev-token secret, for the hostile requests that carry a token (the built-in one when absent). */
    private readonly devSecret?: string,
  ) {}

  /** One act, chosen at random; a failure (the host is restarting) is no act. */
  async act(): Promise<void> {
    const database = this.database();
    if (!database) return;
    const n = this.acts;
    const acts = [
      () =>
        this.rogue(database, "posts", {
          id: `rogue-post-${n}`,
          postId: `rogue-post-${n}`,
          type: "post",
          title: 12345,
          content: null,
          creationDate: "not-a-date",
        }),
      () =>
        this.rogue(database, "users", {
          id: `rogue-user-${n}`,
          userId: `rogue-user-${n}`,
          type: "user",
          username: 123,
          creationDate: new Date().toISOString(),
          usernameChangedDate: new Date().toISOString(),
        }),
      () =>
        this.rogue(database, "users", {
          id: `username:rogue-claim-${n}`,
          userId: `username:rogue-claim-${n}`,
          type: "username",
          ownerId: 42,
          username: `rogue-claim-${n}`,
        }),
      () => this.damageLease(database, "delete"),
      () => this.damageLease(database, "garble"),
    ];
    try {
      await acts[Math.floor(this.rng() * acts.length)]();
      this.acts++;
    } catch {
      // the host (and its embedded server) is restarting: try again next time
    }
    await this.hostileRequest();
  }

  private database(): Database | undefined {
    const account = this.account();
    if (!account) return undefined;
    if (this.client?.endpoint !== account.endpoint) {
      this.client?.client.dispose();
      this.client = {
        endpoint: account.endpoint,
        client: new CosmosClient({ endpoint: account.endpoint, key: account.key, connectionPolicy: { enableEndpointDiscovery: false } }),
      };
    }
    return this.client.client.database(this.databaseName);
  }

  private async rogue(database: Database, source: "posts" | "users", document: { id: string; [field: string]: unknown }): Promise<void> {
    await database.container(source).items.create(document);
    this.malformed.push({ source, id: document.id });
  }

  private async damageLease(database: Database, how: "delete" | "garble"): Promise<void> {
    const leases = database.container("leases");
    const { resources } = await leases.items.readAll<{ id: string; continuation: string }>().fetchAll();
    if (resources.length === 0) return;
    const lease = resources[Math.floor(this.rng() * resources.length)];
    if (how === "delete") await leases.item(lease.id, lease.id).delete();
    else await leases.item(lease.id, lease.id).replace({ ...lease, continuation: "{garbled" });
  }

  /** A request an attacker would send (hostile-requests.ts): the host must refuse it, and the guarantees hold regardless. */
  private async hostileRequest(): Promise<void> {
    const account = this.account();
    const api = this.api();
    if (!account || !api) return;
    const violation = await sendHostileRequest({ api, cosmosEndpoint: account.endpoint, cosmosKey: account.key, devSecret: this.devSecret }, this.rng);
    this.hostileRequests++;
    if (violation) this.unrefused.push(violation);
  }

  dispose(): void {
    this.client?.client.dispose();
  }
}
