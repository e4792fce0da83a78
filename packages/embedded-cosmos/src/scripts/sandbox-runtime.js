// Runs INSIDE the script sandbox (node:vm context). It receives one host function, `bridge`,
// keeps it in this closure so user scripts cannot reach it, and builds the Cosmos DB
// server-side API (getContext(), __, collection functions) on top of it. Callbacks are queued
// and run after the current function returns, as the service does.
(function runtime(input) {
  "use strict";
  var bridge = input.bridge;
  var queue = [];
  var logs = [];
  var requestBody = input.requestBody === undefined ? undefined : JSON.parse(input.requestBody);
  var responseBody = input.responseBody === undefined ? undefined : JSON.parse(input.responseBody);

  function makeError(e) {
    var error = new Error(e.message);
    error.number = e.number;
    error.body = e.message;
    return error;
  }
  function call(op, args, callback) {
    var reply = JSON.parse(bridge(op, JSON.stringify(args)));
    if (reply.accepted === false) return false;
    queue.push(function () {
      var error = reply.error ? makeError(reply.error) : undefined;
      if (typeof callback === "function") callback(error, reply.resource, reply.options || {});
      else if (error) throw error;
    });
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
      responseBody = (responseBody === undefined ? "" : String(responseBody)) + text;
    },
    appendValue: function (_key, value) {
      responseBody = (responseBody === undefined ? "" : String(responseBody)) + String(value);
    },
    getMaxResponseBodySize: function () {
      return 2 * 1024 * 1024;
    },
    getCurrentResponseBodySize: function () {
      return responseBody === undefined ? 0 : JSON.stringify(responseBody).length;
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
  globalThis.getContext = function () {
    return context;
  };
  globalThis.__ = Object.assign(Object.create(collection), collection, { request: request, response: response });
  // console.log as Node's util.format does it: %s %d %i %f %j %o %O %% in the first argument, the rest appended.
  function format(args) {
    var rest = Array.prototype.slice.call(args);
    var first = rest.length > 0 && typeof rest[0] === "string" ? rest.shift() : undefined;
    var text =
      first === undefined
        ? ""
        : first.replace(/%[sdifjoO%]/g, function (spec) {
            if (spec === "%%") return "%";
            if (rest.length === 0) return spec;
            var value = rest.shift();
            switch (spec) {
              case "%s":
                return typeof value === "object" && value !== null ? JSON.stringify(value) : String(value);
              case "%d":
              case "%i":
                return String(spec === "%i" ? parseInt(value, 10) : Number(value));
              case "%f":
                return String(parseFloat(value));
              default:
                return JSON.stringify(value);
            }
          });
    var tail = rest.map(function (value) {
      return typeof value === "object" && value !== null ? JSON.stringify(value) : String(value);
    });
    return (first === undefined ? tail : [text].concat(tail)).join(" ");
  }
  globalThis.console = {
    log: function () {
      logs.push(format(arguments));
    },
  };

  var fn = (0, eval)("(" + input.body + "\n)");
  if (typeof fn !== "function") throw new Error("The script body must be a function.");
  fn.apply(undefined, JSON.parse(input.params));
  while (queue.length > 0) queue.shift()();
  return JSON.stringify({
    requestBody: requestBody,
    responseBody: responseBody,
    logs: logs,
  });
});
