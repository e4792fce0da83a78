// Runs INSIDE a user-defined function's sandbox (a node:vm context of its own), evaluated once
// per context, as the stored procedures' runtime is (src/scripts/sandbox-runtime.js). The host
// hands it one function, `argumentsText`, which takes nothing and returns a string; this closure
// keeps it out of the function's reach. Arguments come in, and the result goes out, as JSON text
// made here by intrinsics taken before the function ran, so no value of the host's realm is ever
// one the function can hold.
(function setup(argumentsText, body) {
  "use strict";
  var parse = JSON.parse;
  var stringify = JSON.stringify;
  var toText = String;
  var apply = Reflect.apply;
  var evaluate = eval; // called by another name: an indirect eval, in the global scope
  var fn;

  // What the function threw, as text: read here, never by the host.
  function describe(thrown) {
    try {
      var isObject = (typeof thrown === "object" && thrown !== null) || typeof thrown === "function";
      return stringify({ error: toText(isObject && typeof thrown.message === "string" ? thrown.message : thrown) });
    } catch (e) {
      return stringify({ error: "The function threw a value that cannot be read." });
    }
  }

  /** One call: `{value}` (no `value` for undefined), or `{error}`. */
  function call() {
    try {
      if (fn === undefined) fn = evaluate("(" + body + "\n)");
      if (typeof fn !== "function") return stringify({ error: "The body of a user-defined function must be a function." });
      var text = stringify({ value: apply(fn, undefined, parse(argumentsText())) });
      return typeof text === "string" ? text : "{}";
    } catch (thrown) {
      return describe(thrown);
    }
  }
  // The host runs `__call()`; no function can replace it.
  Object.defineProperty(globalThis, "__call", { value: call, enumerable: false, writable: false, configurable: false });
});
