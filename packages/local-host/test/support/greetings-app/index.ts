import { app, type HttpRequest, type InvocationContext, type Timer } from "@azure/functions";
import * as df from "durable-functions";

// Another Node.js v4 programming-model app, of another domain: the local host must serve it from
// its registrations alone, as Azure's host would (test/worker/function-app.test.ts).

export const seen: { notes: unknown[]; hooks: string[]; attempts: number; timers: unknown[] } = { notes: [], hooks: [], attempts: 0, timers: [] };

app.http("greet", {
  route: "greet/{name?}",
  methods: ["GET"],
  authLevel: "function",
  handler: async (request: HttpRequest, context: InvocationContext) => {
    context.log(`greeting ${request.params.name ?? "nobody"}`);
    return {
      status: 200,
      jsonBody: { greeting: `hello ${request.params.name ?? "you"}`, query: request.query.get("q") },
      cookies: [{ name: "seen", value: "1", httpOnly: true }],
    };
  },
});

app.http("echo", {
  route: "files/{*path}",
  methods: ["POST"],
  handler: async (request: HttpRequest) => ({ status: 201, body: `${request.params.path}:${await request.text()}` }),
});

app.cosmosDB("notesChanged", {
  connection: "NOTES",
  databaseName: "%NOTES_DATABASE%",
  containerName: "notes",
  leaseContainerName: "note-leases",
  leaseContainerPrefix: "notes-",
  startFromBeginning: false,
  leaseExpirationInterval: 30_000,
  leaseRenewInterval: 10_000,
  retry: { strategy: "fixedDelay", maxRetryCount: 2, delayInterval: { seconds: 3 } },
  extraInputs: [df.input.durableClient()],
  handler: async (documents: unknown[], context: InvocationContext) => {
    seen.attempts++;
    if ((documents as { fail?: boolean }[]).some((d) => d.fail)) throw new Error("a note that fails");
    seen.notes.push(...documents);
    const client = df.getClient(context);
    if (!client) throw new Error("no durable client");
  },
});

app.timer("nightly", { schedule: "%NIGHTLY_SCHEDULE%", handler: (timer: Timer) => void seen.timers.push(timer) });

app.storageQueue("inbox", { queueName: "inbox", connection: "QUEUES", handler: () => {} });

df.app.activity("shout", { handler: (text: string) => text.toUpperCase() });
df.app.orchestration("greetTwice", function* (context) {
  const name = context.df.getInput<string>();
  const first: string = yield context.df.callActivity("shout", `hello ${name}`);
  const second: string = yield context.df.callActivity("shout", `bye ${name}`);
  return [first, second];
});
df.app.entity("tally", (context) => {
  context.df.setState((context.df.getState<number>(() => 0) ?? 0) + (context.df.getInput<number>() ?? 1));
});

app.hook.preInvocation((hook) => {
  seen.hooks.push(`pre ${hook.invocationContext.functionName}`);
});
app.hook.postInvocation((hook) => {
  seen.hooks.push(`post ${hook.invocationContext.functionName}${hook.error ? " failed" : ""}`);
});
app.hook.appStart(() => {
  seen.hooks.push("appStart");
});
