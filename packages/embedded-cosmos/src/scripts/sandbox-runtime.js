// Runs INSIDE the script sandbox (a node:vm context), evaluated once per context. The host hands
// it one function, `bridge`, which takes and returns strings only; this closure keeps it out of
// scripts' reach, so nothing of the host's realm is ever a value a script can hold. Everything
// crossing back to the host is a string made here, by intrinsics taken before any script ran (a
// script may replace the global ones). The host treats those strings as untrusted JSON text.
(function setup(bridge) {
  "use strict";
  var parse = JSON.parse;
  var stringify = JSON.stringify;
  var toText = String;
  var SandboxError = Error;
  var evaluate = eval; // called by another name: an indirect eval, in the global scope
  var apply = Reflect.apply;
  var ownNames = Object.getOwnPropertyNames;
  var defineProperty = Object.defineProperty;
  var create = Object.create;
  var slice = Array.prototype.slice;
  var replace = String.prototype.replace;
  var join = Array.prototype.join;
  var global = globalThis;

  var running = false;
  var queue, logs, requestBody, responseBody, input;

  // Asks the host for a collection operation. A host failure of any kind (even a stack overflow
  // as the call begins) is dropped here, and the script sees an error of its own realm.
  function ask(op, argsText) {
    var reply;
    try {
      reply = bridge(op, argsText);
    } catch (hostError) {
      throw new SandboxError("The collection call could not be made.");
    }
    if (typeof reply !== "string") throw new SandboxError("The collection call could not be made.");
    return parse(reply);
  }

  function makeError(e) {
    var error = new SandboxError(e.message);
    error.number = e.number;
    error.body = e.message;
    return error;
  }
  function call(op, args, callback) {
    if (!running) throw new SandboxError("The script has finished: no more collection calls.");
    var argsText = stringify(args);
    if (typeof argsText !== "string") throw new SandboxError("The arguments of a collection call must be JSON.");
    var reply = ask(op, argsText);
    if (reply.accepted === false) return false;
    queue[queue.length] = function () {
      var error = reply.error ? makeError(reply.error) : undefined;
      if (typeof callback === "function") callback(error, reply.resource, reply.options || {});
      else if (error) throw error;
    };
    return true;
  }
  function split(options, callback) {
    return typeof options === "function" ? [{}, options] : [options || {}, callback];
  }
  var collection = {
    getSelfLink: function () {
      return input.selfLink;
    },
    getAltLink: function () {
      return input.altLink;
    },
    readDocument: function (link, options, callback) {
      var a = split(options, callback);
      return call("read", [link, a[0]], a[1]);
    },
    readDocuments: function (link, options, callback) {
      var a = split(options, callback);
      return call("query", [link, "SELECT * FROM root", a[0]], a[1]);
    },
    queryDocuments: function (link, query, options, callback) {
      var a = split(options, callback);
      return call("query", [link, query, a[0]], a[1]);
    },
    createDocument: function (link, doc, options, callback) {
      var a = split(options, callback);
      return call("create", [link, doc, a[0]], a[1]);
    },
    replaceDocument: function (link, doc, options, callback) {
      var a = split(options, callback);
      return call("replace", [link, doc, a[0]], a[1]);
    },
    upsertDocument: function (link, doc, options, callback) {
      var a = split(options, callback);
      return call("upsert", [link, doc, a[0]], a[1]);
    },
    deleteDocument: function (link, options, callback) {
      var a = split(options, callback);
      return call("delete", [link, a[0]], a[1]);
    },
  };
  var request = {
    getBody: function () {
      return requestBody;
    },
    setBody: function (body) {
      requestBody = body;
    },
    getValue: function () {
      return requestBody;
    },
    setValue: function (body) {
      requestBody = body;
    },
  };
  var response = {
    getBody: function () {
      return responseBody;
    },
    setBody: function (body) {
      responseBody = body;
    },
    appendBody: function (text) {
      responseBody = (responseBody === undefined ? "" : toText(responseBody)) + text;
    },
    appendValue: function (_key, value) {
      responseBody = (responseBody === undefined ? "" : toText(responseBody)) + toText(value);
    },
    getMaxResponseBodySize: function () {
      return 2 * 1024 * 1024;
    },
    getCurrentResponseBodySize: function () {
      return responseBody === undefined ? 0 : stringify(responseBody).length;
    },
  };
  var context = {
    getCollection: function () {
      return collection;
    },
    getRequest: function () {
      return request;
    },
    getResponse: function () {
      return response;
    },
    abort: function (error) {
      throw error;
    },
  };
  // console.log as Node's util.format does it: %s %d %i %f %j %o %O %% in the first argument, the rest appended.
  function show(value) {
    return typeof value === "object" && value !== null ? stringify(value) : toText(value);
  }
  function format(args) {
    var rest = apply(slice, args, []);
    var first = rest.length > 0 && typeof rest[0] === "string" ? rest.shift() : undefined;
    var text =
      first === undefined
        ? ""
        : apply(replace, first, [
            /%[sdifjoO%]/g,
            function (spec) {
              if (spec === "%%") return "%";
              if (rest.length === 0) return spec;
              var value = rest.shift();
              switch (spec) {
                case "%s":
                  return show(value);
                case "%d":
                case "%i":
                  return toText(spec === "%i" ? parseInt(value, 10) : Number(value));
                case "%f":
                  return toText(parseFloat(value));
                default:
                  return stringify(value);
              }
            },
          ]);
    var tail = [];
    for (var i = 0; i < rest.length; i++) tail[i] = show(rest[i]);
    return apply(join, first === undefined ? tail : [text].concat(tail), [" "]);
  }
  var console = {
    log: function () {
      logs[logs.length] = format(arguments);
    },
  };

  // The script API, set anew on the global object for every run (a run may have replaced it).
  function installApi() {
    defineProperty(global, "getContext", {
      value: function () {
        return context;
      },
      writable: true,
      configurable: true,
    });
    var underscore = create(collection);
    var names = ownNames(collection);
    for (var i = 0; i < names.length; i++) underscore[names[i]] = collection[names[i]];
    underscore.request = request;
    underscore.response = response;
    defineProperty(global, "__", { value: underscore, writable: true, configurable: true });
    defineProperty(global, "console", { value: console, writable: true, configurable: true });
  }
  installApi();
  // The global names after setup: whatever a run adds is removed before the next one.
  var keep = create(null);
  var names = ownNames(global);
  for (var n = 0; n < names.length; n++) keep[names[n]] = true;
  function isKept(name) {
    return keep[name] === true;
  }
  /** Removes what runs added to the global object; false if something could not be removed. */
  function resetGlobals() {
    var names = ownNames(global);
    var clean = true;
    for (var i = 0; i < names.length; i++) {
      if (isKept(names[i])) continue;
      try {
        delete global[names[i]];
      } catch (e) {
        clean = false;
      }
    }
    return clean;
  }

  // What a script threw, as text: read here, inside the time limit, never by the host.
  function describe(thrown) {
    try {
      var isObject = (typeof thrown === "object" && thrown !== null) || typeof thrown === "function";
      var message = isObject && typeof thrown.message === "string" ? thrown.message : toText(thrown);
      var number = isObject && typeof thrown.number === "number" ? thrown.number : undefined;
      return stringify({ error: { message: toText(message), number: number } });
    } catch (e) {
      return stringify({ error: { message: "The script threw a value that cannot be read." } });
    }
  }

  function execute() {
    var fn = evaluate("(" + input.body + "\n)");
    if (typeof fn !== "function") throw new SandboxError("The script body must be a function.");
    apply(fn, undefined, input.params);
    for (var i = 0; i < queue.length; i++) queue[i]();
    return stringify({ result: { requestBody: requestBody, responseBody: responseBody, logs: logs } });
  }

  /** One run: its input asked of the host, its outcome (result or error) always a string. */
  function run() {
    if (running) return stringify({ error: { message: "A script cannot start another run." } });
    input = ask("input", "[]");
    if (input === null) return stringify({ error: { message: "A script cannot start another run." } });
    queue = [];
    logs = [];
    requestBody = input.requestBody;
    responseBody = input.responseBody;
    var clean = resetGlobals();
    var outcome;
    running = true;
    try {
      installApi();
      outcome = execute();
    } catch (thrown) {
      outcome = describe(thrown);
    } finally {
      running = false;
    }
    // A global that cannot be deleted would reach the next run: the host then makes a new sandbox.
    if (!(resetGlobals() && clean)) ask("unclean", "[]");
    return outcome;
  }
  // The host runs `__run()`; no script can replace it, and the reset keeps it.
  defineProperty(global, "__run", { value: run, enumerable: false, writable: false, configurable: false });
  keep.__run = true;
});
