// A recording implementation of `@azure/functions-core`, the module the Azure Functions Node.js
// language worker provides to the app (its interface: @azure/functions' types-core). Preloaded
// with `node -r`, it answers `require("@azure/functions-core")` as the worker does, records what
// the app registers, and can invoke a registered function the way the worker does: through the
// programming model's invocation model (arguments, invoke, response).
const Module = require("node:module");

const registered = [];
/** The hooks the app registered, by name, run where the worker runs them. */
const hooks = { appStart: [], appTerminate: [], preInvocation: [], postInvocation: [], log: [] };
const appHookData = {};
let programmingModel;
const core = {
  version: "3.10.1",
  hostVersion: "4.1040.0",
  setProgrammingModel(model) {
    programmingModel = model;
  },
  getProgrammingModel: () => programmingModel,
  registerHook(name, callback) {
    hooks[name].push(callback);
    return { dispose: () => hooks[name].splice(hooks[name].indexOf(callback), 1) };
  },
  /** A line the app logged through its context: the worker hands it to the log hooks, then to the host. */
  log(level, category, message) {
    for (const hook of hooks.log) hook({ level, category, message, hookData: {}, appHookData });
  },
  registerFunction(metadata, callback) {
    registered.push({ metadata: JSON.parse(JSON.stringify(metadata)), callback });
    return { dispose() {} };
  },
  Disposable: class {
    dispose() {}
  },
};

const load = Module._load;
Module._load = function (request, ...rest) {
  return request === "@azure/functions-core" ? core : load.call(this, request, ...rest);
};

/**
 * Invokes the HTTP function `name` with a GET of `url`, as the worker would: the pre-invocation
 * hooks (which may replace the handler), the handler, the post-invocation hooks; `traceParent` is
 * the host's trace of the invocation. Resolves with the HTTP response data.
 */
async function invokeHttp(name, url, traceParent) {
  const entry = registered.find((r) => r.metadata.name === name);
  const [triggerName] = Object.entries(entry.metadata.bindings).find(([, binding]) => binding.type === "httpTrigger");
  const coreContext = {
    invocationId: "00000000-0000-0000-0000-000000000001",
    metadata: entry.metadata,
    request: {
      // The host sends the query string parsed beside the URL, as the worker's HttpRequest reads it.
      inputData: [
        {
          name: triggerName,
          data: { http: { method: "GET", url, headers: { host: new URL(url).host }, query: Object.fromEntries(new URL(url).searchParams), params: {} } },
        },
      ],
      triggerMetadata: {},
      ...(traceParent ? { traceContext: { traceParent, traceState: "", attributes: {} } } : {}),
    },
  };
  const model = programmingModel.getInvocationModel(coreContext);
  const { context, inputs } = await model.getArguments();
  const hookData = {};
  const pre = { invocationContext: context, inputs, functionCallback: entry.callback, hookData, appHookData };
  for (const hook of hooks.preInvocation) await hook(pre);
  const result = await model.invokeFunction(context, pre.inputs, pre.functionCallback);
  for (const hook of hooks.postInvocation) await hook({ invocationContext: context, inputs: pre.inputs, result, error: undefined, hookData, appHookData });
  const response = await model.getResponse(context, result);
  return response.returnValue.http;
}

/** What the worker does when the host stops it (scale-in, a new deployment): the app-terminate hooks, awaited. */
async function terminate() {
  for (const hook of hooks.appTerminate) await hook({ hookData: {}, appHookData });
}

module.exports = { registered, invokeHttp, terminate };
globalThis.__functionsCore = module.exports;
