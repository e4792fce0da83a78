// A recording implementation of `@azure/functions-core`, the module the Azure Functions Node.js
// language worker provides to the app (its interface: @azure/functions' types-core). Preloaded
// with `node -r`, it answers `require("@azure/functions-core")` as the worker does, records what
// the app registers, and can invoke a registered function the way the worker does: through the
// programming model's invocation model (arguments, invoke, response).
const Module = require("node:module");

const registered = [];
let programmingModel;
const core = {
  version: "3.10.1",
  hostVersion: "4.1040.0",
  setProgrammingModel(model) {
    programmingModel = model;
  },
  getProgrammingModel: () => programmingModel,
  registerHook: () => ({ dispose() {} }),
  log() {},
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

/** Invokes the HTTP function `name` with a GET of `url`, as the worker would; resolves with the HTTP response data. */
async function invokeHttp(name, url) {
  const entry = registered.find((r) => r.metadata.name === name);
  const [triggerName] = Object.entries(entry.metadata.bindings).find(([, binding]) => binding.type === "httpTrigger");
  const coreContext = {
    invocationId: "00000000-0000-0000-0000-000000000001",
    metadata: entry.metadata,
    request: {
      inputData: [{ name: triggerName, data: { http: { method: "GET", url, headers: { host: new URL(url).host }, query: {}, params: {} } } }],
      triggerMetadata: {},
    },
  };
  const model = programmingModel.getInvocationModel(coreContext);
  const { context, inputs } = await model.getArguments();
  const result = await model.invokeFunction(context, inputs, entry.callback);
  const response = await model.getResponse(context, result);
  return response.returnValue.http;
}

module.exports = { registered, invokeHttp };
globalThis.__functionsCore = module.exports;
