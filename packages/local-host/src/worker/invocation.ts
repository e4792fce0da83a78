import { randomUUID } from "node:crypto";
import type { CoreInvocationContext, HookName, RegisteredFunction, Registrations, RpcTypedData } from "./functions-core";

export interface InvocationRequest {
  /** The trigger's and the extra inputs' data, by binding name. */
  inputData: { name: string; data: RpcTypedData }[];
  triggerMetadata?: Record<string, RpcTypedData>;
}

export interface InvocationResponse {
  returnValue?: RpcTypedData | null;
  outputData?: { name: string; data: RpcTypedData }[];
  /** The arguments the function was called with (the HttpRequest of an HTTP trigger, say). */
  inputs: unknown[];
}

/** Runs the hooks registered under `name`, one after another, as the worker does. */
export async function runHooks(registrations: Registrations, name: HookName, context: Record<string, unknown>): Promise<void> {
  for (const hook of registrations.hooks.get(name) ?? []) await hook(context);
}

/**
 * One invocation of a registered function, as the Node.js worker makes it: the programming
 * model turns the host's data into the function's arguments and context, the pre-invocation
 * hooks run (and may replace the handler or the inputs), the function runs, the post-invocation
 * hooks see its result or error, and the model turns the result into the host's data.
 */
export async function invoke(
  registrations: Registrations,
  fn: RegisteredFunction,
  request: InvocationRequest,
  log: (level: string, message: string) => void,
): Promise<InvocationResponse> {
  const { programmingModel: model, appHookData } = registrations;
  if (!model) throw new Error(`'${fn.metadata.name}' was registered without a programming model (is @azure/functions v4 the app's?)`);
  let invocationContext: unknown;
  const core: CoreInvocationContext = {
    invocationId: randomUUID(),
    metadata: fn.metadata,
    request: { inputData: request.inputData, triggerMetadata: request.triggerMetadata ?? {} },
    log(level, category, message) {
      // The worker passes the app's own lines (category "user") through the log hooks; its system lines it keeps.
      if (category === "user") void runHooks(registrations, "log", { hookData: {}, appHookData, level, category, message, invocationContext });
      log(level, message);
    },
  };
  const invocation = model.getInvocationModel(core);
  const { context, inputs } = await invocation.getArguments();
  invocationContext = context;
  const hookData: Record<string, unknown> = {};
  const before = { hookData, appHookData, invocationContext: context, functionCallback: fn.callback, inputs };
  core.state = "preInvocationHooks";
  await runHooks(registrations, "preInvocation", before);
  core.state = "invocation";
  const running = invocation.invokeFunction(context, before.inputs, before.functionCallback);
  const after = { hookData, appHookData, invocationContext: context, inputs: before.inputs, result: null as unknown, error: null as unknown };
  try {
    after.result = await running;
  } catch (error) {
    after.error = error;
  }
  core.state = "postInvocationHooks";
  await runHooks(registrations, "postInvocation", after);
  core.state = undefined;
  if (after.error) throw after.error;
  return { ...(await invocation.getResponse(context, after.result)), inputs: before.inputs };
}

/** A JSON value from what a function returned (activities, orchestrators, entities answer JSON). */
export function jsonOf(data: RpcTypedData | null | undefined): string {
  if (!data) return "null";
  if (data.json !== undefined) return data.json;
  if (data.string !== undefined) return JSON.stringify(data.string);
  if (data.int !== undefined) return String(data.int);
  if (data.double !== undefined) return String(data.double);
  if (data.bytes !== undefined) return JSON.stringify(Buffer.from(data.bytes).toString("base64"));
  return "null";
}
